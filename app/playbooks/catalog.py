"""The upstream's method catalog for agents: ``rpc.discover`` of the playbook upstream.

The embedded design-model server always has one (``app.design_model.catalog``). A remote
upstream (``PLAYBOOK_UPSTREAM``) is asked ``rpc.discover`` once per process, through the proxy's
own SSRF-safe call (``upstream.call``: allow-list, no redirects, timeout), and its answer is
cached by URL: an OpenRPC document, or "none" when it answered an error (it has no catalog).
An unreachable upstream is asked again later. That fetch and cache are ``upstream.catalog``'s,
which replays also read (a remote method whose params list ``dryRun`` can be previewed).

``method_schema()`` is what ``upstream_call`` takes as ``method``: an enum of the catalog's
method names, or a free string when there is no catalog (yet). ``sync_schema`` keeps the
tool's schema in step with the configured upstream (in place: the MCP registry holds the dict).
The MCP resource ``design-model://catalog`` returns the document.
"""

from __future__ import annotations

import json
from typing import Any

from app.mcp.content import ToolError
from app.mcp.context import ToolContext
from app.mcp.registry import resource
from app.playbooks import settings, upstream

CATALOG_URI = "design-model://catalog"
DISCOVER = upstream.DISCOVER
FREE_METHOD: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 200}


def document(conf: settings.Settings | None = None, fetch: bool = True) -> dict[str, Any] | None:
    """The configured upstream's OpenRPC document, or None when it has none."""
    return upstream.catalog(conf or settings.current(), fetch)


def method_names(doc: dict[str, Any] | None) -> list[str] | None:
    if doc is None:
        return None
    names = sorted({m["name"] for m in doc.get("methods", [])
                    if isinstance(m, dict) and isinstance(m.get("name"), str)} | {DISCOVER})
    return names


def method_schema(conf: settings.Settings | None = None, fetch: bool = False) -> dict[str, Any]:
    """``upstream_call``'s ``method``: the catalog's names as an enum, else a free string."""
    names = method_names(document(conf, fetch))
    if names is None:
        return {**FREE_METHOD, "description": "A method of the upstream (it publishes no "
                                              "catalog: see its documentation)"}
    return {"type": "string", "enum": names,
            "description": f"A method of the upstream; '{DISCOVER}' or the resource "
                           f"{CATALOG_URI} gives each one's params, result and effect"}


def sync_schema(schema: dict[str, Any], conf: settings.Settings | None = None,
                fetch: bool = False) -> None:
    """Point ``schema['properties']['method']`` at the configured upstream's catalog."""
    wanted = method_schema(conf, fetch)
    if schema["properties"].get("method") != wanted:
        schema["properties"]["method"] = wanted


@resource(CATALOG_URI, "design-model-catalog",
          "The design-model upstream's methods as an OpenRPC document: each method's params "
          "(JSON Schema, required or not), result, effect (x-effect) and an example call",
          mime_type="application/json", title="Design-model catalog")
def catalog_resource(ctx: ToolContext) -> str:
    doc = document()
    if doc is None:
        raise ToolError(f"the upstream {upstream.label(settings.current())} publishes no "
                        f"catalog ({DISCOVER})")
    return json.dumps(doc, ensure_ascii=False)

"""The upstream's method catalog for agents: ``rpc.discover`` of the playbook upstream.

The embedded design-model server always has one (``app.design_model.catalog``). A remote
upstream (``PLAYBOOK_UPSTREAM``) is asked ``rpc.discover`` once per process, through the proxy's
own SSRF-safe call (``upstream.call``: allow-list, no redirects, timeout), and its answer is
cached by URL: an OpenRPC document, or "none" when it answered an error (it has no catalog).
An unreachable upstream is asked again after ``RETRY_SECONDS``.

``method_schema()`` is what ``upstream_call`` takes as ``method``: an enum of the catalog's
method names, or a free string when there is no catalog (yet). ``sync_schema`` keeps the
tool's schema in step with the configured upstream (in place: the MCP registry holds the dict).
The MCP resource ``design-model://catalog`` returns the document.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from app.mcp.context import ToolContext
from app.mcp.registry import resource
from app.playbooks import settings, upstream

CATALOG_URI = "design-model://catalog"
DISCOVER = "rpc.discover"
RETRY_SECONDS = 60.0
FREE_METHOD: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 200}

_lock = threading.Lock()
# upstream URL → (document or None when it has none, monotonic time, final?)
_remote: dict[str, tuple[dict[str, Any] | None, float, bool]] = {}


def _remote_document(conf: settings.Settings, fetch: bool) -> dict[str, Any] | None:
    url = conf.upstream or ""
    with _lock:
        cached = _remote.get(url)
    if cached is not None and (cached[2] or time.monotonic() - cached[1] < RETRY_SECONDS):
        return cached[0]
    if not fetch:
        return None
    response = upstream.call({"jsonrpc": "2.0", "id": "catalog", "method": DISCOVER}, conf)
    result = response.get("result")
    error = response.get("error") if isinstance(response.get("error"), dict) else None
    document = result if isinstance(result, dict) and isinstance(
        result.get("methods"), list) else None
    # An answer (a document, or the upstream's own error) is final; a transport failure of
    # ours (data.code UPSTREAM_*) is not.
    transient = error is not None and str((error.get("data") or {}).get("code", "")).startswith(
        "UPSTREAM")
    with _lock:
        _remote[url] = (document, time.monotonic(), not transient)
    return document


def document(conf: settings.Settings | None = None, fetch: bool = True) -> dict[str, Any] | None:
    """The configured upstream's OpenRPC document, or None when it has none."""
    conf = conf or settings.current()
    if not conf.upstream:
        from app.design_model import openrpc_document

        return openrpc_document()
    return _remote_document(conf, fetch)


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
        from app.mcp.content import ToolError

        raise ToolError(f"the upstream {upstream.label(settings.current())} publishes no "
                        f"catalog ({DISCOVER})")
    return json.dumps(doc, ensure_ascii=False)

"""The floorplan MCP surface: render, validate and modify DSL text, the DSL document, and the
plans stored in studios.

The three tools keep the reference server's contract (image content first, then the JSON text;
failures are ``success: false`` results, not protocol errors) and add ``structuredContent``
checked against an ``outputSchema``. A failure is also marked ``isError: true``, as every tool
failure here is (``execute_action``'s too), keeping its ``success: false, errors`` shape: a
render or modify that did not happen, or a validation that could not run. A validation that
ran and found errors (``valid: false``) did its job and is not an error. Every schema and
description comes from ``app.floorplans.schemas`` and the ``floorplan://schema`` text from
``schema_doc``, both read from the grammar.
``render_floorplan`` also draws a plan stored in a studio (``plan: studio/name``, an optional
``version``) instead of DSL text, with the same membership checks as the plan's page. A host
with MCP Apps shows its result in the floorplan viewer (``app.mcp.apps``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.actions.effects import READ
from app.core import audience
from app.extensions import db
from app.floorplans import schema_doc, schemas, store, tools
from app.floorplans.schemas import TOOL_DESCRIPTIONS
from app.mcp import content
from app.mcp.apps import FLOORPLAN_VIEW, tool_meta
from app.mcp.content import ToolResult
from app.mcp.context import ToolContext
from app.mcp.registry import resource, resource_template, tool
from app.models import User
from app.services import studios
from app.web import loaders

SCHEMA_URI = "floorplan://schema"
STORED_URI = "floorplan://studios/{handle}/{name}"
# None of the three tools changes stored state: modify returns new text and saves nothing.
PURE = READ


def plan_uri(handle: str, name: str) -> str:
    """The resource URI of a stored plan (subscribers hear when it changes)."""
    return STORED_URI.format(handle=handle, name=name)


_STORED = re.compile(r"^floorplan://studios/([^/?#]+)/")


def _studio_of(uri: str) -> str | None:
    """A stored plan is its studio's: its changes reach the studio's members only."""
    found = _STORED.match(uri)
    return found.group(1) if found else None


audience.add_studio_uris(_studio_of)


def _json(result: dict[str, Any]) -> dict[str, Any]:
    return content.text(json.dumps(result, ensure_ascii=False))


def _render_schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    """The pure tool's schemas plus a stored plan as the alternative to DSL text. "Exactly one
    of dsl and plan" is checked by the handler: several model APIs refuse a top-level oneOf."""
    given = schemas.input_schema("render_floorplan")
    props = dict(given["properties"])
    props["dsl"] = {**props["dsl"], "description": props["dsl"]["description"]
                    + "; give either dsl or plan"}
    props["plan"] = {"type": "string", "pattern": f"^[a-z0-9-]+/{store.NAME_PATTERN}$",
                     "description": "A plan stored in a studio you are a member of, as "
                                    "studio/name: team/office is the plan at "
                                    "/studios/team/f/office. Give either plan or dsl"}
    props["version"] = {"type": "integer", "minimum": 1,
                        "description": "With plan: the version to draw (1 is the creation; "
                                       "/studios/<studio>/f/<name>/versions lists them). "
                                       "Default: the current version"}
    inputs = {key: value for key, value in given.items() if key != "required"}
    inputs["properties"] = props
    output = schemas.output_schema("render_floorplan")
    output = {**output, "properties": {
        **output["properties"],
        "plan": {"type": "string", "description": "studio/name of the stored plan drawn"},
        "version": {"type": "integer", "description": "its version that was drawn"}}}
    return inputs, output


RENDER_INPUT, RENDER_OUTPUT = _render_schemas()


def _failure(message: str) -> ToolResult:
    result = {"success": False, "errors": [{"message": message}]}
    return ToolResult(content=[_json(result)], structured=result, is_error=True)


# Errors that mean validate_floorplan could not check the text at all (tools.validate_floorplan)
NOT_CHECKED = frozenset({"arguments", "internal"})


@tool("render_floorplan", TOOL_DESCRIPTIONS["render_floorplan"] + "; or draw a plan stored in "
      "a studio (plan: studio/name, optional version)",
      input_schema=RENDER_INPUT, output_schema=RENDER_OUTPUT, effect=PURE, icon="floorplan",
      title="Render a floorplan", meta=tool_meta(FLOORPLAN_VIEW))
def render_floorplan(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    stored: dict[str, Any] = {}
    if "plan" in args or "version" in args:
        if "dsl" in args or "plan" not in args:
            return _failure("give either dsl (floorplan text) or plan (studio/name of a stored "
                            "plan, with an optional version), not both")
        handle, name = args["plan"].split("/", 1)
        try:
            plan = _stored_plan(ctx, handle, name)
            number = args.get("version") or plan.version
            dsl = plan.dsl if number == plan.version else store.version(plan, number).dsl
        except Exception as exc:  # a domain error: not found, not a member
            if not isinstance(getattr(exc, "message", None), str):
                raise
            return _failure(exc.message)  # type: ignore[attr-defined]
        stored = {"plan": f"{handle}/{name}", "version": number}
        args = {**{k: v for k, v in args.items() if k not in ("plan", "version")}, "dsl": dsl}
    elif "dsl" not in args:
        return _failure("give dsl (floorplan text) or plan (studio/name of a stored plan)")
    image, mime, result = tools.render_floorplan(args)
    result = {**result, **stored}
    blocks = []
    if isinstance(image, bytes) and mime:
        blocks.append(content.image(image, mime))
    elif isinstance(image, str):
        blocks.append(content.text(image))  # SVG: the markup first, as the reference does
    blocks.append(_json(result))
    return ToolResult(content=blocks, structured=result, is_error=result.get("success") is False)


@tool("validate_floorplan", TOOL_DESCRIPTIONS["validate_floorplan"],
      input_schema=schemas.input_schema("validate_floorplan"),
      output_schema=schemas.output_schema("validate_floorplan"), effect=PURE, icon="floorplan",
      title="Validate a floorplan")
def validate_floorplan(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    result = tools.validate_floorplan(args)
    unchecked = any(e.get("type") in NOT_CHECKED for e in result.get("errors") or [])
    return ToolResult(content=[_json(result)], structured=result, is_error=unchecked)


@tool("modify_floorplan", TOOL_DESCRIPTIONS["modify_floorplan"],
      input_schema=schemas.input_schema("modify_floorplan"),
      output_schema=schemas.output_schema("modify_floorplan"), effect=PURE, icon="floorplan",
      title="Modify a floorplan")
def modify_floorplan(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    result = tools.modify_floorplan(args)
    return ToolResult(content=[_json(result)], structured=result,
                      is_error=result.get("success") is False)


@resource(SCHEMA_URI, "floorplan-schema",
          "Floorplan DSL syntax: structure, rooms, walls, sub-rooms, relative placement, "
          "connections, with complete examples", mime_type="text/markdown",
          title="Floorplan DSL schema")
def schema_resource(ctx: ToolContext) -> str:
    return schema_doc.schema_markdown()


def _complete_stored(ctx: ToolContext, variable: str, prefix: str,
                     known: dict[str, str]) -> list[str]:
    """The handles of the caller's studios, or the names of their plans (in the studio
    ``known`` names, else in all of them): only what the resource would answer them."""
    user = db.session.get(User, ctx.identity.user_id) if ctx.identity is not None else None
    theirs = studios.studios_of(user) if user is not None else []
    if variable == "handle":
        values = [s.handle for s in theirs]
    elif variable == "name":
        chosen = [s for s in theirs if s.handle == known.get("handle")] or theirs
        values = sorted({plan.name for s in chosen for plan in store.for_studio(s)})
    else:
        values = []
    return [v for v in values if v.startswith(prefix)]


@resource_template(STORED_URI, "stored-floorplan",
                   "The DSL of a floorplan stored in a studio you are a member of (its page is "
                   "/studios/{handle}/f/{name})", mime_type="text/plain",
                   title="A studio's floorplan", complete=_complete_stored)
def stored_floorplan(ctx: ToolContext, uri: str, variables: dict[str, str]) -> str:
    return str(_stored_plan(ctx, variables["handle"], variables["name"]).dsl)


def _stored_plan(ctx: ToolContext, handle: str, name: str) -> Any:
    """The stored plan, for the caller: NotFound or Forbidden as its page would answer."""
    user = db.session.get(User, ctx.identity.user_id) if ctx.identity is not None else None
    # The page's own loader: membership, studio gates and NotFound exactly as on the web.
    page = loaders.item_page("floorplan", "floorplan", "name")
    return page(user=user, handle=handle, name=name).item

"""The floorplan MCP surface: render, validate and modify DSL text, the DSL document, and the
plans stored in studios.

The three tools keep the reference server's contract (image content first, then the JSON text;
failures are ``success: false`` / ``valid: false`` results, not protocol errors) and add
``structuredContent`` checked against an ``outputSchema``. Every schema, description and the
``floorplan://schema`` text come from ``app.floorplans.tools``, which reads the grammar.
"""

from __future__ import annotations

import json
from typing import Any

from app.actions.effects import READ
from app.floorplans import tools
from app.mcp import content
from app.mcp.content import ToolResult
from app.mcp.context import ToolContext
from app.mcp.registry import resource, resource_template, tool

SCHEMA_URI = "floorplan://schema"
STORED_URI = "floorplan://studios/{handle}/{name}"
# None of the three tools changes stored state: modify returns new text and saves nothing.
PURE = READ


def plan_uri(handle: str, name: str) -> str:
    """The resource URI of a stored plan (subscribers hear when it changes)."""
    return STORED_URI.format(handle=handle, name=name)


def _json(result: dict[str, Any]) -> dict[str, Any]:
    return content.text(json.dumps(result, ensure_ascii=False))


@tool("render_floorplan", tools.description("render_floorplan"),
      input_schema=tools.input_schema("render_floorplan"),
      output_schema=tools.output_schema("render_floorplan"), effect=PURE,
      title="Render a floorplan")
def render_floorplan(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    image, mime, result = tools.render_floorplan(args)
    blocks = []
    if isinstance(image, bytes) and mime:
        blocks.append(content.image(image, mime))
    elif isinstance(image, str):
        blocks.append(content.text(image))  # SVG: the markup first, as the reference does
    blocks.append(_json(result))
    return ToolResult(content=blocks, structured=result)


@tool("validate_floorplan", tools.description("validate_floorplan"),
      input_schema=tools.input_schema("validate_floorplan"),
      output_schema=tools.output_schema("validate_floorplan"), effect=PURE,
      title="Validate a floorplan")
def validate_floorplan(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    result = tools.validate_floorplan(args)
    return ToolResult(content=[_json(result)], structured=result)


@tool("modify_floorplan", tools.description("modify_floorplan"),
      input_schema=tools.input_schema("modify_floorplan"),
      output_schema=tools.output_schema("modify_floorplan"), effect=PURE,
      title="Modify a floorplan")
def modify_floorplan(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    result = tools.modify_floorplan(args)
    return ToolResult(content=[_json(result)], structured=result)


@resource(SCHEMA_URI, "floorplan-schema",
          "Floorplan DSL syntax: structure, rooms, walls, sub-rooms, relative placement, "
          "connections, with complete examples", mime_type="text/markdown",
          title="Floorplan DSL schema")
def schema_resource(ctx: ToolContext) -> str:
    return tools.schema_markdown()


@resource_template(STORED_URI, "stored-floorplan",
                   "The DSL of a floorplan stored in a studio you are a member of (its page is "
                   "/studios/{handle}/f/{name})", mime_type="text/plain",
                   title="A studio's floorplan")
def stored_floorplan(ctx: ToolContext, uri: str, variables: dict[str, str]) -> str:
    from app.extensions import db
    from app.models import User
    from app.web import loaders

    user = db.session.get(User, ctx.identity.user_id) if ctx.identity is not None else None
    # The page's own loader: membership, studio gates and NotFound exactly as on the web.
    page = loaders.item_page("floorplan", "floorplan", "name")
    return str(page(user=user, handle=variables["handle"], name=variables["name"]).item.dsl)

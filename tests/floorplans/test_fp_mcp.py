"""Seed 002 through the official MCP Python SDK client, over stdio (bin/mcp-server with a token)
and over Streamable HTTP (gunicorn): the three floorplan tools, the schema resource, the
grammar-derived enums, and a stored plan reached as a resource and as a page."""
# ruff: noqa: E501  (DSL fixtures are quoted verbatim from the seed)

from __future__ import annotations

import asyncio
import base64
import json
import sys
from typing import Any

import pytest
from flask import Flask

from app.floorplans.language import default_language
from tests.floorplans.test_fp_pages import PLAN, png_size
from tests.mcp.conftest import MCP_SERVER, ROOT, app_env, gunicorn

OFFICE = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: window, bottom: door, left: solid] label "main workspace"
  }
"""
FLEX = """floorplan
  floor f1 {
    room FlexArea at (0,0) size (20 x 20) walls [top: open, right: solid, bottom: open, left: solid] composed of [
      sub-room Booth1 at (2,2) size (3 x 3) walls [top: solid, right: solid, bottom: door, left: solid]
    ]
  }
"""
INVALID_LINE_3 = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: invalid_type]
  }
"""
SOLID_OFFICE_AND_STORAGE = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: solid, bottom: solid, left: solid]
    room Storage at (10,0) size (4 x 4)
  }
"""


def _json_text(result: Any) -> dict[str, Any]:
    """The JSON text block (always the last one) of a floorplan tool result."""
    return json.loads(result.content[-1].text)


async def _modify(client: Any, dsl: str, *operations: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool("modify_floorplan", {"dsl": dsl,
                                                         "operations": list(operations)})
    # A modification that did not apply is a tool error, with the same structured shape.
    assert result.is_error is (result.structured_content["success"] is False), result
    assert _json_text(result) == result.structured_content
    return result.structured_content


async def seed_002(client: Any) -> None:
    """Every scenario of seed 002, then the stored plan of the studio 'team'."""
    # Server lists available tools, with the grammar's enums and honest annotations.
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"render_floorplan", "validate_floorplan", "modify_floorplan"} <= set(tools)
    vocabulary = default_language().vocabulary
    schema = json.dumps(tools["modify_floorplan"].input_schema)
    for words in (vocabulary.wall_types, vocabulary.directions, vocabulary.alignments,
                  vocabulary.door_types, vocabulary.swings):
        assert json.dumps(list(words)) in schema, words
    variants = {v["title"]: v for v in
                tools["modify_floorplan"].input_schema["properties"]["operations"]["items"]
                ["oneOf"]}
    walls = variants["update_walls"]["properties"]["params"]["properties"]
    assert set(walls) == set(vocabulary.wall_sides)
    assert walls["left"]["enum"] == list(vocabulary.wall_types)
    for name in ("render_floorplan", "validate_floorplan", "modify_floorplan"):
        assert tools[name].annotations.read_only_hint is True
        assert tools[name].output_schema is not None

    # Server lists available resources; the schema resource really reads.
    resources = {r.uri: r for r in (await client.list_resources()).resources}
    schema_entry = resources["floorplan://schema"]
    assert schema_entry.name == "floorplan-schema" and schema_entry.mime_type == "text/markdown"
    document = (await client.read_resource("floorplan://schema")).contents[0]
    assert document.mime_type == "text/markdown"
    for needle in ("floorplan", "floor ", "room ", "size (", "walls [", "solid", "door",
                   "window", "open", "sub-room", "composed of", "right-of", "connect", "```"):
        assert needle in document.text, needle
    templates = [t.uri_template for t in (await client.list_resource_templates())
                 .resource_templates]
    assert "floorplan://studios/{handle}/{name}" in templates

    # Successful render of valid DSL: the PNG image first, then the JSON.
    rendered = await client.call_tool("render_floorplan", {"dsl": OFFICE})
    assert not rendered.is_error
    image, text = rendered.content
    assert image.type == "image" and image.mime_type == "image/png"
    assert png_size(base64.b64decode(image.data)) == (800, 600) or \
        max(png_size(base64.b64decode(image.data))) <= 800
    body = rendered.structured_content
    assert json.loads(text.text) == body and body["success"] and body["format"] == "png"
    (office,) = body["rooms"]
    assert office["name"] == "Office" and office["position"] == {"x": 0, "y": 0}
    assert office["size"] == {"width": 10, "height": 12}
    assert office["label"] == "main workspace"
    assert office["walls"] == {"top": "solid", "right": "window", "bottom": "door",
                               "left": "solid"}
    small = await client.call_tool("render_floorplan", {"dsl": OFFICE, "width": 200,
                                                        "height": 100})
    width, height = png_size(base64.b64decode(small.content[0].data))
    assert width <= 200 and height <= 100 and (width == 200 or height == 100)
    svg = await client.call_tool("render_floorplan", {"dsl": OFFICE, "format": "svg"})
    assert svg.content[0].type == "text" and svg.content[0].text.startswith("<svg")
    assert svg.structured_content["format"] == "svg"

    # Render with nested sub-rooms.
    flex = (await client.call_tool("render_floorplan", {"dsl": FLEX})).structured_content
    (area,) = flex["rooms"]
    assert area["name"] == "FlexArea" and [s["name"] for s in area["subRooms"]] == ["Booth1"]

    # Render with invalid DSL returns errors (and no image).
    broken = await client.call_tool("render_floorplan", {"dsl": "floorplan\n  floor f1 {\n"
                                                                "    room Office at (0,0\n"})
    assert broken.is_error and [c.type for c in broken.content] == ["text"]
    failure = broken.structured_content
    assert failure["success"] is False and failure["errors"][0]["message"]
    assert failure["errors"][0]["line"] >= 3

    # Validation of valid DSL.
    valid = (await client.call_tool("validate_floorplan", {"dsl": OFFICE})).structured_content
    assert valid == {"valid": True, "errors": []}

    # Validation of invalid DSL with line numbers.
    invalid = await client.call_tool("validate_floorplan", {"dsl": INVALID_LINE_3})
    assert _json_text(invalid) == invalid.structured_content
    out = invalid.structured_content
    assert out["valid"] is False
    entry = next(e for e in out["errors"] if e["line"] == 3)
    assert "invalid_type" in entry["message"] and "wall type" in entry["message"].lower()

    # Add a new room.
    added = await _modify(client, OFFICE, {"action": "add_room", "params": {
        "name": "Kitchen", "position": {"x": 0, "y": 14}, "size": {"width": 10, "height": 8},
        "walls": {"top": "solid", "right": "door", "bottom": "solid", "left": "window"},
        "label": "break area"}})
    assert added["success"] and "room Kitchen at (0,14) size (10 x 8)" in added["dsl"]
    assert 'label "break area"' in added["dsl"]
    assert {"action": "add_room", "result": "applied"}.items() <= added["changes"][0].items()

    # Remove an existing room.
    removed = await _modify(client, SOLID_OFFICE_AND_STORAGE,
                            {"action": "remove_room", "target": "Storage"})
    assert removed["success"] and "Storage" not in removed["dsl"] and "Office" in removed["dsl"]

    # Resize a room.
    resized = await _modify(client, OFFICE, {"action": "resize_room", "target": "Office",
                                             "params": {"width": 15, "height": 15}})
    assert "room Office at (0,0) size (15 x 15)" in resized["dsl"]

    # Update wall types.
    walled = await _modify(client, SOLID_OFFICE_AND_STORAGE, {
        "action": "update_walls", "target": "Office",
        "params": {"right": "window", "bottom": "door"}})
    assert "walls [top: solid, right: window, bottom: door, left: solid]" in walled["dsl"]

    # Modify non-existent room returns error.
    missing = await _modify(client, OFFICE, {"action": "resize_room", "target": "Garage",
                                             "params": {"width": 20, "height": 20}})
    assert missing["success"] is False and missing["dsl"] == OFFICE
    assert any('"Garage" not found' in e["message"] for e in missing["errors"])
    assert missing["changes"][0]["result"] == "error"

    # A wall type the grammar does not know is refused by the tool's input schema.
    unknown = await client.call_tool("modify_floorplan", {"dsl": OFFICE, "operations": [
        {"action": "update_walls", "target": "Office", "params": {"left": "glass"}}]})
    assert unknown.is_error

    # The studio's stored plan, as a resource and as the page a person sees.
    stored = await client.read_resource("floorplan://studios/team/office")
    assert stored.contents[0].text == PLAN
    try:
        await client.read_resource("floorplan://studios/team/nope")
    except Exception as exc:  # noqa: BLE001 - the SDK raises its own error type
        assert "not found" in str(exc).lower()
    else:
        raise AssertionError("reading a missing plan succeeded")
    page = await client.call_tool("navigate", {"path": "/studios/team/f/office"})
    assert not page.is_error and "| Office | f1 | (0, 0) | 10 x 12 |" in page.content[0].text
    assert "resize_room" in [a["name"] for a in page.structured_content["actions"]]
    done = await client.call_tool("execute_action", {  # path: the SDK's auto mode is stateless
        "action": "resize_room", "path": "/studios/team/f/office",
        "params": {"target": "Office", "width": 11, "height": 12}})
    assert not done.is_error, done
    again = await client.read_resource("floorplan://studios/team/office")
    assert "room Office at (0,0) size (11 x 12)" in again.contents[0].text


def _store_plan(studio: Any) -> None:
    response = studio.act("/studios/team/floorplans", "create_floorplan", name="office",
                          dsl=PLAN)
    assert response.status_code == 201


def test_seed_002_over_stdio(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    from mcp import Client, StdioServerParameters

    _store_plan(studio)
    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=studio.token),
                                   cwd=str(ROOT))

    async def scenario() -> None:
        async with Client(params) as client:  # the handshake is the transport scenario
            await seed_002(client)

    asyncio.run(scenario())
    versions = studio.get("/studios/team/f/office/versions").get_data(as_text=True)
    assert "by [Alice](/u/alice): resize_room Office: Resized to 11 x 12" in versions


@pytest.mark.slow  # starts gunicorn
def test_seed_002_over_http(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    _store_plan(studio)

    async def scenario(url: str) -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {studio.token}"},
                                      timeout=httpx2.Timeout(30.0)) as http_client:
            async with Client(streamable_http_client(url, http_client=http_client)) as client:
                await seed_002(client)

    with gunicorn(app) as base:
        asyncio.run(scenario(base + "/mcp"))


def test_stored_plans_answer_members_only(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from mcp import Client, StdioServerParameters

    _store_plan(studio)
    outsider = make_agent("carol")
    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=outsider.token),
                                   cwd=str(ROOT))

    async def scenario() -> str:
        async with Client(params) as client:
            # The pure tools need no studio at all.
            valid = await client.call_tool("validate_floorplan", {"dsl": PLAN})
            assert valid.structured_content["valid"] is True
            try:
                await client.read_resource("floorplan://studios/team/office")
            except Exception as exc:  # noqa: BLE001 - the SDK raises its own error type
                return str(exc)
            raise AssertionError("a non-member read a studio's plan")

    assert "not a member" in asyncio.run(scenario())


def test_subscribers_hear_when_a_person_changes_a_plan(studio, client, make_agent) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.conftest import Http, messages_of
    from tests.mcp.test_http import _FlaskClient

    _store_plan(studio)
    watcher = Http("http://localhost", studio.token, _FlaskClient(client))
    watcher.initialize()
    uri = "floorplan://studios/team/office"
    assert watcher.call("resources/subscribe", {"uri": uri})["result"] == {}
    edited = PLAN.replace("size (4 x 4)", "size (6 x 4)")
    assert studio.act("/studios/team/f/office", "update_dsl", dsl=edited).status_code == 200
    messages = messages_of(watcher.post({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
    assert messages[0] == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                           "params": {"uri": uri}}
    read = watcher.call("resources/read", {"uri": uri})["result"]["contents"][0]
    assert read == {"uri": uri, "mimeType": "text/plain", "text": edited}

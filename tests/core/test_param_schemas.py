"""Action parameters are JSON Schema (2020-12) on every door, and navigate's pages are lean.

Through the public surface: ``GET <page>/actions/<name>`` (JSON and Markdown), a POST with a
wrong shape, the HTML form, and ``navigate`` through the official MCP SDK over real HTTP.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import jsonschema
import pytest
from flask import Flask

from tests.core.test_auth import login
from tests.helpers import parse_md
from tests.workflows.conftest import drain, wf_settings  # noqa: F401 (a fixture)

PLAN = "/studios/team/f/office"
OLD_TYPES = ("text", "datetime")


@pytest.fixture
def plan(studio) -> str:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/floorplans", "create_floorplan", name="office")
    assert made.status_code == 201, made.get_data(as_text=True)
    return PLAN


def test_add_room_schema_has_the_nested_shapes(studio, plan: str) -> None:  # type: ignore[no-untyped-def]
    described = studio.get(f"{plan}/actions/add_room", accept="application/json").get_json()
    schema = described["input_schema"]
    size = schema["properties"]["size"]
    assert size["type"] == "object" and set(size["required"]) == {"width", "height"}
    assert size["properties"]["width"] == {"type": "number", "description": "Width",
                                           "exclusiveMinimum": 0}
    assert schema["properties"]["position"]["properties"]["x"]["type"] == "number"
    assert "size" in schema["required"] and "name" in schema["required"]
    by_name = {p["name"]: p for p in described["params"]}
    assert by_name["size"]["type"] == "{width: number > 0, height: number > 0}"
    assert by_name["walls"]["type"].startswith('{top?: "solid" | "door"')
    connection = studio.get(f"{plan}/actions/add_connection",
                            accept="application/json").get_json()
    wall_ref = connection["input_schema"]["properties"]["from"]
    assert wall_ref["required"] == ["room"] and "enum" in wall_ref["properties"]["wall"]
    # The Markdown door shows the same shape readably, and the schema itself.
    md = studio.get(f"{plan}/actions/add_room").get_data(as_text=True)
    assert "| `size` | `{width: number > 0, height: number > 0}` | yes |" in md
    assert '"exclusiveMinimum": 0' in md


def test_a_wrong_shape_is_refused_naming_the_expected_shape(studio, plan: str) -> None:  # type: ignore[no-untyped-def]
    wrong = studio.act(plan, "add_room", name="Hall", size="big")
    assert wrong.status_code == 422
    errors = wrong.get_json()["error"]["errors"]
    assert {"param": "size",
            "message": "must be an object {width: number > 0, height: number > 0}"} in errors
    half = studio.act(plan, "add_room", name="Hall", size={"width": 3})
    assert half.status_code == 422
    missing = half.get_json()["error"]["errors"][0]
    message = missing["message"]
    assert missing["path"] == "size.height" and message.startswith("height: is required")
    assert "{width: number > 0, height: number > 0}" in message
    negative = studio.act(plan, "add_room", name="Hall", size={"width": 3, "height": -1})
    assert negative.status_code == 422
    refused = negative.get_json()["error"]["errors"][0]
    assert refused["param"] == "size" and refused["message"].startswith("height: -1 ")
    placed = studio.act(plan, "add_room", name="Hall", size={"width": 3, "height": 2},
                        position={"x": 20, "y": 0})
    assert placed.status_code == 200, placed.get_data(as_text=True)


def test_every_action_schema_is_json_schema_2020_12(studio, plan: str) -> None:  # type: ignore[no-untyped-def]
    from app.actions.registry import ACTIONS

    assert len(ACTIONS) > 30
    for act in ACTIONS.values():
        schema = act.input_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        for prop in schema["properties"].values():
            assert prop.get("type") not in OLD_TYPES, act.name
    # And as served: the floorplan page's actions, over the JSON door.
    listed = studio.get(f"{plan}/actions", accept="application/json").get_json()["actions"]
    assert len(listed) >= 9
    for entry in listed:
        jsonschema.Draft202012Validator.check_schema(entry["input_schema"])
        assert all(p["type"] not in OLD_TYPES for p in entry["params"]), entry["name"]


def test_defaults_and_formats_are_shown(studio) -> None:  # type: ignore[no-untyped-def]
    described = studio.get("/studios/new/actions/create_studio",
                           accept="application/json").get_json()
    heartbeats = described["input_schema"]["properties"]["heartbeats_required"]
    assert heartbeats["type"] == "boolean" and "default" in heartbeats
    shown = {p["name"]: p for p in described["params"]}["heartbeats_required"]
    assert shown["default"] == heartbeats["default"]
    handle = described["input_schema"]["properties"]["handle"]
    assert re.fullmatch(handle["pattern"], "ok-one") and not re.fullmatch(handle["pattern"],
                                                                           "Bad Handle!")
    md = studio.get("/studios/new/actions/create_studio").get_data(as_text=True)
    shown_default = str(heartbeats["default"]).lower()
    assert f"| `heartbeats_required` | `boolean` | no | `{shown_default}` |" in md
    described = studio.get("/studios/team/commit/actions/create_commitment",
                           accept="application/json").get_json()
    deadline = described["input_schema"]["properties"]["deadline"]
    # One type per branch (no type array, for single-type clients); a string is a date-time.
    assert [branch["type"] for branch in deadline["anyOf"]] == ["string", "integer"]
    assert deadline["anyOf"][0]["format"] == "date-time" and "7d" in deadline["description"]
    made = studio.act("/studios/team/commit", "create_commitment", title="Ship", critical_mass=1,
                       deadline="7d")
    assert made.status_code == 201, made.get_data(as_text=True)
    nul = studio.act("/studios/team/note", "create_note", text="a\x00b")
    assert nul.status_code == 422 and "NUL" in nul.get_data(as_text=True)


def test_the_studio_create_form_still_works(app: Flask, client) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.services import accounts

    with app.app_context():
        accounts.create_user("carol", "Carol", password="correct horse battery")
        db.session.commit()
    login(client, "carol", "correct horse battery")
    page = client.get("/studios/new").get_data(as_text=True)
    assert 'name="heartbeats_required"' in page and 'data-action="create_studio"' in page
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    posted = client.post("/studios/new/actions/create_studio", data={
        "csrf_token": csrf, "name": "Lab", "handle": "lab", "description": "", "timezone": "",
        "tempo": "weekly", "join_policy": "open", "heartbeats_required": "false"})
    assert posted.status_code == 303, posted.get_data(as_text=True)
    assert posted.headers["Location"].endswith("/studios/lab")
    bad = client.post("/studios/new/actions/create_studio", data={
        "csrf_token": csrf, "name": "Lab", "handle": "Bad Handle!"},
        headers={"Accept": "application/json"})
    assert bad.status_code == 422


def _navigate_all(base: str, token: str, paths: list[str]) -> list[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def scenario() -> list[Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                      timeout=httpx2.Timeout(60.0)) as http_client:
            async with Client(streamable_http_client(base + "/mcp", http_client=http_client),
                              mode="auto") as client:
                return [await client.call_tool("navigate", {"path": p}) for p in paths]

    return asyncio.run(scenario())


def test_navigate_gives_each_action_once_with_its_schema(app: Flask, studio, plan: str,  # type: ignore[no-untyped-def]
                                                        live_server: str,
                                                        wf_settings) -> None:  # noqa: F811
    note = studio.act("/studios/team/note", "create_note", text="Hello\n\nA note.")
    decision = studio.act("/studios/team/decide", "create_decision", question="Lunch?")
    started = studio.act("/workflows/studio-check", "run_workflow", inputs={"studio": "team"})
    assert started.status_code == 201
    run = started.get_json()["location"]
    with app.app_context():
        from app.workflows import runs

        run_id = runs.find(run.rsplit("/", 1)[1])["id"]
    assert drain(app, run_id)["status"] == "succeeded"
    paths = ["/studios/team", note.get_json()["location"], decision.get_json()["location"],
             plan, run]
    results = _navigate_all(live_server, studio.token, paths)
    for path, result in zip(paths, results, strict=True):
        assert not result.is_error, (path, result)
        text = result.content[0].text
        actions = result.structured_content["actions"]
        assert actions or path in ("/studios/team", run), path
        for act in actions:
            jsonschema.Draft202012Validator.check_schema(act["inputSchema"])
            # Once in text (the Actions list's signature), never again in a frontmatter.
            assert text.count(f"`{act['name']}(") == 1, (path, act["name"])
        front, _body = parse_md(text[text.index("---\n"):])
        assert "actions" not in front and "input_schema" not in text, path
        assert len(text.encode()) < 4096, (path, len(text.encode()))
    # The Markdown door keeps its frontmatter's actions, schemas and all.
    front, _body = parse_md(studio.get(plan).get_data(as_text=True))
    add_room = {a["name"]: a for a in front["actions"]}["add_room"]
    assert add_room["input_schema"]["properties"]["size"]["required"] == ["width", "height"]
    structured = {a["name"]: a for a in results[3].structured_content["actions"]}
    assert structured["add_room"]["inputSchema"] == add_room["input_schema"]

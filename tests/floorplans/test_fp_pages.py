"""Floorplans as studio items over HTTP: pages in HTML and Markdown, the generated operation
actions (success and failure), versions with their authors, and the .svg/.png drawings."""
# ruff: noqa: E501  (DSL fixtures are quoted verbatim from the seed)

from __future__ import annotations

import re
import struct

import pytest

from app.floorplans import tools
from app.floorplans.operations import operation_definitions
from tests.helpers import action_names, parse_md

PLAN = """floorplan
  # the team's office
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: solid, bottom: solid, left: solid] label "main"
    room Storage at (10,0) size (4 x 4)
  }
  connect Office.right to Storage.left door at 50%
"""
ROOMS = "/studios/team/floorplans"
OFFICE = "/studios/team/f/office"

# Per operation: (parameters that succeed, a text the new DSL then holds or lacks,
#                 parameters that fail, a part of the operation's own failure message).
CASES: dict[str, tuple[dict, str, dict, str]] = {
    "add_room": ({"name": "Kitchen", "position": {"x": 0, "y": 14},
                  "size": {"width": 10, "height": 8}, "label": "break area"},
                 "+room Kitchen at (0,14) size (10 x 8)",
                 {"name": "Office", "position": {"x": 30, "y": 30},
                  "size": {"width": 1, "height": 1}}, 'Room "Office" already exists'),
    "remove_room": ({"target": "Storage", "removeReferences": True}, "-room Storage",
                    {"target": "Storage"}, "still referenced"),
    "resize_room": ({"target": "Office", "width": 15, "height": 15}, "+size (15 x 15)",
                    {"target": "Garage", "width": 20, "height": 20}, 'Room "Garage" not found'),
    "move_room": ({"target": "Storage", "x": 10, "y": 2}, "+room Storage at (10,2)",
                  {"target": "Garage", "x": 1, "y": 1}, 'Room "Garage" not found'),
    "rename_room": ({"target": "Office", "newName": "Study"}, "+connect Study.right",
                    {"target": "Office", "newName": "Storage"}, 'Room "Storage" already exists'),
    "update_walls": ({"target": "Office", "right": "window"}, "+right: window",
                     {"target": "Garage", "right": "window"}, 'Room "Garage" not found'),
    "set_label": ({"target": "Office", "label": "hq"}, '+label "hq"',
                  {"target": "Garage", "label": "x"}, 'Room "Garage" not found'),
    "convert_to_relative": ({"anchorRoom": "Office"}, "+room Storage right-of Office",
                            {"anchorRoom": "Garage"}, "Anchor room 'Garage' not found"),
    "add_connection": ({"from": {"room": "Office"}, "to": {"room": "outside"},
                        "doorType": "double-door"}, "+connect Office",
                       {"from": {"room": "Garage"}, "to": {"room": "Office"}},
                       'Room "Garage" not found'),
    "remove_connection": ({"from": "Office", "to": "Storage"}, "-connect ",
                          {"from": "Office", "to": "Garage"}, "No connection between"),
}


def _create(agent, name: str = "office", dsl: str = PLAN):  # type: ignore[no-untyped-def]
    response = agent.act(ROOMS, "create_floorplan", name=name, dsl=dsl)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response


def _dsl(agent, path: str = OFFICE) -> str:  # type: ignore[no-untyped-def]
    body = parse_md(agent.get(path).get_data(as_text=True))[1]
    return body.split("```floorplan\n", 1)[1].split("\n```", 1)[0]


def _versions(agent, path: str = OFFICE) -> list[str]:  # type: ignore[no-untyped-def]
    body = agent.get(f"{path}/versions").get_data(as_text=True)
    return re.findall(r"^## Version (\d+)$", body, flags=re.M)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_a_plan_page_in_markdown_and_html(studio, client) -> None:  # type: ignore[no-untyped-def]
    created = _create(studio)
    assert created.get_json()["location"] == OFFICE
    listing = studio.get(ROOMS).get_data(as_text=True)
    assert f"[office]({OFFICE})" in listing and "create_floorplan" in action_names(listing)
    home = studio.get("/studios/team").get_data(as_text=True)
    assert "[Floorplans](/studios/team/floorplans)" in home

    response = studio.get(OFFICE)
    assert response.status_code == 200
    front, body = parse_md(response.get_data(as_text=True))
    assert front["title"] == "Floorplan office"
    expected = ["update_dsl"] + [d["name"] for d in operation_definitions()]
    assert [a["name"] for a in front["actions"]] == expected
    # Each generated action advertises the parameters of its operation definition.
    for definition in operation_definitions():
        advertised = next(a for a in front["actions"] if a["name"] == definition["name"])
        assert [p["name"] for p in advertised["params"]] == \
            list(definition["parameters"]["properties"])
    assert _dsl(studio) == PLAN.rstrip("\n")
    assert "| Office | f1 | (0, 0) | 10 x 12 | 120 | solid / solid / solid / solid | main |" \
        in body
    assert "| Storage | f1 | (10, 0) | 4 x 4 | 16 |" in body
    assert "Valid: no errors." in body and f"]({OFFICE}.png)" in body

    html = studio.get(OFFICE, accept="text/html").get_data(as_text=True)
    assert html.count('<rect class="room"') == 2 and f'href="{OFFICE}.png"' in html
    editor = re.search(r'<form class="page-form" method="post" action="[^"]+/update_dsl".*?</form>',
                       html, flags=re.S)
    assert editor and "room Storage at (10,0) size (4 x 4)" in editor.group(0)
    assert "label &#34;main&#34;" in editor.group(0) or "label &quot;main&quot;" in editor.group(0)
    # The person's inline drawing is the agent's .svg, byte for byte, plus its accessible name.
    svg = studio.get(f"{OFFICE}.svg").get_data(as_text=True)
    named = re.search(r'role="img" aria-label="([^"]*)"', html)
    assert named and named.group(1) == "Drawing of floorplan office: 2 rooms: Office, Storage"
    assert svg.replace('role="img"', named.group(0), 1) in html


def test_names_duplicates_and_the_starter_plan(studio) -> None:  # type: ignore[no-untyped-def]
    assert studio.act(ROOMS, "create_floorplan", name="bad name").status_code == 422
    assert studio.act(ROOMS, "create_floorplan", name="x.svg").status_code == 422
    starter = studio.act(ROOMS, "create_floorplan", name="starter")
    assert starter.status_code == 201
    assert "room Living" in _dsl(studio, "/studios/team/f/starter")
    again = studio.act(ROOMS, "create_floorplan", name="starter", dsl=PLAN)
    assert again.status_code == 409 and "already has a floorplan" in again.get_data(as_text=True)
    assert studio.get("/studios/team/f/nope").status_code == 404


def test_every_operation_has_a_case() -> None:
    assert set(CASES) == {d["name"] for d in operation_definitions()}


@pytest.mark.parametrize("operation", sorted(CASES))
def test_operation_action_success_and_failure(studio, operation: str) -> None:  # type: ignore[no-untyped-def]
    good, expect, bad, failure = CASES[operation]
    _create(studio)
    refused = studio.act(OFFICE, operation, **bad)
    assert refused.status_code == 422, refused.get_data(as_text=True)
    assert failure in refused.get_json()["error"]["message"]
    assert _dsl(studio) == PLAN.rstrip("\n") and _versions(studio) == ["1"]

    done = studio.act(OFFICE, operation, **good)
    assert done.status_code == 200, done.get_data(as_text=True)
    body = done.get_json()
    assert body["ok"] and body["result"]["version"] == 2
    assert body["result"]["changes"][0]["result"] == "applied"
    dsl = _dsl(studio)
    sign, text = expect[0], expect[1:]
    assert (text in dsl) if sign == "+" else (text not in dsl), dsl
    assert "# the team's office" in dsl  # edits touch only the spans they change
    assert _versions(studio) == ["2", "1"]
    assert tools.validate_floorplan({"dsl": dsl})["valid"]


def test_set_label_with_an_empty_form_field_removes_the_label(studio) -> None:  # type: ignore[no-untyped-def]
    _create(studio)
    done = studio.client.post(f"{OFFICE}/actions/set_label", data={"target": "Office",
                                                                  "label": ""},
                              headers=studio.headers("application/json"))
    assert done.status_code == 200, done.get_data(as_text=True)
    assert 'label "main"' not in _dsl(studio)


def test_versions_keep_who_changed_what(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    _create(studio)
    bob = make_agent("bob")
    assert bob.act("/studios/team/join", "join_studio").status_code == 200
    edited = PLAN.replace("size (4 x 4)", "size (5 x 4)")
    saved = bob.act(OFFICE, "update_dsl", dsl=edited)
    assert saved.status_code == 200 and saved.get_json()["message"].startswith("Saved version 2")
    same = bob.act(OFFICE, "update_dsl", dsl=edited)
    assert same.get_json()["message"].startswith("No change") and _versions(studio) == ["2", "1"]
    broken = bob.act(OFFICE, "update_dsl", dsl=edited.replace("[top: solid", "[top: glas"))
    assert "1 error(s), first (line 4)" in broken.get_json()["message"]

    body = parse_md(studio.get(f"{OFFICE}/versions").get_data(as_text=True))[1]
    assert _versions(studio) == ["3", "2", "1"]
    assert "by [Bob](/u/bob): update_dsl" in body and "by [Alice](/u/alice): created" in body
    page = parse_md(studio.get(OFFICE).get_data(as_text=True))[1]
    assert "Invalid: 1 error(s)" in page and "| error | parse | 4 |" in page
    assert "cannot be drawn" in page
    html = studio.get(f"{OFFICE}/versions", accept="text/html").get_data(as_text=True)
    assert html.count('class="version"') == 3
    # A failed operation on the invalid plan is a 422 and saves nothing.
    assert studio.act(OFFICE, "resize_room", target="Office", width=1, height=1).status_code \
        == 422
    assert _versions(studio) == ["3", "2", "1"]


def test_user_text_is_escaped_in_the_drawing_and_the_page(studio) -> None:  # type: ignore[no-untyped-def]
    hostile = PLAN.replace('label "main"', 'label "<script>alert(1)</script>&"')
    _create(studio, dsl=hostile)
    html = studio.get(OFFICE, accept="text/html").get_data(as_text=True)
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;" in html
    svg = studio.get(f"{OFFICE}.svg")
    assert "<script" not in svg.get_data(as_text=True)
    assert "default-src 'none'" in svg.headers["Content-Security-Policy"]


def test_svg_and_png_files(studio, make_agent, client) -> None:  # type: ignore[no-untyped-def]
    _create(studio)
    svg = studio.get(f"{OFFICE}.svg")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
    assert svg.get_data(as_text=True).startswith("<svg")
    png = studio.get(f"{OFFICE}.png")
    assert png.status_code == 200 and png.mimetype == "image/png"
    assert png_size(png.get_data()) == (800, 600) or max(png_size(png.get_data())) <= 800
    small = studio.get(f"{OFFICE}.png?width=400&height=300").get_data()
    width, height = png_size(small)
    assert width <= 400 and height <= 300 and (width == 400 or height == 300)
    assert studio.get(f"{OFFICE}.png?width=abc").status_code == 422
    assert studio.get(f"{OFFICE}.png?width=5").status_code == 422
    assert studio.get("/studios/team/f/nope.png").status_code == 404

    carol = make_agent("carol")
    for path in (OFFICE, f"{OFFICE}.svg", f"{OFFICE}.png", f"{OFFICE}/versions", ROOMS):
        assert carol.get(path).status_code == 403, path
    assert carol.act(OFFICE, "resize_room", target="Office", width=1, height=1).status_code \
        == 403
    anonymous = client.get(f"{OFFICE}.svg", headers={"Accept": "text/markdown"})
    assert anonymous.status_code == 401

    studio.act(OFFICE, "update_dsl", dsl="floorplan\n  floor f1 {\n    room A size (1 x 1)\n  }")
    broken = studio.get(f"{OFFICE}.png", accept="application/json")
    assert broken.status_code == 422 and "cannot be drawn" in broken.get_json()["error"]["message"]


def test_sub_rooms_are_listed_under_their_parent(studio) -> None:  # type: ignore[no-untyped-def]
    nested = ("floorplan\n  floor f1 {\n    room Flex at (0,0) size (20 x 20) composed of [\n"
              "      sub-room Booth at (2,2) size (3 x 3) composed of [\n"
              "        sub-room Seat at (1,1) size (1 x 1)\n      ]\n    ]\n  }\n")
    _create(studio, name="flex", dsl=nested)
    body = parse_md(studio.get("/studios/team/f/flex").get_data(as_text=True))[1]
    assert "| ↳ Booth | f1 | (2, 2) | 3 x 3 | 9 |" in body
    assert "| ↳ ↳ Seat | f1 | (3, 3) | 1 x 1 | 1 |" in body
    html = studio.get("/studios/team/f/flex", accept="text/html").get_data(as_text=True)
    assert re.findall(r'<tr class="room-row" data-room="(\w+)">', html) == ["Flex", "Booth",
                                                                            "Seat"]


def test_a_note_linking_a_floorplan_by_name_is_a_backlink(studio) -> None:  # type: ignore[no-untyped-def]
    created = studio.act("/studios/team/floorplans", "create_floorplan", name="ground-floor")
    assert created.status_code == 201
    plan = created.get_json()["location"]
    note = studio.act("/studios/team/note", "create_note",
                      text=f"See {plan} and the edit page {plan}/versions.")
    assert note.status_code == 201
    board = studio.get("/studios/team/backlinks").get_data(as_text=True)
    assert f"]({plan})" in board and "| 1 |" in board

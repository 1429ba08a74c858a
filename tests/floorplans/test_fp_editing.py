"""Editing a plan through its page's fields over HTTP: structured form fields (size[width],
relativePosition[reference]) reach the same actions, the preview draws a change without
storing it, and versions can be viewed, compared and restored. Bad input is refused with a
reason, never a 500."""

from __future__ import annotations

import re

from tests.helpers import action_names, parse_md

PLAN = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) label "main"
    room Storage at (10,0) size (4 x 4)
  }
"""
OFFICE = "/studios/team/f/office"


def form_post(agent, path: str, data: dict[str, str], accept: str = "application/json"):  # type: ignore[no-untyped-def]
    return agent.client.post(path, data=data, headers=agent.headers(accept))


def create(agent) -> None:  # type: ignore[no-untyped-def]
    r = agent.act("/studios/team/floorplans", "create_floorplan", name="office", dsl=PLAN)
    assert r.status_code == 201, r.get_data(as_text=True)


def dsl(agent) -> str:  # type: ignore[no-untyped-def]
    body = parse_md(agent.get(OFFICE).get_data(as_text=True))[1]
    return body.split("```floorplan\n", 1)[1].split("\n```", 1)[0]


def rect_width(svg: str, room: str) -> float:
    found = re.search(rf'<rect class="room"[^>]*data-room="{room}"[^>]*>', svg)
    assert found, svg[:300]
    return float(re.search(r'width="([\d.]+)"', found.group(0)).group(1))


def test_the_page_offers_fields_not_json(studio) -> None:  # type: ignore[no-untyped-def]
    create(studio)
    html = studio.get(OFFICE, accept="text/html").get_data(as_text=True)
    add = re.search(r'<form[^>]*data-action="add_room".*?</form>', html, flags=re.S).group(0)
    assert 'type="number" id="add-width" name="size[width]"' in add
    assert 'name="relativePosition[reference]"' in add and "<textarea" not in add
    assert '<option value="Storage"' in add  # the anchor room is a select of the plan's rooms
    resize = re.search(r'<form[^>]*data-action="resize_room".*?</form>', html, flags=re.S)
    assert '<select id="resize-target" name="target"' in resize.group(0)
    assert 'role="img" aria-label="Drawing of floorplan office: 2 rooms: Office, Storage"' in html


def test_structured_fields_reach_the_actions(studio) -> None:  # type: ignore[no-untyped-def]
    create(studio)
    r = form_post(studio, f"{OFFICE}/actions/add_room",
                  {"name": "Kitchen", "size[width]": "6", "size[height]": "3.5",
                   "relativePosition[reference]": "Office",
                   "relativePosition[direction]": "below", "relativePosition[gap]": "",
                   "relativePosition[alignment]": "", "position[x]": "", "position[y]": "",
                   "walls[top]": "door", "walls[left]": "", "label": ""})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert "room Kitchen size (6 x 3.5) walls [top: door] below Office" in dsl(studio)
    r = form_post(studio, f"{OFFICE}/actions/add_room",
                  {"name": "Hall", "size[width]": "2", "size[height]": "2", "position[x]": "30",
                   "position[y]": "0", "relativePosition[reference]": "",
                   "relativePosition[direction]": ""})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert "room Hall at (30,0) size (2 x 2)" in dsl(studio)
    r = form_post(studio, f"{OFFICE}/actions/add_room",
                  {"name": "Bad", "size[width]": "wide", "size[height]": "2"})
    assert r.status_code == 422
    assert r.json["error"]["errors"][0]["param"] == "size"
    r = form_post(studio, f"{OFFICE}/actions/add_room",
                  {"name": "Bad", "size[width]": "NaN", "size[height]": "2"})
    assert r.status_code == 422
    r = form_post(studio, f"{OFFICE}/actions/add_room", {"name": "Bad", "size[depth]": "2"})
    assert r.status_code == 422
    assert "Bad" not in dsl(studio)


def test_preview_draws_without_saving(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    create(studio)
    before = studio.get(f"{OFFICE}.svg").get_data(as_text=True)
    r = form_post(studio, f"{OFFICE}/preview", {"operation": "resize_room", "target": "Storage",
                                                "width": "8", "height": "4"})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["ok"] and r.json["saved"] is False and "8 x 4" in r.json["change"]
    assert rect_width(r.json["svg"], "Storage") == 2 * rect_width(before, "Storage")
    assert "(preview)" in r.json["svg"]
    # Nothing was stored: same DSL, same version.
    assert dsl(studio) == PLAN.rstrip("\n") or dsl(studio) == PLAN
    assert "Version 2" not in studio.get(f"{OFFICE}/versions").get_data(as_text=True)
    # The text editor previews too, errors included (with their line).
    r = studio.post(f"{OFFICE}/preview", json={"operation": "update_dsl",
                                               "dsl": PLAN.replace("size (4 x 4)", "size (4 x")})
    assert r.status_code == 200 and not r.json["ok"] and r.json["errors"][0]["line"]
    r = studio.post(f"{OFFICE}/preview", json={"operation": "update_dsl",
                                               "dsl": PLAN.replace("(4 x 4)", "(5 x 4)")})
    assert r.status_code == 200 and r.json["ok"] and r.json["rooms"] == 2
    # Refusals: an unknown operation, a missing field, a room that does not exist.
    assert studio.post(f"{OFFICE}/preview", json={"operation": "paint"}).status_code == 422
    assert studio.post(f"{OFFICE}/preview", json={}).status_code == 422
    r = studio.post(f"{OFFICE}/preview", json={"operation": "resize_room", "target": "Storage"})
    assert r.status_code == 422
    r = studio.post(f"{OFFICE}/preview", json={"operation": "move_room", "target": "Garage",
                                               "x": 1, "y": 1})
    assert r.status_code == 422 and "Garage" in r.json["error"]["message"]
    assert studio.post("/studios/team/f/nope/preview", json={}).status_code == 404
    assert make_agent("eve").post(f"{OFFICE}/preview", json={}).status_code == 403
    reader = make_agent("alice", scopes="read")  # a preview stores nothing: read is enough
    r = reader.post(f"{OFFICE}/preview", json={"operation": "update_dsl", "dsl": PLAN})
    assert r.status_code == 200


def test_versions_view_compare_and_restore(studio) -> None:  # type: ignore[no-untyped-def]
    create(studio)
    assert studio.act(OFFICE, "resize_room", target="Storage", width=8, height=4
                      ).status_code == 200
    assert studio.act(OFFICE, "rename_room", target="Office", newName="Study").status_code == 200
    html = studio.get(f"{OFFICE}/versions/1", accept="text/html").get_data(as_text=True)
    assert "version 1" in html and 'aria-label="Drawing of floorplan office, version 1' in html
    assert 'data-action="restore_floorplan_version"' in html
    assert "room Office at (0,0)" in studio.get(f"{OFFICE}/versions/1").get_data(as_text=True)
    assert studio.get(f"{OFFICE}/versions/9").status_code == 404
    html = studio.get(f"{OFFICE}/compare?from=1&to=3", accept="text/html").get_data(
        as_text=True)
    assert html.count('class="plan-side"') == 2 and html.count("<svg") == 2
    assert "removed line 3" in html and "Study" in html
    md = studio.get(f"{OFFICE}/compare").get_data(as_text=True)
    assert "version 2 → version 3" in md and "```diff" in md and "+     room Study" in md
    for bad in ("from=0", "to=4", "from=x"):
        assert studio.get(f"{OFFICE}/compare?{bad}").status_code == 422
    assert "restore_floorplan_version" in action_names(
        studio.get(f"{OFFICE}/versions").get_data(as_text=True))
    r = form_post(studio, f"{OFFICE}/versions/actions/restore_floorplan_version",
                  {"version": "1"})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["result"] == {"version": 4, "restored": 1, "changed": True,
                                "plan": "team/office"}
    assert dsl(studio).strip() == PLAN.strip()
    r = studio.act(f"{OFFICE}/versions", "restore_floorplan_version", version=1)
    assert r.status_code == 200 and r.json["result"]["changed"] is False
    # The current version's own page offers nothing to restore (nor draws a button for it).
    assert "restore_floorplan_version" not in action_names(
        studio.get(f"{OFFICE}/versions/4").get_data(as_text=True))
    r = studio.act(f"{OFFICE}/versions/4", "restore_floorplan_version", version=4)
    assert r.status_code == 409 and "current version" in r.json["error"]["message"]
    assert studio.act(f"{OFFICE}/versions", "restore_floorplan_version", version=7
                      ).status_code == 404
    assert studio.act(f"{OFFICE}/versions", "restore_floorplan_version", version=0
                      ).status_code == 422

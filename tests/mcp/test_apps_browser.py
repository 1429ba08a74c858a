"""The MCP Apps views in a real Chromium inside a minimal host page (``apps_host.html``: a
sandboxed frame under the CSP the view declares, the host side of the postMessage protocol,
tools/call forwarded to the real /mcp with a token). The floorplan viewer lists the rooms,
shows a room's metadata, pans and zooms, and saves an edit to the stored plan; the decision
view votes in place. Hostile labels and option titles stay text.

HARMONIC_SCREENSHOTS=1 keeps pictures of the views in docs/screenshots.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

pytestmark = pytest.mark.browser

HOST = Path(__file__).with_name("apps_host.html").read_text()
HOSTILE = "<img src=x onerror=parent.pwned=1>"
PLAN = f"""floorplan
  floor f1 {{
    room Office at (0,0) size (10 x 12) label "main"
    room Storage right-of Office size (4 x 4)
    room Kitchen below Office size (10 x 6) label "{HOSTILE}"
  }}
"""


def open_view(page: Any, live_server: str, token: str, view: str, tool: str,
              arguments: dict[str, Any], theme: str = "light", no_tools: bool = False) -> Any:
    """The host page at a URL of the live server (so its fetches of /mcp are same-origin)
    showing ``view`` for a call of ``tool``; returns the view's frame."""
    url = f"{live_server}/__test_apps_host__"
    page.route(url, lambda route: route.fulfill(status=200, content_type="text/html",
                                                body=HOST))
    config = {"token": token, "view": view, "tool": tool, "arguments": arguments,
              "theme": theme, "noTools": no_tools}
    page.add_init_script(f"window.CONFIG = {json.dumps(config)};")
    page.goto(url)
    return page.frame_locator("#view")


def _screenshot(page: Any, name: str) -> None:
    # HARMONIC_SCREENSHOTS=1 refreshes docs/screenshots, as the other browser tests do.
    if os.environ.get("HARMONIC_SCREENSHOTS"):
        where = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
        where.mkdir(parents=True, exist_ok=True)
        page.locator("#view").screenshot(path=str(where / name))


def _no_script_ran(page: Any, view: Any) -> None:
    assert page.evaluate("window.pwned") is None
    assert view.locator("img").count() == 0
    assert page.evaluate("window.hostLog.errors") == []


def test_the_floorplan_viewer_in_a_host(app: Flask, studio, live_server: str, page) -> None:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/floorplans", "create_floorplan", name="office", dsl=PLAN)
    assert made.status_code == 201
    view = open_view(page, live_server, studio.token, "ui://harmonic/floorplan-viewer",
                     "render_floorplan", {"plan": "team/office"})

    # The rooms list, and the drawing with one hit area per room.
    rooms = view.locator("ul.rooms li button")
    rooms.first.wait_for()
    assert page.evaluate("window.viewMime") == "text/html;profile=mcp-app"
    assert rooms.all_inner_texts() == ["Office", "Storage", "Kitchen"]
    view.locator("svg#drawing rect.hit").nth(2).wait_for()
    assert view.locator("#title").inner_text() == "team/office · version 1"

    # A room's metadata on click in the list: the hostile label is text.
    view.locator('ul.rooms button[data-room="Kitchen"]').click()
    meta = view.locator("dl.meta")
    assert "Label" in meta.inner_text() and HOSTILE in meta.inner_text()
    assert view.locator("#details-title").text_content() == "Kitchen"
    _no_script_ran(page, view)

    # ... and on the drawing: the hit area over Storage.
    view.locator('rect.hit[data-room="Storage"]').click()
    assert view.locator("#details-title").text_content() == "Storage"
    assert "4 × 4" in meta.inner_text() and "right-of Office" in meta.inner_text()
    assert view.locator('ul.rooms button[data-room="Storage"]').get_attribute(
        "aria-pressed") == "true"
    _screenshot(page, "mcp-app-floorplan-light.png")

    # Zoom and pan change the drawing's transform.
    viewport = view.locator("g#viewport")
    assert viewport.get_attribute("transform") == "translate(0,0) scale(1)"
    view.locator("#zoom-in").click()
    zoomed = viewport.get_attribute("transform")
    assert zoomed is not None and zoomed.endswith("scale(1.25)")
    box = view.locator("#stage").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 40, box["y"] + 40)
    page.mouse.down()
    page.mouse.move(box["x"] + 140, box["y"] + 90, steps=5)
    page.mouse.up()
    panned = viewport.get_attribute("transform")
    assert panned != zoomed and panned is not None and panned.endswith("scale(1.25)")
    moved = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", panned)
    before = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", zoomed)
    assert moved and before and float(moved.group(1)) > float(before.group(1))
    view.locator("#zoom-reset").click()
    assert viewport.get_attribute("transform") == "translate(0,0) scale(1)"

    # An edit through the host: resize and rename Storage, saved as new versions of the plan.
    form = view.locator("#edit")
    form.locator("[name=width]").fill("8")
    form.locator("[name=newName]").fill("Pantry")
    form.locator("button#save").click()
    view.locator('ul.rooms button[data-room="Pantry"]').wait_for()
    assert rooms.all_inner_texts() == ["Office", "Pantry", "Kitchen"]
    assert view.locator("#details-title").text_content() == "Pantry"
    assert "8 × 4" in meta.inner_text()
    calls = page.evaluate("window.hostLog.calls")
    edits = [c["arguments"]["action"] for c in calls if c["name"] == "execute_action"]
    assert edits == ["resize_room", "rename_room"]
    assert all(c["arguments"]["path"] == "/studios/team/f/office" for c in calls
               if c["name"] == "execute_action")
    stored = studio.get("/studios/team/f/office").get_data(as_text=True)
    assert "room Pantry right-of Office size (8 x 4)" in stored and "Storage" not in stored
    assert view.locator("#title").inner_text() == "team/office · version 3"
    _no_script_ran(page, view)
    assert page.evaluate("window.hostLog.sizes")  # the view told the host its size


def test_the_floorplan_viewer_in_the_dark(app: Flask, studio, live_server: str, page) -> None:  # type: ignore[no-untyped-def]
    """A DSL text (nothing stored), in a host with a dark theme: the viewer follows the theme,
    and an edit goes through modify_floorplan and is drawn again."""
    view = open_view(page, live_server, studio.token, "ui://harmonic/floorplan-viewer",
                     "render_floorplan", {"dsl": PLAN}, theme="dark")
    view.locator("svg#drawing rect.hit").nth(2).wait_for()
    assert view.locator("html").get_attribute("data-theme") == "dark"
    background = view.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")
    assert background == "rgb(23, 24, 26)"
    view.locator('rect.hit[data-room="Office"]').click()
    _screenshot(page, "mcp-app-floorplan-dark.png")
    view.locator("#edit [name=label]").fill("open plan")
    view.locator("button#save").click()
    view.locator("#status").filter(has_text="label").wait_for()
    assert "Label\nopen plan" in view.locator("dl.meta").inner_text()
    calls = page.evaluate("window.hostLog.calls")
    assert [c["name"] for c in calls] == ["render_floorplan", "modify_floorplan",
                                          "render_floorplan"]
    assert calls[1]["arguments"]["operations"] == [
        {"action": "set_label", "target": "Office", "params": {"label": "open plan"}}]
    assert 'room Office at (0,0) size (10 x 12) label "open plan"' in \
        calls[2]["arguments"]["dsl"]
    _no_script_ran(page, view)


def test_a_host_that_cannot_call_tools_gets_a_read_only_viewer(  # type: ignore[no-untyped-def]
        app: Flask, studio, live_server: str, page) -> None:
    view = open_view(page, live_server, studio.token, "ui://harmonic/floorplan-viewer",
                     "render_floorplan", {"dsl": PLAN}, no_tools=True)
    rooms = view.locator("ul.rooms li button")
    rooms.first.wait_for()
    assert rooms.all_inner_texts() == ["Office", "Storage", "Kitchen"]
    # The PNG the tool returned, without hit areas; the metadata still shows, edits do not.
    image = view.locator("g#viewport image")
    assert (image.get_attribute("href") or "").startswith("data:image/png;base64,")
    assert view.locator("rect.hit").count() == 0
    rooms.nth(1).click()
    assert "4 × 4" in view.locator("dl.meta").inner_text()
    assert view.locator("#edit").is_hidden()
    assert page.evaluate("window.hostLog.calls") == []
    _no_script_ran(page, view)


def test_the_decision_view_votes_in_place(app: Flask, studio, live_server: str, page) -> None:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/decide", "create_decision", question="Where is lunch?",
                      options=[HOSTILE, "Canteen", "Park"])
    path = made.get_json()["location"]
    view = open_view(page, live_server, studio.token, "ui://harmonic/decision-view",
                     "show_decision", {"path": path})
    rows = view.locator("tr.option")
    rows.first.wait_for()
    assert view.locator("td.title").all_inner_texts() == [HOSTILE, "Canteen", "Park"]
    assert view.locator("#question").inner_text() == "Where is lunch?"
    _no_script_ran(page, view)

    rows.nth(1).locator("input[name=accept]").check()
    rows.nth(1).locator("input[name=prefer]").check()
    rows.nth(2).locator("input[name=accept]").check()
    view.locator("#vote").click()
    view.locator("#status").filter(has_text="Vote recorded").wait_for()
    assert rows.nth(1).locator("td.accepted").inner_text() == "1"
    assert rows.nth(1).locator("td.preferred").inner_text() == "1"
    assert rows.nth(2).locator("td.accepted").inner_text() == "1"
    assert rows.nth(0).locator("td.accepted").inner_text() == "0"
    assert rows.nth(1).locator("input[name=prefer]").is_checked()
    _screenshot(page, "mcp-app-decision-light.png")

    # The votes are the decision's: its page, read over HTTP, says so.
    shown = studio.get(path).get_data(as_text=True)
    assert re.search(r"\| 1 \| Canteen \| 1 \| 1 \|\n", shown)
    assert re.search(r"\| 2 \| Park \| 1 \| 0 \|\n", shown)
    _no_script_ran(page, view)

"""A person in a real Chromium edits a shared floorplan in the DSL editor and sees the drawing
change; a broken edit shows its validation message with the line."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.helpers import log_in, open_studio

pytestmark = pytest.mark.browser

PLAN = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) label "main"
    room Storage right-of Office size (4 x 4)
  }
"""
MORE = PLAN.replace("  }\n", "    room Kitchen below Office size (10 x 6) label \"<b>break</b>\"\n"
                    "  }\n")


def test_a_person_edits_the_plan_and_sees_the_drawing_change(app: Flask, make_agent, page) -> None:  # type: ignore[no-untyped-def]
    alice = make_agent("alice", password="alice-password")
    open_studio(app, "alice")
    created = alice.act("/studios/team/floorplans", "create_floorplan", name="office", dsl=PLAN)
    assert created.status_code == 201

    log_in(page, "alice", "alice-password")
    page.goto("/studios/team/f/office")
    drawing = page.locator(".plan-drawing svg")
    assert drawing.locator("rect.room").count() == 2
    assert page.locator(".validation").get_attribute("data-valid") == "true"

    editor = page.locator("form[data-action=update_dsl]")
    assert editor.locator("textarea[name=dsl]").input_value() == PLAN.rstrip("\n") or \
        editor.locator("textarea[name=dsl]").input_value() == PLAN
    editor.locator("textarea[name=dsl]").fill(MORE)
    with page.expect_navigation():
        editor.locator("button[type=submit]").click()
    assert "Saved version 2" in page.locator(".flash").inner_text()
    assert page.locator(".plan-drawing svg rect.room").count() == 3
    kitchen = page.locator('.plan-drawing svg text.room-label[data-room="Kitchen"]')
    assert kitchen.text_content() == "<b>break</b>"  # the label stayed text
    assert page.locator(".plan-drawing svg b").count() == 0
    assert page.locator("tr.room-row").count() == 3

    # A generated operation form: resize Storage through its own action.
    storage = page.locator('.plan-drawing svg rect.room[data-room="Storage"]')
    before = float(storage.get_attribute("width"))
    page.locator("details[data-op=resize_room] summary").click()
    form = page.locator("form[data-action=resize_room]")
    form.locator("[name=target]").select_option("Storage")
    form.locator("[name=width]").fill("8")
    form.locator("[name=height]").fill("4")
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    assert "Resized to 8 x 4" in page.locator(".flash").inner_text()
    after = float(page.locator('.plan-drawing svg rect.room[data-room="Storage"]')
                  .get_attribute("width"))
    assert after == pytest.approx(before * 2)
    assert "room Storage right-of Office size (8 x 4)" in page.locator(
        "form[data-action=update_dsl] textarea[name=dsl]").input_value()

    # A typo: the person sees the error with its line, and no drawing until it is fixed.
    page.locator("form[data-action=update_dsl] textarea[name=dsl]").fill(
        MORE.replace("size (4 x 4)", "size (4 x )"))
    with page.expect_navigation():
        page.locator("form[data-action=update_dsl] button[type=submit]").click()
    assert page.locator(".validation").get_attribute("data-valid") == "false"
    assert "Line 4" in page.locator(".validation .error").first.inner_text()
    assert page.locator(".plan-drawing svg").count() == 0
    page.goto("/studios/team/f/office/versions")
    assert page.locator("li.version").count() == 4

"""A person in a real Chromium: sign up, create a studio (its address suggested from its name
and checked as it is typed, the time zone the browser's), write a Markdown note, see it
rendered; the author is not asked to confirm reading their own note."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_signup_studio_note(browser, live_server) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(base_url=live_server, timezone_id="Europe/Paris")
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto("/signup")
    page.fill("#handle", "hana")
    page.fill("#name", "Hana")
    page.fill("#password", "hana-password")
    page.click("button[type=submit]")
    page.wait_for_url("**/")
    assert page.locator(".flash").count() == 1  # one welcome, not two
    page.goto("/studios/new")
    form = page.locator("form[data-action=create_studio]")
    form.locator("[name=name]").fill("Hana's Studio!")
    handle = form.locator("[name=handle]")
    expect(handle).to_have_value("hana-s-studio")  # suggested from the name
    expect(page.locator("[data-check-status-for=create_studio-handle]")).to_contain_text(
        "/studios/hana-s-studio is free")
    handle.fill("Hana S")
    expect(page.locator("[data-check-status-for=create_studio-handle]")).to_contain_text(
        "a-z, 0-9")
    handle.fill("hana-s")
    expect(page.locator("[data-check-status-for=create_studio-handle]")).to_contain_text("free")
    form.get_by_text("Time zone, rhythm and who may join").click()
    assert form.locator("[name=timezone]").input_value() == "Europe/Paris"  # the browser's
    assert not form.locator("input[type=checkbox][name=heartbeats_required]").is_checked()
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/hana-s")
    assert page.locator("h1").inner_text() == "Hana's Studio!"
    assert page.locator("section.heartbeat").count() == 0  # no check-in asked for by default
    page.goto("/studios/hana-s/note")
    form = page.locator("form[data-action=create_note]")
    form.locator("[name=text]").fill(
        "# Plan\n\nWe **ship** on Friday.\n\n<script>window.pwned=1</script>")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/hana-s/n/*")
    assert page.locator("h1").first.inner_text() == "Plan"
    assert page.locator(".prose strong").inner_text() == "ship"
    assert page.evaluate("window.pwned === undefined")
    assert page.locator(".read-state").get_attribute("data-state") == "author"
    assert "You wrote this note" in page.locator(".read-state").inner_text()
    assert page.locator("form[data-action=confirm_read]").count() == 0
    context.close()

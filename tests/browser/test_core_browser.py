"""A person in a real Chromium: sign up, create a studio, write a Markdown note, see it
rendered, confirm reading it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_signup_studio_note_confirm(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/signup")
    page.fill("#handle", "hana")
    page.fill("#name", "Hana")
    page.fill("#password", "hana-password")
    page.click("button[type=submit]")
    page.wait_for_url("**/")
    page.goto("/studios/new")
    form = page.locator("form[data-action=create_studio]")
    form.locator("[name=name]").fill("Hana's studio")
    form.locator("[name=handle]").fill("hana-s")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/hana-s")
    assert page.locator("h1").inner_text() == "Hana's studio"
    # heartbeats may be required in new studios: send one when it is the only action offered.
    beat = page.locator("form[data-action=send_heartbeat]")
    if beat.count():
        beat.locator("button[type=submit]").click()
    page.goto("/studios/hana-s/note")
    form = page.locator("form[data-action=create_note]")
    form.locator("[name=text]").fill(
        "# Plan\n\nWe **ship** on Friday.\n\n<script>window.pwned=1</script>")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/hana-s/n/*")
    assert page.locator("h1").first.inner_text() == "Plan"
    assert page.locator(".prose strong").inner_text() == "ship"
    assert page.evaluate("window.pwned === undefined")
    assert page.locator(".read-state").get_attribute("data-state") == "unread"
    page.locator("form[data-action=confirm_read] button[type=submit]").click()
    page.wait_for_load_state()
    assert page.locator(".read-state").get_attribute("data-state") == "read"
    assert page.locator("form[data-action=confirm_read]").count() == 0
    assert "Read confirmed." in page.locator(".flash").inner_text()

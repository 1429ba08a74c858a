"""A person in a real Chromium: an admin makes an invite link, a newcomer opens it signed out,
signs up, joins, and works in the studio on their first day without meeting the heartbeat
gate."""

from __future__ import annotations

import re

import pytest

from tests.helpers import log_in

pytestmark = pytest.mark.browser


def test_invite_by_link_and_join(app, page, browser, live_server, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("ada", password="ada-password-1")
    log_in(page, "ada", "ada-password-1")

    # Ada creates an invite-only studio that requires heartbeats (the default).
    page.goto("/studios/new")
    form = page.locator("form[data-action=create_studio]")
    form.locator("[name=name]").fill("Garden Club")
    form.locator("[name=handle]").fill("garden")
    form.locator("[name=description]").fill("We grow **tomatoes** together.")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/garden")
    # Her first day: no gate.
    assert page.locator("section.heartbeat").count() == 0
    assert page.get_by_text("Recent activity").count() == 1

    # She makes an invite link on the invites page, reached from the team page.
    page.click("a[href='/studios/garden/team']")
    page.click("a[href='/studios/garden/invites']")
    create = page.locator("form[data-action=create_invite]")
    create.locator("[name=max_uses]").fill("5")
    create.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/garden/invites")
    link = page.locator("input.invite-link").first.input_value()
    # The link is on the public address (HARMONIC_BASE_URL); the test server has its own port.
    assert link.startswith(app.config["HARMONIC_BASE_URL"]) and "/invites/" in link
    path = "/invites/" + link.rsplit("/invites/", 1)[1]
    assert page.locator("td.uses").first.inner_text() == "0 of 5"

    # A newcomer opens the link in their own browser, signed out.
    newcomer = browser.new_context(base_url=live_server).new_page()
    newcomer.set_default_timeout(15000)
    newcomer.goto(path)
    assert newcomer.locator("h1").inner_text() == "Join Garden Club"
    assert newcomer.locator(".prose strong").inner_text() == "tomatoes"
    newcomer.click("#signup")
    newcomer.wait_for_url(re.compile(r"/signup\?next=/invites/"))
    newcomer.fill("#handle", "ben")
    newcomer.fill("#name", "Ben")
    newcomer.fill("#password", "ben-password-1")
    newcomer.click("form.action button[type=submit]")
    # Back on the invite, signed in, one click joins.
    newcomer.wait_for_url("**/invites/*")
    newcomer.get_by_role("button", name="Join Garden Club").click()
    newcomer.wait_for_url("**/studios/garden")
    assert "Welcome to Garden Club" in newcomer.locator(".flash").first.inner_text()
    # No heartbeat gate on the first day: the studio itself, and its pages, are open.
    assert newcomer.get_by_text("Recent activity").count() == 1
    assert newcomer.locator("section.heartbeat").count() == 0
    newcomer.click("a[href='/studios/garden/note']")
    newcomer.wait_for_url("**/studios/garden/note")
    assert newcomer.locator("form[data-action=create_note]").count() == 1
    newcomer.context.close()

    # Ada sees the new member and the use counted.
    page.reload()
    assert page.locator("td.uses").first.inner_text() == "1 of 5"
    page.goto("/studios/garden/team")
    assert page.locator("tr[data-member=ben] td.role").inner_text() == "member"


def test_a_wrong_code_keeps_the_form(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/join")
    page.fill("#invite-code", "not-a-real-code")
    page.click("form.join-code button[type=submit]")
    page.wait_for_url("**/join?code=*")
    assert "No invite has this code" in page.locator("[role=alert]").inner_text()
    assert page.locator("#invite-code").input_value() == "not-a-real-code"

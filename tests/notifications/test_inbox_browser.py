"""A person in a real Chromium: the header badge counts unread notifications, the inbox opens
from it, "mark all read" empties it and the badge disappears."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.helpers import join_studio, log_in, open_studio

pytestmark = pytest.mark.browser


def test_badge_inbox_mark_all_read(app: Flask, make_agent, page) -> None:  # type: ignore[no-untyped-def]
    make_agent("hana", password="hana-password")
    open_studio(app, "hana", handle="hs", name="Hana's")
    ivo = join_studio(make_agent, "ivo", studio="hs")
    note = ivo.act("/studios/hs/note", "create_note", title="Ping", text="@hana have a look")
    ivo.act("/studios/hs/decide", "create_decision", question="Friday lunch?")
    log_in(page, "hana", "hana-password")
    badge = page.locator("header .inbox-link .badge")
    assert badge.inner_text() == "2"
    page.locator("header .inbox-link").click()
    page.wait_for_url("**/inbox")
    items = page.locator("li.notification.unread")
    assert items.count() == 2
    # An unread entry is a button: opening it marks it read on the way.
    mention = page.locator("li.notification[data-kind=mention] .entry").first
    assert "@ivo mentioned you in “Ping”" in mention.inner_text()
    page.locator("form[data-action=mark_all_read] button[type=submit]").click()
    page.wait_for_url("**/inbox")
    assert "Marked 2 notifications read." in page.locator(".flash").inner_text()
    assert page.locator("li.notification.unread").count() == 0
    assert page.locator("li.notification.read").count() == 2
    assert page.locator("header .inbox-link .badge").count() == 0
    assert page.locator("header .inbox-link").get_attribute("data-unread") == "0"
    # A read entry is a plain link to what it is about.
    read = page.locator("li.notification.read[data-kind=mention] a.entry")
    assert read.get_attribute("href") == note.json["location"]
    # The mention is a link to the person's page in the rendered note.
    page.goto(note.json["location"])
    assert page.locator(".prose a[href='/u/hana']").inner_text() == "@hana"

"""A person in a real Chromium types in the header's search box and sees highlighted results,
then follows one; a member of another studio sees none of them."""

from __future__ import annotations

import pytest

from tests.helpers import log_in, open_studio
from tests.search.conftest import note

pytestmark = pytest.mark.browser


def test_typing_in_the_search_box(app, page, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = make_agent("alice", password="alice-password-1")
    open_studio(app, "alice")
    path = note(alice, "Picnic <b>plan</b>", "Bring a blanket and sandwiches to the park")
    note(alice, "Office move", "boxes and tape")
    log_in(page, "alice", "alice-password-1")

    page.goto("/studios")
    box = page.get_by_label("Search", exact=True)
    box.fill("sandwiches")
    box.press("Enter")
    page.wait_for_url("**/search?q=sandwiches")
    hits = page.locator("li.search-hit")
    assert hits.count() == 1
    assert hits.first.locator("mark").first.inner_text().lower() == "sandwiches"
    # The title's markup is shown as text, not made into an element.
    link = hits.first.locator(f"a[href='{path}']")
    assert link.inner_text() == "Picnic <b>plan</b>"
    assert hits.first.locator("b").count() == 0
    link.click()
    page.wait_for_url(f"**{path}")

    # The search page's own form keeps the query and searches again.
    page.goto("/search?q=sandwiches")
    assert page.get_by_label("Search for").input_value() == "sandwiches"
    page.get_by_label("Search for").fill("boxes kind:note")
    page.get_by_role("button", name="Search", exact=True).click()
    page.wait_for_load_state()
    assert page.locator("li.search-hit a").first.inner_text() == "Office move"
    page.get_by_label("Search for").fill("boxes colour:red")
    page.get_by_role("button", name="Search", exact=True).click()
    page.wait_for_load_state()
    assert "unknown filter" in page.get_by_role("alert").inner_text()


def test_a_stranger_finds_nothing_in_the_browser(app, page, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = make_agent("alice")
    open_studio(app, "alice")
    note(alice, "Picnic plan", "sandwiches")
    make_agent("stranger", password="stranger-password-1")
    log_in(page, "stranger", "stranger-password-1")
    box = page.get_by_label("Search", exact=True)
    box.fill("sandwiches")
    box.press("Enter")
    page.wait_for_url("**/search?q=sandwiches")
    assert page.locator("li.search-hit").count() == 0
    assert "Nothing found" in page.locator("main").inner_text()

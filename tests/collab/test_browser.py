"""A person in a real Chromium: create a decision, add options, vote and watch the results
change; join a commitment and watch the progress bar move."""

from __future__ import annotations

import pytest

from tests.helpers import join_studio, log_in, open_studio

pytestmark = pytest.mark.browser


def result_rows(page) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    rows = page.locator("table.results tr[data-option]")
    return [(rows.nth(i).get_attribute("data-option"),
             rows.nth(i).locator("td.accepted").inner_text(),
             rows.nth(i).locator("td.preferred").inner_text()) for i in range(rows.count())]


def bar_fraction(page) -> float:  # type: ignore[no-untyped-def]
    outer = page.locator(".bar").bounding_box()
    inner = page.locator(".bar > span").bounding_box()
    return round(inner["width"] / outer["width"], 2)


def test_decision_and_commitment_in_the_browser(app, page, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("pat", password="pat-password-1")
    open_studio(app, "pat")
    friend = join_studio(make_agent, "quinn")
    log_in(page, "pat", "pat-password-1")

    # A decision, two options, votes.
    page.goto("/studios/team")
    page.click("a[href='/studios/team/decide']")
    form = page.locator("form[data-action=create_decision]")
    assert form.locator("[name=options_open][type=checkbox]").is_checked()
    # Options may be typed here; this journey adds them on the decision's page instead.
    form.locator("[name=question]").fill("Where is the offsite?")
    form.get_by_role("button", name="In a week").click()  # the date-time picker's shortcut
    assert form.locator("[name=deadline]").input_value() != ""
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/team/d/*")
    assert page.locator("h1").first.inner_text() == "Where is the offsite?"
    for title in ("Lisbon", "Oslo"):
        add = page.locator("form[data-action=add_option]")
        add.locator("[name=title]").fill(title)
        add.locator("button[type=submit]").click()
        page.wait_for_load_state()
    # No ranking before the first vote: the ballot lists the options, the results wait.
    assert result_rows(page) == []
    assert "No votes yet" in page.locator(".results-panel").inner_text()
    assert page.locator("form[data-action=vote] tr[data-option]").evaluate_all(
        "rows => rows.map(r => r.dataset.option)") == ["Lisbon", "Oslo"]

    ballot = page.locator("form[data-action=vote]")
    ballot.get_by_label("Accept: Oslo").check()
    ballot.get_by_label("Prefer: Oslo").check()
    ballot.locator("button[type=submit]").click()
    page.wait_for_load_state()
    assert result_rows(page)[0] == ("Oslo", "1", "1")
    assert "Vote recorded" in page.locator(".flash").inner_text()
    # The form remembers the vote; changing it changes the results.
    ballot = page.locator("form[data-action=vote]")
    assert ballot.get_by_label("Accept: Oslo").is_checked()
    ballot.get_by_label("Accept: Lisbon").check()
    ballot.locator("button[type=submit]").click()
    page.wait_for_load_state()
    assert dict((r[0], r[1:]) for r in result_rows(page)) == {"Oslo": ("1", "1"),
                                                             "Lisbon": ("1", "0")}
    # Another member's vote (over HTTP) moves Lisbon to the top.
    decision = "/" + page.url.split("/", 3)[3]
    assert friend.post(f"{decision}/actions/vote",
                       json={"option_title": "Lisbon", "accept": True}).status_code == 200
    page.reload()
    assert result_rows(page)[0] == ("Lisbon", "2", "0")
    assert page.locator(".voters").inner_text() == "Pat, Quinn"

    # A commitment: the bar moves as people join.
    page.goto("/studios/team/commit")
    form = page.locator("form[data-action=create_commitment]")
    form.locator("[name=title]").fill("Book the venue")
    form.locator("[name=critical_mass]").fill("2")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/studios/team/c/*")
    assert page.locator(".bar").get_attribute("aria-valuenow") == "0"
    assert bar_fraction(page) == 0
    page.locator("form[data-action=join_commitment] button[type=submit]").click()
    page.wait_for_load_state()
    assert page.locator(".bar").get_attribute("aria-valuenow") == "1"
    assert bar_fraction(page) == 0.5
    assert page.locator("form[data-action=join_commitment]").count() == 0
    assert "1 more needed" in page.locator(".progress-text").inner_text()
    commitment = "/" + page.url.split("/", 3)[3]
    assert friend.act(commitment, "join_commitment").status_code == 200
    page.reload()
    assert bar_fraction(page) == 1
    assert "Critical mass achieved" in page.locator(".progress-text").inner_text()
    assert page.locator("article.commitment").get_attribute("data-status") == \
        "critical_mass_achieved"

"""Decisions of every kind in a real Chromium, by clicking and typing: a proposal that one person
agrees to and another blocks (refused without a reason, in words, then with one; not carried);
a ranked-choice poll whose rounds table shows the elimination and the winner; a time poll
answered yes / maybe / no, closed, its chosen time downloaded as a calendar file; a dot vote
whose "dots left" follows the typing, and which still works without JavaScript. Each page is
checked by axe in both themes and photographed (light, dark, 390 px; docs/screenshots with
HARMONIC_SCREENSHOTS=1)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import icalendar
import pytest
from flask import Flask
from playwright.sync_api import expect

from tests.browser.test_page_journeys import person, shoot
from tests.browser.test_people_web import _axe_in_both_themes
from tests.helpers import join_studio

pytestmark = pytest.mark.browser


def new_decision(tab, question: str, kind_label: str) -> None:  # type: ignore[no-untyped-def]
    """Open the new-decision form and choose the question and the kind (by its label)."""
    tab.goto("/studios/team/decide")
    form = tab.locator("form[data-action=create_decision]")
    form.get_by_label("Question").fill(question)
    form.locator("label.kind-choice", has_text=kind_label).click()


def create(tab) -> str:  # type: ignore[no-untyped-def]
    tab.locator("form[data-action=create_decision] button[type=submit]").click()
    tab.wait_for_url("**/studios/team/d/*")
    return "/" + tab.url.split("/", 3)[3]


def close(tab, decision: str) -> None:  # type: ignore[no-untyped-def]
    tab.goto(decision)
    tab.get_by_role("link", name="Close this decision…").click()
    tab.get_by_role("button", name="Yes, close the decision").click()
    tab.wait_for_url(f"**{decision}")


def no_axe_problems(tab, label: str) -> None:  # type: ignore[no-untyped-def]
    assert _axe_in_both_themes(tab, label) == []
    tab.emulate_media(color_scheme="light")


def test_a_proposal_blocked_with_a_reason(app: Flask, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    quinn = person(app, make_agent, browser, live_server, "quinn")
    rosa = person(app, make_agent, browser, live_server, "rosa")

    new_decision(pat, "Adopt the four-day week?", "Proposal")
    form = pat.locator("form[data-action=create_decision]")
    # Only a proposal's settings show: no options, no dots, no times; a required share does.
    expect(form.locator("input[name='options[0]']")).to_be_hidden()
    expect(form.locator("[name=dots]")).to_be_hidden()
    expect(form.locator("input[name='slots[0][starts_at]']")).to_be_hidden()
    form.get_by_label("Required share").select_option(label="Half (50%)")
    form.get_by_label("Quorum: at least this many must take part").fill("2")
    no_axe_problems(pat, "new proposal")
    shoot(pat, "decision-new")
    decision = create(pat)
    assert pat.locator("article.decision").get_attribute("data-kind") == "consent"
    assert "No votes yet" in pat.locator(".results-panel").inner_text()

    quinn.goto(decision)
    ballot = quinn.locator("form[data-action=respond_to_proposal]")
    ballot.get_by_label("Agree", exact=True).check()
    ballot.get_by_role("button", name="Save my vote").click()
    quinn.wait_for_load_state()
    expect(quinn.locator(".your-vote")).to_contain_text("You have voted")

    rosa.goto(decision)
    ballot = rosa.locator("form[data-action=respond_to_proposal]")
    # What a block means, and that it needs a reason, is said before submitting.
    block = ballot.locator("label.stance[data-stance=block]")
    assert "A block needs a reason" in block.inner_text()
    ballot.get_by_label("Block", exact=True).check()
    reason = ballot.get_by_label("Your reason")
    assert reason.evaluate("e => e.required")  # the browser asks for it first
    ballot.get_by_role("button", name="Save my vote").click()
    assert reason.evaluate("e => e.validity.valueMissing")
    assert rosa.url.endswith(decision)
    # Past the browser's check, the server refuses it in words and keeps the choice.
    ballot.evaluate("f => { f.noValidate = true; }")
    with rosa.expect_navigation() as sent:
        ballot.get_by_role("button", name="Save my vote").click()
    assert sent.value.status == 422
    problems = rosa.locator(".ballot-problems")
    expect(problems).to_contain_text("A block needs a reason")
    said = rosa.locator("main").inner_text()
    assert "is required to block" not in said and "respond_to_proposal" not in said
    ballot = rosa.locator("form[data-action=respond_to_proposal]")
    assert ballot.get_by_label("Block", exact=True).is_checked()
    no_axe_problems(rosa, "refused block")
    shoot(rosa, "decision-consent-refused")
    ballot.get_by_label("Your reason").fill("We have not costed the cover for the fifth day.")
    ballot.get_by_role("button", name="Save my vote").click()
    rosa.wait_for_url(f"**{decision}")

    results = rosa.locator(".results-panel")
    expect(results.locator("[data-carried]")).to_have_attribute("data-carried", "no")
    assert "As it stands: not carried — 1 person blocks it" in results.inner_text()
    assert results.locator("tr[data-stance=block] td").inner_text() == "1"
    assert "We have not costed the cover" in results.locator("ul.reasons").inner_text()
    assert results.locator("tr[data-stance=agree] td").inner_text() == "1"
    assert "2 of 3 eligible took part; quorum 2 — met." in results.inner_text()
    assert "Required share 50%: 50% — met." in results.inner_text()

    close(pat, decision)
    outcome = pat.locator("section.outcome")
    expect(outcome.locator("[data-carried]")).to_have_attribute("data-carried", "no")
    assert "Not carried" in outcome.inner_text()
    no_axe_problems(pat, "closed proposal")
    shoot(pat, "decision-consent")


def test_a_ranked_choice_poll_with_an_elimination(  # type: ignore[no-untyped-def]
        app: Flask, make_agent, browser, live_server) -> None:
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    quinn = person(app, make_agent, browser, live_server, "quinn")

    new_decision(pat, "Where is the offsite?", "Ranked choice")
    form = pat.locator("form[data-action=create_decision]")
    for i, place in enumerate(("Lisbon", "Oslo", "Porto")):
        form.get_by_label(f"Option {i + 1}.").fill(place)
    decision = create(pat)

    # Pat ranks with the selects and the move buttons: Lisbon, Oslo, then swaps them.
    ballot = pat.locator("form[data-action=rank_options]")
    ballot.get_by_label("1st choice", exact=True).select_option("Lisbon")
    ballot.get_by_label("2nd choice", exact=True).select_option("Oslo")
    ballot.get_by_role("button", name="Move 2nd choice up").click()
    assert ballot.get_by_label("1st choice", exact=True).input_value() == "Oslo"
    assert ballot.get_by_label("2nd choice", exact=True).input_value() == "Lisbon"
    # An option chosen a second time swaps places instead of appearing twice.
    ballot.get_by_label("3rd choice", exact=True).select_option("Oslo")
    assert ballot.get_by_label("1st choice", exact=True).input_value() == ""
    ballot.get_by_label("1st choice", exact=True).select_option("Oslo")
    assert ballot.get_by_label("3rd choice", exact=True).input_value() == ""
    ballot.get_by_role("button", name="Save my vote").click()
    pat.wait_for_load_state()
    expect(pat.locator(".your-vote")).to_contain_text("You have voted")
    ballot = pat.locator("form[data-action=rank_options]")
    places = [ballot.get_by_label(f"{n} choice", exact=True) for n in ("1st", "2nd", "3rd")]
    assert [place.input_value() for place in places] == ["Oslo", "Lisbon", ""]

    no_axe_problems(pat, "ranked choice ballot")
    shoot(pat, "decision-ranked-choice-ballot")
    quinn.goto(decision)
    ballot = quinn.locator("form[data-action=rank_options]")
    ballot.get_by_label("1st choice", exact=True).select_option("Lisbon")
    ballot.get_by_role("button", name="Save my vote").click()
    quinn.wait_for_load_state()
    # Three more over HTTP: round 1 is Oslo 2, Lisbon 2, Porto 1; Porto's ballot moves on.
    for handle, ranking in (("rosa", ["Porto", "Oslo"]), ("sam", ["Oslo"]),
                            ("tia", ["Lisbon", "Oslo"])):
        voter = join_studio(make_agent, handle)
        assert voter.post(f"{decision}/actions/rank_options",
                          json={"ranking": ranking}).status_code == 200

    close(pat, decision)
    outcome = pat.locator("section.outcome")
    assert outcome.locator("[data-winner]").inner_text() == "Oslo"
    first = pat.locator("table.round[data-round='1']")
    assert first.locator("tr[data-option=Porto] td.fate").inner_text() == "Eliminated"
    assert first.locator("tr[data-option=Oslo] td").first.inner_text() == "2"
    assert first.locator("tr[data-option=Lisbon] td").first.inner_text() == "2"
    second = pat.locator("table.round[data-round='2']")
    assert second.locator("tr[data-option=Oslo] td").first.inner_text() == "3"
    assert second.locator("tr[data-option=Oslo] td.fate").inner_text() == "Wins"
    assert second.locator("tr[data-option=Porto]").count() == 0
    assert "Exhausted ballots" in second.inner_text()
    assert "Oslo wins in round 2 with 3 of 5 votes." in pat.locator(".results-panel").inner_text()
    no_axe_problems(pat, "closed ranked choice")
    shoot(pat, "decision-ranked-choice")


def test_a_time_poll_and_its_calendar_file(app: Flask, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True,
                 accept_downloads=True)
    quinn = person(app, make_agent, browser, live_server, "quinn")

    new_decision(pat, "When do we plan the spring?", "Time poll")
    form = pat.locator("form[data-action=create_decision]")
    expect(form.locator("input[name='options[0]']")).to_be_hidden()
    form.get_by_label("Time 1 starts").fill("2030-01-07T10:00")
    # A time without a length gets an hour.
    assert form.locator("[name='slots[0][minutes]']").input_value() == "60"
    form.get_by_label("Time 2 starts").fill("2030-01-08T14:00")
    form.locator("[name='slots[1][minutes]']").fill("90")
    decision = create(pat)
    monday, tuesday = "Mon 7 Jan 2030, 10:00–11:00 UTC", "Tue 8 Jan 2030, 14:00–15:30 UTC"

    ballot = pat.locator("form[data-action=mark_availability]")
    ballot.locator(f"fieldset[data-option='{monday}']").get_by_text("Yes").click()
    ballot.locator(f"fieldset[data-option='{tuesday}']").get_by_text("No").click()
    ballot.get_by_role("button", name="Save my vote").click()
    pat.wait_for_load_state()
    quinn.goto(decision)
    ballot = quinn.locator("form[data-action=mark_availability]")
    ballot.get_by_label(f"Yes: {monday}").check()
    ballot.get_by_label(f"Maybe: {tuesday}").check()
    ballot.get_by_role("button", name="Save my vote").click()
    quinn.wait_for_load_state()
    row = quinn.locator(f"table.results tr[data-option='{monday}']")
    assert [row.locator(f"td.{c}").inner_text() for c in ("yes", "maybe", "no")] == \
        ["2", "0", "0"]
    no_axe_problems(quinn, "open time poll")
    shoot(quinn, "decision-time-poll-ballot")

    close(pat, decision)
    outcome = pat.locator("section.outcome")
    assert outcome.locator("[data-winner]").inner_text() == monday
    with pat.expect_download() as fetched:
        outcome.get_by_role("link", name="Add to calendar").click()
    calendar = icalendar.Calendar.from_ical(open(fetched.value.path(), "rb").read())
    events = [c for c in calendar.walk() if c.name == "VEVENT"]
    assert len(events) == 1
    assert events[0].decoded("dtstart") == datetime(2030, 1, 7, 10, 0, tzinfo=ZoneInfo("UTC"))
    assert str(events[0]["summary"]) == "When do we plan the spring?"
    no_axe_problems(pat, "closed time poll")
    shoot(pat, "decision-time-poll")


def test_dots_are_counted_as_they_are_placed_and_without_javascript(  # type: ignore[no-untyped-def]
        app: Flask, make_agent, browser, live_server) -> None:
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    quinn = person(app, make_agent, browser, live_server, "quinn", java_script_enabled=False)
    new_decision(pat, "What do we fix first?", "Dot vote")
    form = pat.locator("form[data-action=create_decision]")
    for i, title in enumerate(("Heating", "Bike shed", "Wi-Fi")):
        form.get_by_label(f"Option {i + 1}.").fill(title)
    form.get_by_label("Dots each person places").fill("5")
    decision = create(pat)

    ballot = pat.locator("form[data-action=place_dots]")
    left = ballot.locator("[data-dots-left]")
    assert left.inner_text() == "5"
    ballot.get_by_label("Heating").fill("3")
    expect(left).to_have_text("2")
    ballot.get_by_label("Wi-Fi").fill("4")
    expect(ballot.locator(".dots-left")).to_contain_text("2 too many")
    assert not ballot.evaluate("f => f.checkValidity()")  # the browser holds it back
    ballot.get_by_label("Wi-Fi").fill("2")
    expect(left).to_have_text("0")
    ballot.get_by_role("button", name="Save my vote").click()
    pat.wait_for_load_state()
    assert pat.locator("table.results tr[data-option=Heating] td.dots").inner_text() == "3"
    no_axe_problems(pat, "dot vote")
    shoot(pat, "decision-dot-vote")

    # Without JavaScript the count is the server's: too many dots come back in words.
    quinn.goto(decision)
    ballot = quinn.locator("form[data-action=place_dots]")
    ballot.get_by_label("Bike shed").fill("3")
    ballot.get_by_label("Wi-Fi").fill("3")
    with quinn.expect_navigation() as sent:
        ballot.get_by_role("button", name="Save my vote").click()
    assert sent.value.status == 422
    expect(quinn.locator(".ballot-problems")).to_contain_text("Your dots: at most 5 dots in all")
    ballot = quinn.locator("form[data-action=place_dots]")
    assert ballot.get_by_label("Wi-Fi").input_value() == "3"  # kept as typed
    ballot.get_by_label("Wi-Fi").fill("2")
    ballot.get_by_role("button", name="Save my vote").click()
    quinn.wait_for_url(f"**{decision}")
    assert quinn.locator("table.results tr[data-option='Bike shed'] td.dots").inner_text() == "3"

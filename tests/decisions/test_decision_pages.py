"""A decision's HTML page for each kind, over HTTP: its own ballot, results that rank nothing
before the first vote, hidden results and anonymous ballots said in words, and a refused ballot
that names its problem as a person reads it (never a parameter's path)."""

from __future__ import annotations

import re
from typing import Any

from tests.helpers import join_studio

DECIDE = "/studios/team/decide"
FORM = "application/x-www-form-urlencoded"


def create(agent, **params: Any) -> str:  # type: ignore[no-untyped-def]
    params.setdefault("question", "Where do we meet?")
    made = agent.act(DECIDE, "create_decision", **params)
    assert made.status_code == 201, made.get_data(as_text=True)
    return str(made.get_json()["location"])


def html(agent, path: str) -> str:  # type: ignore[no-untyped-def]
    answer = agent.get(path, accept="text/html")
    assert answer.status_code == 200
    return str(answer.get_data(as_text=True))


def send_form(agent, path: str, action: str, fields: dict[str, str]):  # type: ignore[no-untyped-def]
    """A person's form post: the page comes back (422 when refused)."""
    return agent.client.post(f"{path}/actions/{action}", data=fields,
                             headers={**agent.headers("text/html"), "Content-Type": FORM})


def said(page: str) -> str:
    """The refusal's summary on top of the page, as text."""
    summary = page.split('class="error-summary"', 1)[1].split("</div>", 1)[0]
    return re.sub(r"<[^>]+>", "", summary)


def test_each_kind_draws_its_own_ballot(studio) -> None:  # type: ignore[no-untyped-def]
    options = ["Café", "Park"]
    expected = {
        "consent": ({}, 'name="stance" value="block"'),
        "sense_check": ({}, 'name="stance" value="looks_good"'),
        "single_choice": ({"options": options}, 'name="option_title" value="Park"'),
        "score": ({"options": options}, 'name="scores[1][score]" value="5"'),
        "dot_vote": ({"options": options, "dots": 4}, 'data-dots-total="4"'),
        "ranked_choice": ({"options": options}, '<label for="rank-1">2nd choice</label>'),
        "time_poll": ({"slots": [{"starts_at": "2030-01-07T10:00", "minutes": 30}]},
                      'name="slots[0][answer]" value="maybe"'),
    }
    for kind, (settings, drawn) in expected.items():
        page = html(studio, create(studio, kind=kind, **settings))
        assert drawn in page, kind
        assert 'placeholder="JSON"' not in page, kind  # no generic JSON field for people


def test_no_places_before_the_first_vote(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    path = create(studio, kind="single_choice", options=["Café", "Park"])
    page = html(studio, path)
    assert "No votes yet." in page and "data-place" not in page
    assert "0 of 1 eligible took part." in page
    bob = join_studio(make_agent, "bob")
    assert bob.post(f"{path}/actions/choose", json={"option_title": "Park"}).status_code == 200
    page = html(studio, path)
    assert 'data-option="Park" class="leading" data-place="1"' in page
    assert "1 of 2 eligible took part." in page


def test_hidden_results_and_anonymous_ballots_say_so(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    path = create(studio, kind="single_choice", options=["Café", "Park"], anonymous=True,
                  hide_results=True)
    bob = join_studio(make_agent, "bob")
    assert bob.post(f"{path}/actions/choose", json={"option_title": "Park"}).status_code == 200
    page = html(bob, path)
    assert "The results are hidden until the decision closes" in page
    assert "table class=\"results\"" not in page
    assert "nobody sees <em>how</em>" in page and "cannot be changed once cast" in page
    assert "You have cast your ballot." in page
    assert 'data-action="choose"' not in page  # an anonymous ballot is not changed
    assert "1 of 2 eligible took part." in page


def test_a_refused_ballot_says_its_problem_in_words(studio) -> None:  # type: ignore[no-untyped-def]
    ranked = create(studio, kind="ranked_choice", options=["Café", "Park"])
    refused = send_form(studio, ranked, "rank_options",
                        {"ranking[0]": "Park", "ranking[1]": "Park"})
    assert refused.status_code == 422
    page = refused.get_data(as_text=True)
    assert "Your 2nd choice: " in said(page) and "ranking[" not in said(page)
    assert '<option value="Park" selected>' in page  # what was chosen comes back

    scored = create(studio, kind="score", options=["Café", "Park"])
    refused = send_form(studio, scored, "score_options",
                        {"scores[0][option_title]": "Park", "scores[0][score]": "9"})
    assert refused.status_code == 422
    page = refused.get_data(as_text=True)
    assert "The score for “Park”" in said(page) and "scores[" not in said(page)

    proposal = create(studio, kind="consent")
    refused = send_form(studio, proposal, "respond_to_proposal",
                        {"stance": "block", "reason": " "})
    assert refused.status_code == 422
    page = refused.get_data(as_text=True)
    assert "A block needs a reason" in said(page) and "is required to block" not in page
    assert 'value="block" required checked' in page


def test_a_closed_time_poll_offers_its_calendar_file(studio) -> None:  # type: ignore[no-untyped-def]
    path = create(studio, kind="time_poll",
                  slots=[{"starts_at": "2030-01-07T10:00", "minutes": 60}])
    assert studio.post(f"{path}/actions/mark_availability", json={
        "slots": [{"option_title": "Mon 7 Jan 2030, 10:00–11:00 UTC", "answer": "yes"}]}
    ).status_code == 200
    assert "calendar.ics" not in html(studio, path)  # nothing is chosen while it is open
    assert studio.act(path, "close_decision").status_code == 200
    page = html(studio, path)
    assert f'href="{path}/calendar.ics" download>Add to calendar</a>' in page
    assert 'data-winner="Mon 7 Jan 2030, 10:00–11:00 UTC"' in page


def test_reasons_are_shown_with_their_voter_unless_anonymous(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    open_one = create(studio, kind="consent")
    secret = create(studio, kind="consent", anonymous=True)
    for path in (open_one, secret):
        assert bob.post(f"{path}/actions/respond_to_proposal",
                        json={"stance": "block", "reason": "Not in this budget"}
                        ).status_code == 200
    page = html(studio, open_one)
    assert "Reasons given" in page and "Not in this budget" in page
    assert '<a href="/u/bob">Bob</a> · Block' in page
    page = html(studio, secret)
    assert "Reasons given" not in page and "Not in this budget" not in page

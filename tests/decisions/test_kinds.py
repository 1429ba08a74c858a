"""Every kind of decision over HTTP in Markdown and JSON: created with its settings, voted on with
its own action, voted again, refused with every problem's path, counted and closed."""

from __future__ import annotations

from typing import Any

from tests.helpers import action_names, join_studio, parse_md

DECIDE = "/studios/team/decide"


def create(agent, **params: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    params.setdefault("question", "Where do we meet?")
    made = agent.act(DECIDE, "create_decision", **params)
    assert made.status_code == 201, made.get_data(as_text=True)
    return made.get_json()


def cast(agent, path: str, name: str, **params: Any):  # type: ignore[no-untyped-def]
    return agent.post(f"{path}/actions/{name}", json=params)


def page(agent, path: str) -> tuple[dict[str, Any], str]:  # type: ignore[no-untyped-def]
    return parse_md(agent.get(path).get_data(as_text=True))


def section(body: str, heading: str) -> str:
    return body.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def table(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("| ---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]


def test_each_kind_offers_only_its_own_ballot(studio) -> None:  # type: ignore[no-untyped-def]
    expected = {"acceptance": "vote", "consent": "respond_to_proposal",
                "sense_check": "check_sense", "single_choice": "choose",
                "score": "score_options", "dot_vote": "place_dots",
                "ranked_choice": "rank_options"}
    ballots = set(expected.values()) | {"mark_availability"}
    for kind, name in expected.items():
        options = [] if kind in ("consent", "sense_check") else ["Café", "Park"]
        made = create(studio, kind=kind, options=options)
        assert made["next"][0]["name"] == name, made
        offered = set(action_names(studio.get(made["location"]).get_data(as_text=True)))
        assert offered & ballots == {name}, kind
        assert ("add_option" in offered) == (kind not in ("consent", "sense_check")), kind
        other = next(iter(ballots - {name}))
        refused = cast(studio, made["location"], other)
        assert refused.status_code == 409 and "this decision is a" in refused.get_data(
            as_text=True), (kind, other)


def test_consent_block_needs_a_reason_and_revote_replaces(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = create(studio, kind="consent", question="Adopt the policy?",
                  required_share=0.6)["location"]
    refused = cast(bob, path, "respond_to_proposal", stance="block")
    assert refused.status_code == 422
    assert refused.get_json()["error"]["errors"] == [
        {"param": "reason", "path": "reason", "message": "reason: is required to block"}]
    wrong = cast(bob, path, "respond_to_proposal", stance="maybe")
    assert wrong.status_code == 422 and wrong.get_json()["error"]["errors"][0]["param"] == \
        "stance"
    assert cast(bob, path, "respond_to_proposal", stance="block",
                reason="It breaks our budget").status_code == 200
    assert cast(studio, path, "respond_to_proposal", stance="agree").status_code == 200
    again = cast(bob, path, "respond_to_proposal", stance="disagree")
    assert again.status_code == 200 and again.get_json()["result"]["replaced"] is True
    _front, body = page(studio, path)
    stances = dict((row[0], int(row[1])) for row in table(section(body, "Current results")))
    assert stances == {"agree": 1, "abstain": 0, "disagree": 1, "block": 0}
    assert "2 of 2 eligible took part." in body
    assert "Required share 60%: 50% — not met." in body


def test_refusals_name_every_problem_with_its_path(studio) -> None:  # type: ignore[no-untyped-def]
    made = create(studio, kind="score", options=["Café", "Park", "Office"])
    refused = cast(studio, made["location"], "score_options", scores=[
        {"option_title": "Café", "score": 4}, {"option_title": "Beach", "score": 2},
        {"option_title": "Café", "score": 1}, {"option_title": "Park", "score": 9}])
    assert refused.status_code == 422
    paths = [e.get("path") for e in refused.get_json()["error"]["errors"]]
    assert paths == ["scores[3].score"] or {"scores[1].option_title",
                                             "scores[2].option_title"} <= set(paths), paths
    # The schema's bound (0..5) is read first, at the door; the titles then, all at once.
    refused = cast(studio, made["location"], "score_options", scores=[
        {"option_title": "Café", "score": 4}, {"option_title": "Beach", "score": 2},
        {"option_title": "Café", "score": 1}])
    paths = [e.get("path") for e in refused.get_json()["error"]["errors"]]
    assert paths == ["scores[1].option_title", "scores[2].option_title"], paths
    dots = create(studio, kind="dot_vote", dots=5, options=["Café", "Park"])["location"]
    refused = cast(studio, dots, "place_dots", dots=[{"option_title": "Café", "dots": 4},
                                                     {"option_title": "Park", "dots": 3}])
    assert refused.status_code == 422
    assert refused.get_json()["error"]["errors"][0]["message"] == \
        "dots: at most 5 dots in all (placed 7)"


def test_create_refuses_every_bad_setting_at_once(studio) -> None:  # type: ignore[no-untyped-def]
    # What the schemas allow, refused by the service, every problem in one refusal.
    refused = studio.act(DECIDE, "create_decision", question=" ", kind="consent",
                         options=["A"], dots=3, none_of_the_above=True, slots=[],
                         voters={"handles": ["nobody"]}, proposers={"role": "admin"})
    assert refused.status_code == 422
    errors = refused.get_json()["error"]["errors"]
    named = {e.get("path") or e["param"] for e in errors}
    assert named == {"question", "options", "dots", "none_of_the_above", "slots",
                     "voters.handles[0]", "proposers"}, errors
    refused = studio.act(DECIDE, "create_decision", question="q", kind="time_poll", slots=[
        {"starts_at": "2000-01-01T10:00", "minutes": 30},
        {"starts_at": "soon", "minutes": 30}])
    assert {e.get("path") for e in refused.get_json()["error"]["errors"]} == {
        "slots[0].starts_at", "slots[1].starts_at"}
    refused = studio.act(DECIDE, "create_decision", question="q", kind="acceptance",
                         anonymous=True, hide_results=True)
    assert {e["param"] for e in refused.get_json()["error"]["errors"]} == {"anonymous",
                                                                          "hide_results"}
    refused = studio.act(DECIDE, "create_decision", question="q", kind="acceptance",
                         required_share=0.5, quorum_share=0)
    assert {e["param"] for e in refused.get_json()["error"]["errors"]} == {"required_share",
                                                                          "quorum_share"}
    refused = studio.act(DECIDE, "create_decision", question="q", kind="consent",
                         required_share=0)
    assert refused.get_json()["error"]["errors"] == [
        {"param": "required_share", "message": "must be a share above 0 and at most 1 (0.5: half)"}]


def test_ranked_choice_counts_rounds_and_closes_with_the_winner(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    voters = [studio] + [join_studio(make_agent, h) for h in ("bob", "carol", "dave", "erin")]
    path = create(studio, kind="ranked_choice", options=["Café", "Park", "Office"])["location"]
    rankings = [["Café", "Park"], ["Park", "Café"], ["Office", "Park"], ["Café"],
                ["Park", "Office"]]
    for agent, ranking in zip(voters, rankings, strict=True):
        assert cast(agent, path, "rank_options", ranking=ranking).status_code == 200
    _front, body = page(studio, path)
    assert "### Rounds" in body and "Office" in section(body, "Current results")
    assert studio.act(path, "close_decision").status_code == 200
    _front, body = page(studio, path)
    outcome = section(body, "Outcome")
    assert "Park" in outcome and "5 of 5 eligible took part." in outcome
    # The people told of the close read the winner too.
    told = voters[1].get("/inbox").get_data(as_text=True)
    assert "closed (@alice closed it): Park" in told, told


def test_eligibility_and_quorum(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    path = create(studio, kind="single_choice", options=["Tea", "Coffee"],
                  voters={"handles": ["alice", "bob"]}, proposers={"role": "admin"},
                  quorum=2)["location"]
    assert "choose" not in action_names(carol.get(path).get_data(as_text=True))
    refused = cast(carol, path, "choose", option_title="Tea")
    assert refused.status_code == 403 and "the 2 people named" in refused.get_data(as_text=True)
    assert carol.act(path, "add_option", title="Water").status_code == 403
    assert bob.act(path, "add_option", title="Water").status_code == 403
    assert studio.act(path, "add_option", title="Water").status_code == 201
    assert cast(bob, path, "choose", option_title="Tea").status_code == 200
    _front, body = page(studio, path)
    assert "1 of 2 eligible took part; quorum 2 — not met." in body
    assert cast(studio, path, "choose", option_title="Coffee").status_code == 200
    assert "2 of 2 eligible took part; quorum 2 — met." in page(studio, path)[1]


def test_hidden_results_until_close(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = create(studio, kind="dot_vote", dots=3, options=["Tea", "Coffee"],
                  hide_results=True)["location"]
    assert cast(bob, path, "place_dots", dots=[{"option_title": "Coffee", "dots": 3}]
                ).status_code == 200
    for accept in ("text/markdown", "text/html"):
        shown = bob.get(path, accept=accept).get_data(as_text=True)
        assert "Results are hidden until the decision closes." in shown
        assert "Coffee wins" not in shown and "Coffee 3" not in shown
    assert studio.act(path, "close_decision").status_code == 200
    results = table(section(page(bob, path)[1], "Final results"))
    assert results[0][1] == "Coffee" and results[0][2] == "3"


def test_time_poll_slots_and_calendar(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    import icalendar

    bob = join_studio(make_agent, "bob")
    made = create(studio, kind="time_poll", question="When do we meet?", slots=[
        {"starts_at": "2030-01-07T10:00", "minutes": 60},
        {"starts_at": "2030-01-08T14:30", "minutes": 90}])
    path = made["location"]
    assert made["next"][0]["name"] == "mark_availability"
    first, second = made["result"]["options"]
    assert first == "Mon 7 Jan 2030, 10:00–11:00 UTC", first
    added = studio.act(path, "add_slot", starts_at="2030-01-09T09:00", minutes=30)
    assert added.status_code == 201
    assert studio.act(path, "add_option", title="Whenever").status_code == 409
    assert cast(studio, path, "mark_availability", slots=[
        {"option_title": first, "answer": "maybe"},
        {"option_title": second, "answer": "yes"}]).status_code == 200
    assert cast(bob, path, "mark_availability", slots=[
        {"option_title": second, "answer": "yes"}]).status_code == 200
    assert studio.get(f"{path}/calendar.ics").status_code == 409  # not chosen yet
    assert studio.act(path, "close_decision").status_code == 200
    got = studio.get(f"{path}/calendar.ics")
    assert got.status_code == 200 and got.mimetype == "text/calendar"
    calendar = icalendar.Calendar.from_ical(got.get_data())
    (event,) = [c for c in calendar.walk("VEVENT")]
    assert str(event["SUMMARY"]) == "When do we meet?"
    assert event.decoded("DTSTART").isoformat() == "2030-01-08T14:30:00+00:00"
    assert event.decoded("DTEND").isoformat() == "2030-01-08T16:00:00+00:00"


def test_score_sense_check_and_none_of_the_above(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = create(studio, kind="score", options=["Tea", "Coffee"])["location"]
    assert cast(studio, path, "score_options", scores=[{"option_title": "Tea", "score": 5},
                                                       {"option_title": "Coffee", "score": 1}]
                ).status_code == 200
    assert cast(bob, path, "score_options", scores=[{"option_title": "Coffee", "score": 3}]
                ).status_code == 200
    rows = table(section(page(studio, path)[1], "Current results"))
    assert rows == [["1", "Tea", "5", "1"], ["2", "Coffee", "4", "2"]], rows
    # Once a ballot names the options, none of them changes.
    assert studio.act(path, "update_option", option_title="Tea", new_title="Green tea"
                      ).status_code == 409
    refused = cast(bob, path, "score_options", none_of_the_above=True)
    assert refused.status_code == 422
    assert refused.get_json()["error"]["errors"][0]["path"] == "none_of_the_above"

    poll = create(studio, kind="single_choice", options=["Tea", "Coffee"],
                  none_of_the_above=True)["location"]
    assert cast(bob, poll, "choose", none_of_the_above=True).status_code == 200
    assert cast(studio, poll, "choose", option_title="Tea").status_code == 200
    assert "None of the above: 1." in page(studio, poll)[1]
    both = cast(bob, poll, "choose", option_title="Tea", none_of_the_above=True)
    assert both.status_code == 422

    check = create(studio, kind="sense_check", question="Does this plan hold?")["location"]
    assert cast(bob, check, "check_sense", stance="concerned", reason="Too fast").status_code \
        == 200
    stances = dict((row[0], int(row[1])) for row in table(section(page(studio, check)[1],
                                                                  "Current results")))
    assert stances == {"looks good": 0, "not sure": 0, "concerned": 1}

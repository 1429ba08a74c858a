"""Decisions over HTTP in Markdown and JSON: options, votes (single and batch), results, closing,
settings and pins."""

from __future__ import annotations

import json
import re

from tests.helpers import action_names, join_studio, parse_md


def new_decision(agent, **params):  # type: ignore[no-untyped-def]
    params.setdefault("question", "Where do we meet?")
    r = agent.act("/studios/team/decide", "create_decision", **params)
    assert r.status_code == 201, r.get_data(as_text=True)
    return r.json["location"]


def add(agent, path: str, *titles: str) -> None:  # type: ignore[no-untyped-def]
    for title in titles:
        r = agent.act(path, "add_option", title=title)
        assert r.status_code == 201, r.get_data(as_text=True)


def vote(agent, path: str, **params):  # type: ignore[no-untyped-def]
    # Not agent.act: its own ``accept`` keyword is the Accept header, and vote has an accept.
    return agent.post(f"{path}/actions/vote", json=params)


def results(agent, path: str) -> list[tuple[str, int, int]]:  # type: ignore[no-untyped-def]
    """(title, accepted, preferred) rows of the results table in the Markdown page."""
    body = parse_md(agent.get(path).get_data(as_text=True))[1]
    section = body.split("results\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            rows.append((cells[1], int(cells[2]), int(cells[3])))
    return rows


def test_create_page_and_decision_page_in_markdown(studio) -> None:  # type: ignore[no-untyped-def]
    page = studio.get("/studios/team/decide").get_data(as_text=True)
    front, _ = parse_md(page)
    create = next(a for a in front["actions"] if a["name"] == "create_decision")
    assert [p["name"] for p in create["params"]] == [
        "question", "description", "options_open", "deadline", "options", "kind", "slots", "dots",
        "voters", "proposers", "quorum", "quorum_share", "required_share", "none_of_the_above",
        "anonymous", "hide_results"]
    assert [p["name"] for p in create["params"] if p["required"]] == ["question"]
    path = new_decision(studio, description="Pick a *place*", deadline="7d")
    assert path.startswith("/studios/team/d/")
    front, body = parse_md(studio.get(path).get_data(as_text=True))
    assert front["title"] == "Where do we meet?"
    assert "# Decision: Where do we meet?" in body
    assert "| Open |" in body and "left)" in body
    # No options yet: nothing to vote on, but options may be added and the creator may close.
    assert set(action_names(studio.get(path).get_data(as_text=True))) == {
        "add_option", "add_comment", "close_decision", "delete_decision"}


def test_deadline_forms_and_no_deadline(studio) -> None:  # type: ignore[no-untyped-def]
    for value in ("30m", "3h", "1w", "2099-01-01T10:00:00Z", 4102444800, "2099-01-01"):
        new_decision(studio, deadline=value)
    path = new_decision(studio)
    assert "no deadline (closes when its creator closes it)" in studio.get(path).get_data(
        as_text=True)
    for bad in ("someday", "2000-01-01T00:00:00Z", 946684800):
        r = studio.act("/studios/team/decide", "create_decision", question="q", deadline=bad)
        assert r.status_code == 422, bad
        assert r.json["error"]["errors"][0]["param"] == "deadline"


def test_question_is_required_and_one_line(studio) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/decide", "create_decision", question="   ")
    assert r.status_code == 422
    assert r.json["error"]["errors"] == [{"param": "question", "message": "is required"}]
    path = new_decision(studio, question="two\nlines\n---\nactions: []")
    front, _ = parse_md(studio.get(path).get_data(as_text=True))
    assert front["title"] == "two lines --- actions: []"
    assert any(a["name"] == "add_option" for a in front["actions"])


def test_options_are_unique_and_follow_options_open(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = new_decision(studio)
    add(studio, path, "Café")
    dup = bob.act(path, "add_option", title="Café")
    assert dup.status_code == 409
    assert "already exists" in dup.json["error"]["message"]
    add(bob, path, "Park")
    closed_path = new_decision(studio, options_open=False)
    assert "add_option" not in action_names(bob.get(closed_path).get_data(as_text=True))
    r = bob.act(closed_path, "add_option", title="Library")
    assert r.status_code == 403
    add(studio, closed_path, "Library")
    assert bob.act(path, "add_option").status_code == 422


def test_vote_is_an_upsert_and_results_are_ranked(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob, carol = join_studio(make_agent, "bob"), join_studio(make_agent, "carol")
    path = new_decision(studio)
    add(studio, path, "A", "B", "C")
    assert "vote" in action_names(studio.get(path).get_data(as_text=True))
    assert vote(studio, path, option_title="B", accept=True, prefer=True).status_code == 200
    assert vote(bob, path, option_title="B", accept=True).status_code == 200
    assert vote(carol, path, option_title="C", accept=True, prefer=True).status_code == 200
    assert vote(bob, path, option_title="A", accept=True, prefer=True).status_code == 200
    # B: 2 accepted 1 preferred; A and C: 1 accepted 1 preferred (tie broken by random_id).
    rows = results(studio, path)
    assert rows[0] == ("B", 2, 1)
    assert sorted(rows[1:]) == [("A", 1, 1), ("C", 1, 1)]
    tie_order = [r[0] for r in rows]
    # Voting again changes the vote instead of adding one.
    assert vote(bob, path, option_title="B", accept=False).status_code == 200
    assert vote(bob, path, option_title="B", accept=False).status_code == 200
    rows = results(studio, path)
    assert ("B", 1, 1) in rows
    assert sum(r[1] for r in rows) == 3
    # The tiebreak is fixed per option: the same question asked again gives the same order.
    assert [r[0] for r in results(studio, path) if r[0] != "B"] == [t for t in tie_order
                                                                   if t != "B"]
    body = parse_md(bob.get(path).get_data(as_text=True))[1]
    assert "* [x] ✅ [x] ⭐ A" in body and "* [ ] ✅ [ ] ⭐ B" in body
    assert "## Voters (3)" in body
    # The options stay in the order they were added, whatever the ranking (B leads it).
    assert re.findall(r"^\* \[.\] ✅ \[.\] ⭐ (\S+)$", body, re.M) == ["A", "B", "C"]


def test_batch_votes_and_the_either_or_rule(studio) -> None:  # type: ignore[no-untyped-def]
    path = new_decision(studio)
    add(studio, path, "A", "B")
    r = vote(studio, path, votes=[{"option_title": "A", "accept": True},
                                        {"option_title": "B", "accept": True, "prefer": True}])
    assert r.status_code == 200, r.get_data(as_text=True)
    assert results(studio, path) == [("B", 1, 1), ("A", 1, 0)]
    both = vote(studio, path, option_title="A", votes=[{"option_title": "A"}])
    assert both.status_code == 422
    assert {e["param"] for e in both.json["error"]["errors"]} == {"option_title"}
    neither = vote(studio, path, accept=True)
    assert neither.status_code == 422
    assert {e["param"] for e in neither.json["error"]["errors"]} == {"option_title", "votes"}
    bad_item = vote(studio, path, votes=[{"option_title": "A", "acept": True}])
    assert bad_item.status_code == 422
    assert bad_item.json["error"]["errors"][0]["param"] == "votes"
    twice = vote(studio, path, votes=[{"option_title": "A"}, {"option_title": "A"}])
    assert twice.status_code == 422
    unknown = vote(studio, path, option_title="Z", accept=True)
    assert unknown.status_code == 422
    assert "'A'" in unknown.json["error"]["errors"][0]["message"]
    # A failed batch changes nothing: all or none.
    r = vote(studio, path, votes=[{"option_title": "A", "accept": False},
                                        {"option_title": "nope", "accept": True}])
    assert r.status_code == 422
    assert results(studio, path) == [("B", 1, 1), ("A", 1, 0)]


def voting_section(agent, path: str) -> str | None:  # type: ignore[no-untyped-def]
    """The Markdown page's "## Voting" section, or None when the page has none."""
    body = parse_md(agent.get(path).get_data(as_text=True))[1]
    if "\n## Voting\n" not in body:
        return None
    return body.split("\n## Voting\n", 1)[1].split("\n## ", 1)[0]


def fenced(section: str, info: str) -> str:
    found = re.search(rf"^(`{{3,}}){info}\n(.*?)\n\1$", section, re.S | re.M)
    assert found, section
    return found.group(2)


def test_page_shows_a_batch_vote_an_agent_can_send_as_is(studio) -> None:  # type: ignore[no-untyped-def]
    path = new_decision(studio)
    assert voting_section(studio, path) is None  # nothing to vote on yet
    add(studio, path, "Café `Zed`", "Office", "Park", "Home")
    section = voting_section(studio, path)
    assert section is not None and "`votes`" in section
    # The HTTP example names this decision's path and its real options, and runs unchanged.
    request_line, _, body = fenced(section, "http").partition("\n")
    assert request_line == f"POST {path}/actions/vote"
    params = json.loads(body)
    assert [v["option_title"] for v in params["votes"]] == ["Café `Zed`", "Office", "Park"]
    r = studio.post(request_line.split(" ", 1)[1], json=params)
    assert r.status_code == 200, r.get_data(as_text=True)
    accepted = {v["option_title"] for v in params["votes"] if v["accept"]}
    preferred = {v["option_title"] for v in params["votes"] if v.get("prefer")}
    rows = results(studio, path)
    assert {t for t, a, _ in rows if a} == {t.replace("`", "\\`") for t in accepted}
    assert {t for t, _, p in rows if p} == {t.replace("`", "\\`") for t in preferred}
    assert sum(a for _, a, _ in rows) == 2  # two options accepted in the one call
    # A repeat has no second effect.
    assert studio.post(f"{path}/actions/vote", json=params).status_code == 200
    assert results(studio, path) == rows
    # The MCP form is the same call.
    assert json.loads(fenced(section, "json")) == {"action": "vote", "path": path,
                                                   "params": params}
    # The action's description says so too.
    described = studio.get(f"{path}/actions/vote").get_data(as_text=True)
    assert "several options in one call" in described and '"examples"' in described
    # Once closed, no vote is offered and the example goes.
    assert studio.act(path, "close_decision").status_code == 200
    assert voting_section(studio, path) is None


def test_closed_decision_refuses_options_and_votes(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = new_decision(studio)
    add(studio, path, "A")
    assert vote(bob, path, option_title="A", accept=True).status_code == 200
    assert bob.act(path, "close_decision").status_code == 403
    assert studio.act(path, "close_decision").status_code == 200
    for agent, extra in ((studio, ["delete_decision", "write_outcome"]), (bob, [])):
        names = action_names(agent.get(path).get_data(as_text=True))
        assert names == ["add_comment", *extra]
    assert vote(bob, path, option_title="A", accept=False).status_code == 409
    assert vote(bob, path, votes=[{"option_title": "A"}]).status_code == 409
    assert studio.act(path, "add_option", title="B").status_code == 409
    assert studio.act(path, "close_decision").status_code == 409
    assert results(studio, path) == [("A", 1, 0)]
    body = parse_md(studio.get(path).get_data(as_text=True))[1]
    assert "## Final results" in body and "| Closed |" in body
    assert bob.act(path, "add_comment", text="Good call").status_code == 201


def test_settings_creator_only_and_closed_deadline_is_fixed(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = new_decision(studio, deadline="2d")
    settings = f"{path}/settings"
    assert action_names(bob.get(settings).get_data(as_text=True)) == ["pin_decision"]
    assert bob.act(settings, "update_decision_settings", question="x").status_code == 403
    r = studio.act(settings, "update_decision_settings", question="Where, really?",
                   options_open=False, deadline="none")
    assert r.status_code == 200, r.get_data(as_text=True)
    front, body = parse_md(studio.get(path).get_data(as_text=True))
    assert front["title"] == "Where, really?"
    assert "added by the creator only" in body and "no deadline" in body
    assert studio.act(path, "close_decision").status_code == 200
    r = studio.act(settings, "update_decision_settings", deadline="3d")
    assert r.status_code == 409
    assert "closed" in r.json["error"]["message"]
    assert studio.act(settings, "update_decision_settings", question="Final").status_code == 200
    # Pins: pin, then only unpin is offered, and the studio home lists it.
    assert bob.act(settings, "pin_decision").status_code == 200
    assert action_names(bob.get(settings).get_data(as_text=True)) == ["unpin_decision"]
    home = studio.get("/studios/team").get_data(as_text=True)
    assert f"* decision: [Final]({path})" in home
    assert bob.act(settings, "unpin_decision").status_code == 200


def test_html_form_vote_and_page(studio, client, app) -> None:  # type: ignore[no-untyped-def]
    path = new_decision(studio)
    add(studio, path, "A", "B")
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    assert 'class="ballot"' in html and 'data-action="add_option"' in html
    assert "Results so far" in html
    # JSON view of the page carries the same actions as the Markdown frontmatter.
    as_json = studio.get(path, accept="application/json").json
    assert [a["name"] for a in as_json["actions"]] == action_names(
        studio.get(path).get_data(as_text=True))


def test_unknown_decision_is_404_and_non_members_are_403(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    path = new_decision(studio)
    assert studio.get("/studios/team/d/deadbeef").status_code == 404
    stranger = make_agent("stranger")
    assert stranger.get(path).status_code == 403
    assert vote(stranger, path, option_title="A").status_code == 403


def test_ties_follow_the_random_draw_fixed_per_option(studio, app) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.collab import Option

    path = new_decision(studio)
    add(studio, path, "A", "B", "C", "D")
    with app.app_context():  # make the draw known: B > C > A; D ranks by votes anyway
        for title, draw in (("A", 1), ("B", 30), ("C", 20), ("D", 99)):
            db.session.query(Option).filter(Option.title == title).one().random_id = draw
        db.session.commit()
    assert vote(studio, path, votes=[{"option_title": t, "accept": True}
                                     for t in ("A", "B", "C")]).status_code == 200
    assert [r[0] for r in results(studio, path)] == ["B", "C", "A", "D"]
    assert vote(studio, path, option_title="A", accept=True, prefer=True).status_code == 200
    assert [r[0] for r in results(studio, path)] == ["A", "B", "C", "D"]
    html = studio.get(path, accept="text/html").get_data(as_text=True)
    rows = html.split('<table class="results">', 1)[1]
    assert [rows.index(f'data-option="{t}"') for t in "ABCD"] == sorted(
        rows.index(f'data-option="{t}"') for t in "ABCD")


def test_no_votes_ranks_nothing_and_the_table_has_no_column_of_equal_numbers(studio) -> None:  # type: ignore[no-untyped-def]
    path = new_decision(studio, options=["Park", "Library", "Cafe"])
    page = studio.get(path).get_data(as_text=True)
    assert "No votes yet: nothing is ranked until someone votes." in page
    assert results(studio, path) == []
    assert vote(studio, path, option_title="Library", accept=True).status_code == 200
    page = studio.get(path).get_data(as_text=True)
    assert "| # | Option | ✅ Accepted | ⭐ Preferred |\n" in page and "No votes yet" not in page
    assert results(studio, path)[0] == ("Library", 1, 0)

"""Anonymous ballots: who voted is shown, how is stored unlinked (no voter, representative or
time on the ballot; fresh random ids each time the ballots are rewritten), a cast ballot cannot
be changed; and after votes over HTTP and MCP, no row of any table links a voter to what they
chose. A vote cast in a representation session shows "Helper for Alice"."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from tests.grants.test_call_log import HELPER_GRANTS
from tests.grants.test_representation import _agent
from tests.helpers import action_names, join_studio, parse_md
from tests.mcp.clients import over

DECIDE = "/studios/team/decide"
OPTIONS = ["Café", "Office", "Park"]


def _poll(alice: Any, **settings: Any) -> str:
    made = alice.act(DECIDE, "create_decision", question="Where do we meet?",
                     kind="ranked_choice", options=OPTIONS, **settings)
    assert made.status_code == 201, made.get_json()
    return str(made.get_json()["location"])


def _ballots(app: Flask) -> list[Any]:
    from app.extensions import db
    from app.models.collab import DecisionBallot

    with app.app_context():
        rows = list(db.session.execute(select(DecisionBallot)).scalars())
        found = [(b.id, b.user_id, b.representative_id, b.created_at, b.updated_at, b.choices)
                 for b in rows]
        db.session.rollback()
        return found


def _dump(app: Flask) -> list[str]:
    """Every row of every table, as text (ids in both their forms)."""
    from app.extensions import db

    out = []
    with app.app_context():
        for table in db.metadata.sorted_tables:
            for row in db.session.execute(select(table)).all():
                values = []
                for value in row:
                    values.append(str(value))
                    if isinstance(value, uuid.UUID):
                        values.append(value.hex)
                out.append(f"{table.name}: " + json.dumps(values, ensure_ascii=False))
        db.session.rollback()
    return out


def test_no_row_links_a_voter_to_their_choices(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                               studio, make_agent) -> None:
    from app.extensions import db
    from app.models import User
    from app.models.collab import Option

    alice = studio
    path = _poll(alice, anonymous=True)
    bob, carol, dave = (join_studio(make_agent, h) for h in ("bob", "carol", "dave"))
    rankings = {"bob": ["Park", "Café"], "carol": ["Office"]}
    assert bob.post(f"{path}/actions/rank_options", json={"ranking": rankings["bob"]}
                    ).status_code == 200
    first_ids = {row[0] for row in _ballots(app)}
    assert carol.post(f"{path}/actions/rank_options", json={"ranking": rankings["carol"]}
                      ).status_code == 200
    second = _ballots(app)
    # Rewritten as a whole: no id survives, so no row says which ballot came last.
    assert first_ids.isdisjoint(row[0] for row in second)
    assert all(row[1:5] == (None, None, None, None) for row in second), second

    async def dave_votes(client: Any) -> None:
        bad = await client.call_tool("execute_action", {
            "action": "rank_options", "path": path, "params": {"ranking": ["Café", "Beach"]}})
        assert bad.is_error  # refused: its message names the ballot, and is kept nowhere
        done = await client.call_tool("execute_action", {
            "action": "rank_options", "path": path, "params": {"ranking": ["Café", "Park"]}})
        assert not done.is_error, done
        assert "Café" not in json.dumps(done.structured_content, ensure_ascii=False)

    over("http", "auto", "2026-07-28", request, app, dave.token, dave_votes)
    rankings["dave"] = ["Café", "Park"]

    # Cast once: not offered again, refused if tried, and the page says why.
    assert "rank_options" not in action_names(bob.get(path).get_data(as_text=True))
    again = bob.post(f"{path}/actions/rank_options", json={"ranking": ["Office"]})
    assert again.status_code == 409 and "cannot be changed" in again.get_data(as_text=True)
    _front, body = parse_md(bob.get(path).get_data(as_text=True))
    assert "It cannot be changed" in body and "Your ballot: `" not in body
    voters = body.split("## Voters (3)\n", 1)[1].split("\n## ", 1)[0]
    assert all(f"(/u/{h})" in voters for h in ("bob", "carol", "dave"))
    assert "Office" in body.split("## Current results", 1)[1]  # counted all the same

    with app.app_context():
        people = {u.handle: (str(u.id), u.id.hex) for u in db.session.scalars(
            select(User).where(User.handle.in_(["bob", "carol", "dave"])))}
        options = {o.title: (str(o.id), o.id.hex) for o in db.session.scalars(select(Option))}
        db.session.rollback()
    for line in _dump(app):
        for handle, ids in people.items():
            if not any(i in line for i in ids) and f'"{handle}"' not in line:
                continue
            named = [t for t, keys in options.items() if t in line or any(k in line for k in keys)]
            assert not named, (handle, line)


def test_a_vote_for_alice_shows_both(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    path = _poll(alice)
    acceptance = alice.act(DECIDE, "create_decision", question="Lunch?",
                           options=["Soup", "Salad"]).get_json()["location"]
    helper = _agent(app, alice)
    granted = alice.act("/u/alice/settings/grants", "grant_actions", studio="team",
                        member="helper", actions="vote,rank_options", until="1d")
    assert granted.status_code == 201, granted.get_json()
    assert helper.act(HELPER_GRANTS, "start_representation", principal="alice",
                      studio="team").status_code == 201
    assert helper.post(f"{path}/actions/rank_options", json={"ranking": ["Park"]}
                       ).status_code == 200
    assert helper.post(f"{acceptance}/actions/vote", json={
        "votes": [{"option_title": "Soup", "accept": True}]}).status_code == 200
    for where in (path, acceptance):
        body = alice.get(where).get_data(as_text=True)
        assert "* [Helper](/u/helper) for [Alice](/u/alice)" in body, body
        html = alice.get(where, accept="text/html").get_data(as_text=True)
        assert '<a href="/u/helper">Helper</a> for <a href="/u/alice">Alice</a>' in html

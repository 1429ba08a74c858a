"""Many agents at once on PostgreSQL: real threads, each with its own client, app context and
database session, hitting the HTTP actions together. Totals are checked against what the
threads did: no lost write, no duplicate participant, no limit exceeded, no double count."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest


@pytest.fixture
def pg(app):  # type: ignore[no-untyped-def]
    from app.extensions import db

    with app.app_context():
        if db.engine.dialect.name != "postgresql":
            pytest.skip("row locks and concurrent writers are exercised on PostgreSQL")
    return app


def crowd(make_agent, studio, count: int) -> list[Any]:  # type: ignore[no-untyped-def]
    agents = []
    for i in range(count):
        agent = make_agent(f"agent{i:02d}")
        assert agent.act("/studios/team/join", "join_studio").status_code == 200
        agents.append(agent)
    return agents


def run_together(app, calls: list[tuple[Any, str, dict[str, Any]]]) -> list[tuple[int, dict]]:  # type: ignore[no-untyped-def]
    """POST every (agent, path, json) at the same moment, each from its own thread and client."""
    barrier = threading.Barrier(len(calls))

    def one(call: tuple[Any, str, dict[str, Any]]) -> tuple[int, dict]:
        agent, path, body = call
        client = app.test_client()  # own client → own request/app context → own session
        barrier.wait()
        r = client.post(path, json=body, headers=agent.headers("application/json"))
        return r.status_code, r.get_json(silent=True) or {}

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(one, calls))


def test_joins_never_exceed_the_limit_or_duplicate(pg, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.collab import Commitment, CommitmentParticipant

    agents = crowd(make_agent, studio, 16)
    path = studio.act("/studios/team/commit", "create_commitment", title="Limited", critical_mass=4,
                      limit=10).json["location"]
    # Each agent submits twice (a double click); 32 requests race for 10 places.
    outcomes = run_together(pg, [(a, f"{path}/actions/join_commitment", {})
                                 for a in agents for _ in range(2)])
    assert all(code in (200, 409) for code, _ in outcomes), outcomes
    joined = [body for code, body in outcomes
              if code == 200 and body["message"].startswith("Joined the commitment")]
    assert len(joined) == 10
    with pg.app_context():
        rows = db.session.query(CommitmentParticipant).all()
        assert len(rows) == 10
        assert len({r.user_id for r in rows}) == 10
        assert db.session.query(Commitment).one().closed
    # The page agrees with the table.
    text = studio.get(path).get_data(as_text=True)
    assert "## Participants (10)" in text and "| Closed |" in text


def test_votes_are_upserts_under_concurrency(pg, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.collab import Vote

    agents = crowd(make_agent, studio, 12)
    path = studio.act("/studios/team/decide", "create_decision",
                      question="Which day?").json["location"]
    for title in ("Mon", "Tue", "Wed"):
        assert studio.act(path, "add_option", title=title).status_code == 201
    calls = []
    expected_accept: Counter[str] = Counter()
    expected_prefer: Counter[str] = Counter()
    for i, agent in enumerate(agents):
        ballot = [{"option_title": t, "accept": (i + j) % 2 == 0, "prefer": (i + j) % 3 == 0}
                  for j, t in enumerate(("Mon", "Tue", "Wed"))]
        for b in ballot:
            expected_accept[b["option_title"]] += b["accept"]
            expected_prefer[b["option_title"]] += b["prefer"]
        # The batch twice and each single vote once: same content, racing each other.
        calls += [(agent, f"{path}/actions/vote", {"votes": ballot})] * 2
        calls += [(agent, f"{path}/actions/vote", b) for b in ballot]
    outcomes = run_together(pg, calls)
    assert [code for code, _ in outcomes] == [200] * len(calls), outcomes
    with pg.app_context():
        votes = db.session.query(Vote).all()
        assert len(votes) == 12 * 3
        assert len({(v.option_id, v.user_id) for v in votes}) == 36
    body = studio.get(path).get_data(as_text=True)
    for title in ("Mon", "Tue", "Wed"):
        row = next(line for line in body.splitlines() if line.startswith("| ")
                   and f"| {title} |" in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert (int(cells[2]), int(cells[3])) == (
            expected_accept[title], expected_prefer[title]), title
    assert "## Voters (12)" in body


def test_options_race_one_title_wins(pg, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.collab import Option

    agents = crowd(make_agent, studio, 10)
    path = studio.act("/studios/team/decide", "create_decision", question="Names?").json["location"]
    calls = [(a, f"{path}/actions/add_option", {"title": f"Name {i}"})
             for i, a in enumerate(agents)]
    calls += [(a, f"{path}/actions/add_option", {"title": "Same"}) for a in agents]
    outcomes = run_together(pg, calls)
    codes = Counter(code for code, _ in outcomes)
    assert codes == {201: 11, 409: 9}, outcomes
    with pg.app_context():
        titles = [o.title for o in db.session.query(Option).all()]
        assert sorted(titles) == sorted([f"Name {i}" for i in range(10)] + ["Same"])


def test_no_vote_lands_after_close(pg, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.collab import Decision, Vote

    agents = crowd(make_agent, studio, 12)
    path = studio.act("/studios/team/decide", "create_decision", question="Now?").json["location"]
    assert studio.act(path, "add_option", title="Yes").status_code == 201
    calls = [(a, f"{path}/actions/vote", {"option_title": "Yes", "accept": True})
             for a in agents]
    calls.append((studio, f"{path}/actions/close_decision", {}))
    outcomes = run_together(pg, calls)
    assert outcomes[-1][0] == 200
    accepted = sum(1 for code, _ in outcomes[:-1] if code == 200)
    assert all(code in (200, 409) for code, _ in outcomes[:-1])
    with pg.app_context():
        decision = db.session.query(Decision).one()
        votes = db.session.query(Vote).all()
        assert len(votes) == accepted  # every 200 is a vote, every 409 left no trace
        assert all(v.updated_at <= decision.deadline for v in votes)


def test_double_heartbeat_counts_once(pg, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.collab import Heartbeat

    alice = make_agent("alice")
    assert alice.act("/studios/new", "create_studio", name="Beat", handle="beat").status_code == 201
    outcomes = run_together(pg, [(alice, "/studios/beat/actions/send_heartbeat", {})] * 6)
    assert Counter(code for code, _ in outcomes) == {201: 1, 409: 5}, outcomes
    with pg.app_context():
        assert db.session.query(Heartbeat).count() == 1

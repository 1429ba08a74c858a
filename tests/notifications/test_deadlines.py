"""Deadlines that act: when a decision's or commitment's deadline passes, the workers' sweep
closes it once however many run at once, and what follows (the members told, with the outcome;
one webhook delivery per webhook) is what a person's close brings, through the same code; a
moved deadline is acted on when it comes, and its reminder goes again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask

from tests.helpers import at_once, join_studio
from tests.notifications.receivers import Receiver, work_until
from tests.notifications.test_inbox import inbox

pytestmark = pytest.mark.data_layer  # claims by conditional UPDATE: both databases


@pytest.fixture
def hooks_on(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"WEBHOOKS_ALLOW": "loopback", "WORKFLOWS_WORKER": "off",
                       "WEBHOOKS_RETRY_SCALE": "0.001"}.items():
        monkeypatch.setitem(app.config, key, value)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def pass_deadline(app: Flask, path: str, by: timedelta = timedelta(seconds=1)) -> None:
    """Set up a deadline that has just passed (the item at ``path``)."""
    from sqlalchemy import update

    from app.extensions import db
    from app.models.base import utcnow
    from app.models.collab import Commitment, Decision

    model = Decision if "/d/" in path else Commitment
    with app.app_context():
        db.session.execute(update(model).where(model.short_id == path.rsplit("/", 1)[1])
                           .values(deadline=utcnow() - by))
        db.session.commit()


def sweep_at_once(app: Flask, workers: int = 3) -> list[tuple[int, int]]:
    """What ``workers`` workers' sweeps return when they run at the same moment."""
    from app.notifications import closings

    return at_once(app, closings.sweep, workers)


def rows_of(agent: Any, kind: str) -> list[dict[str, str]]:
    return [r for r in inbox(agent)[1] if r["kind"] == kind]


def test_a_passed_deadline_closes_once_with_its_notifications_and_webhook(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, hooks_on, receiver) -> None:
    bob = join_studio(make_agent, "bob")
    hook = studio.act("/studios/team/webhooks", "create_webhook", url=receiver.url).json["result"]
    made = studio.act("/studios/team/decide", "create_decision", question="Where to eat?",
                      options=["Pizza", "Salad"], deadline="1h")
    path = made.json["location"]
    assert bob.act(path, "vote", votes=[{"option_title": "Salad", "accept": True}]
                   ).status_code == 200
    work_until(app, lambda: len(receiver.received) == 2)  # create_decision, vote
    pass_deadline(app, path)
    assert sum(closed for closed, _ in sweep_at_once(app)) == 1
    # Everyone is told, the creator too: nobody closed it, its deadline did.
    for agent in (bob, studio):
        told = rows_of(agent, "decision_closed")
        assert len(told) == 1 and path in told[0]["link"]
        assert "closed at its deadline: “Salad” won with 1 acceptance" in told[0]["text"]
    work_until(app, lambda: len(receiver.received) == 3)
    sent = receiver.received[2]
    payload = json.loads(sent["body"])
    assert payload["event"] == "decision_closed" and payload["actor"] is None
    assert payload["location"].endswith(path) and "“Salad” won" in payload["message"]
    assert sent["headers"]["Harmonic-Event"] == "decision_closed"
    # Once: later sweeps find nothing more to do, and nothing more is sent.
    assert sum(closed for closed, _ in sweep_at_once(app, 2)) == 0
    assert len(rows_of(bob, "decision_closed")) == 1
    log = studio.get(f"/webhooks/{hook['id']}").get_data(as_text=True)
    assert log.count("| decision_closed |") == 1
    # The page says it is closed, and a vote is refused.
    assert bob.act(path, "vote", votes=[{"option_title": "Pizza", "accept": True}]
                   ).status_code == 409


def test_a_persons_close_takes_the_same_path(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, hooks_on, receiver) -> None:
    bob = join_studio(make_agent, "bob")
    hook = studio.act("/studios/team/webhooks", "create_webhook", url=receiver.url).json["result"]
    path = studio.act("/studios/team/decide", "create_decision", question="Lunch?",
                      options=["Soup"], deadline="2h").json["location"]
    assert studio.act(path, "close_decision").status_code == 200
    told = rows_of(bob, "decision_closed")
    assert len(told) == 1 and "(@alice closed it): no option was accepted" in told[0]["text"]
    assert rows_of(studio, "decision_closed") == []  # their own act
    work_until(app, lambda: len(receiver.received) == 3)  # create, close_decision, closed
    events = sorted(json.loads(r["body"])["event"] for r in receiver.received)
    assert events == ["close_decision", "create_decision", "decision_closed"]
    closed = next(json.loads(r["body"]) for r in receiver.received
                  if json.loads(r["body"])["event"] == "decision_closed")
    assert closed["actor"]["handle"] == "alice"
    # The sweep finds it settled already.
    assert sweep_at_once(app, 2) == [(0, 0), (0, 0)]
    assert studio.get(f"/webhooks/{hook['id']}").get_data(as_text=True) \
        .count("| decision_closed |") == 1


def test_a_commitment_at_its_deadline_says_whether_critical_mass_was_met(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent) -> None:
    bob = join_studio(make_agent, "bob")
    met = studio.act("/studios/team/commit", "create_commitment", title="Picnic",
                     critical_mass=2, deadline="1h", join=True).json["location"]
    missed = studio.act("/studios/team/commit", "create_commitment", title="Hike",
                        critical_mass=3, deadline="1h").json["location"]
    assert bob.act(met, "join_commitment").status_code == 200
    pass_deadline(app, met)
    pass_deadline(app, missed)
    assert sum(closed for closed, _ in sweep_at_once(app, 2)) == 2
    texts = {r["link"].rsplit("/", 1)[-1].strip(")"): r["text"]
             for r in rows_of(bob, "commitment_closed")}
    assert any("“Picnic” closed at its deadline: critical mass met (2 of 2 joined)" in t
               for t in texts.values())
    assert any("“Hike” closed at its deadline: critical mass missed (0 of 3 joined)" in t
               for t in texts.values())
    assert bob.act(missed, "join_commitment").status_code == 409


def test_reaching_the_limit_closes_a_commitment_at_once(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = studio.act("/studios/team/commit", "create_commitment", title="Two seats",
                      critical_mass=1, limit=1, deadline="3d").json["location"]
    assert bob.act(path, "join_commitment").status_code == 200
    told = rows_of(studio, "commitment_closed")
    assert len(told) == 1 and "(@bob closed it): critical mass met (1 of 1" in told[0]["text"]
    assert sweep_at_once(app, 2) == [(0, 0), (0, 0)]


def test_a_moved_deadline_is_acted_on_when_it_comes(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.base import utcnow
    from app.notifications import closings
    from app.services import closing

    bob = join_studio(make_agent, "bob")
    path = studio.act("/studios/team/decide", "create_decision", question="Move me",
                      deadline="2h").json["location"]
    assert sweep_at_once(app, 2) in ([(0, 1), (0, 0)], [(0, 0), (0, 1)])  # the reminder
    assert len(rows_of(bob, "deadline")) == 1
    # Later: the old time passes without a close, and the new one gets its own reminder.
    assert studio.act(f"{path}/settings", "update_decision_settings",
                      deadline="3d").status_code == 200
    with app.app_context():
        assert closings.sweep() == (0, 0)
        assert closing.sweep(utcnow() + timedelta(hours=3)) == (0, 0)
        assert closing.sweep(utcnow() + timedelta(days=2, hours=1)) == (0, 1)
        db.session.remove()
    assert len(rows_of(bob, "deadline")) == 2
    # Removed ('none'): it never closes by itself.
    assert studio.act(f"{path}/settings", "update_decision_settings",
                      deadline="none").status_code == 200
    with app.app_context():
        assert closing.sweep(utcnow() + timedelta(days=400)) == (0, 0)
        db.session.remove()
    assert rows_of(bob, "decision_closed") == []

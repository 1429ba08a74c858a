"""Change events across processes (app.core.feed): a listen stream held on one server process
hears a page changed through another; the relay of a process catches up from the outbox after
its listening connection was cut."""

from __future__ import annotations

import json
import queue
import threading
import time
from typing import Any

import httpx
import pytest
from flask import Flask
from sqlalchemy import insert, text

from tests.mcp.conftest import ACCEPT, gunicorns

VERSION = "2026-07-28"
URI = "harmonic://page/studios/team/note"


def _listen_body(uri: str) -> dict[str, Any]:
    from tests.mcp.test_era_2026 import meta

    return {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": {"resourceSubscriptions": [uri]}}}


def _reader(response: httpx.Response, into: queue.Queue[dict[str, Any]]) -> None:
    try:
        for line in response.iter_lines():
            if line.startswith("data:"):
                into.put(json.loads(line[5:]))
    except httpx.HTTPError:
        pass


@pytest.mark.slow
def test_a_listen_stream_on_one_process_hears_a_change_made_through_another(
        app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    headers = {"Accept": ACCEPT, "Content-Type": "application/json",
               "Authorization": f"Bearer {studio.token}", "MCP-Protocol-Version": VERSION,
               "Mcp-Method": "subscriptions/listen"}
    with gunicorns(app, {}, {}) as (first, second), httpx.Client(timeout=60) as http:
        with http.stream("POST", first + "/mcp", json=_listen_body(URI),
                         headers=headers) as stream:
            heard: queue.Queue[dict[str, Any]] = queue.Queue()
            threading.Thread(target=_reader, args=(stream, heard), daemon=True).start()
            ack = heard.get(timeout=60)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            made = http.post(second + "/studios/team/note/actions/create_note",
                             json={"title": "Across", "text": "made on the other process"},
                             headers={"Authorization": f"Bearer {studio.token}",
                                      "Accept": "application/json"})
            assert made.status_code == 201, made.text
            update = heard.get(timeout=60)
            assert update["method"] == "notifications/resources/updated"
            assert update["params"]["uri"] == URI
            # Exactly once: the other process's change is not announced twice.
            with pytest.raises(queue.Empty):
                heard.get(timeout=2)


def _foreign_event(app: Flask, uri: str) -> int:
    """An event as another process writes it: a row in the outbox (and on PostgreSQL the
    NOTIFY), not through this process's ``changes.record``."""
    from app.core import changes
    from app.extensions import db
    from app.models.base import utcnow
    from app.models.changes import ChangeEvent

    with app.app_context(), db.engine.begin() as conn:
        new_id = conn.execute(insert(ChangeEvent).values(uri=uri, created_at=utcnow())
                              .returning(ChangeEvent.id)).scalar_one()
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_notify(:c, '')"), {"c": changes.NOTIFY_CHANNEL})
    return int(new_id)


def _cut_listening_connections(app: Flask) -> int:
    from app.extensions import db

    with app.app_context(), db.engine.begin() as conn:
        return len(conn.execute(text(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE query LIKE 'LISTEN %' AND datname = current_database() "
            "AND pid <> pg_backend_pid()")).all())


def test_the_relay_delivers_foreign_events_once_and_catches_up_after_a_cut(
        app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    from app.core import changes, feed

    relay = feed.ensure_started(app)
    heard: queue.Queue[str] = queue.Queue()
    changes.listen(heard.put)
    try:
        # Our own change: delivered at its commit, every URI it recorded once.
        assert studio.act("/studios/team/note", "create_note", title="Own",
                          text="here").status_code == 201
        own = _drain(heard, 0.5)
        assert URI in own and len(own) == len(set(own)), own
        first = _foreign_event(app, "harmonic://page/studios/team/elsewhere")
        assert heard.get(timeout=30) == "harmonic://page/studios/team/elsewhere"
        assert relay.wait_past(first - 1, timeout=30) >= first
        if relay.postgres:
            deadline = time.monotonic() + 30
            while not relay.connected and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _cut_listening_connections(app) >= 1
        # Written while the listening connection is (maybe) down: caught up from the outbox.
        second = _foreign_event(app, "harmonic://page/studios/team/after-the-cut")
        assert heard.get(timeout=30) == "harmonic://page/studios/team/after-the-cut"
        assert relay.wait_past(second - 1, timeout=30) >= second
        # Nothing twice: not our own events (the relay skips them), not the foreign ones.
        assert _drain(heard, 1.0) == []
    finally:
        changes.unlisten(heard.put)


def _drain(heard: queue.Queue[str], quiet: float) -> list[str]:
    """What arrives until ``quiet`` seconds pass without anything."""
    got = []
    while True:
        try:
            got.append(heard.get(timeout=quiet))
        except queue.Empty:
            return got

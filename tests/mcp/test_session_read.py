"""The MCP session's row (``app.mcp.store``): each process keeps a copy of what only
initialize, a subscription or a log level changes, forgotten through the change feed when one
of those changes or the session ends; where the session is (its page) is read by every call
that needs it."""

from __future__ import annotations

import json

import pytest
from flask import Flask

from app.core import changes
from app.extensions import db
from app.models.mcp import McpSession
from bench.sqlcount import counting
from tests.mcp.conftest import Http, gunicorns, messages_of, ping_until_refused

UPDATED = "notifications/resources/updated"

pytestmark = pytest.mark.data_layer


def _row_reads(statements: list[str]) -> list[str]:
    """The reads of one session's row (not the prune's of old ones, at initialize)."""
    return [s for s in statements if s.lstrip().upper().startswith("SELECT")
            and "FROM mcp_sessions" in s and "WHERE mcp_sessions.id =" in s]


def test_a_process_reads_a_session_s_row_once(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    http = Http(live_server, studio.token)
    with counting(app) as statements:
        http.initialize()  # initialize writes the row; notifications/initialized reads it
        assert http.call("ping")["result"] == {}
        for _ in range(3):
            assert http.call("tools/list")["result"]["tools"]
    assert len(_row_reads(statements)) == 1, statements


def test_each_call_that_needs_the_page_reads_it(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    http = Http(live_server, studio.token)
    http.initialize()
    assert http.call("ping")["result"] == {}  # the copy is made
    with counting(app) as statements:
        for _ in range(2):
            context = http.call("resources/read", {"uri": "harmonic://context"})["result"]
            assert "Your current page" not in context["contents"][0]["text"]
    reads = _row_reads(statements)
    assert len(reads) == 2 and all("current_path" in s for s in reads), statements


def test_a_new_log_level_is_read_again(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """A change the copies hold forgets them: the next call reads the row."""
    http = Http(live_server, studio.token)
    http.initialize()
    assert http.call("ping")["result"] == {}
    with counting(app) as statements:
        assert http.call("logging/setLevel", {"level": "error"})["result"] == {}
        assert http.call("ping")["result"] == {}
        assert http.call("ping")["result"] == {}
    assert sum("log_level" in s for s in _row_reads(statements)) == 1, statements


def test_an_ended_session_is_refused_at_its_next_call(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """Ended (here by its DELETE), a session answers 404 at once in the process that ended it,
    its copy forgotten there, on both databases."""
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path="/studios/team").get("isError")
    ended = http.client.delete(http.url, headers=dict(http.headers, **{
        "Mcp-Session-Id": http.session_id or "", "MCP-Protocol-Version": "2025-11-25"}))
    assert ended.status_code in (200, 204), ended.text[:300]
    answer = http.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    assert answer.status_code == 404, answer.text[:300]


def test_a_session_ended_through_another_process_is_refused_there_once_told(
        app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    """The other process forgets its copy when its change feed brings the end (PostgreSQL's
    notification, SQLite's next read of the outbox); until then, or with no feed, it reads."""
    with gunicorns(app, {}, {}) as (a, b):
        on_a, on_b = Http(a, studio.token), Http(b, studio.token)
        on_a.initialize()
        on_b.session_id = on_a.session_id
        assert on_b.call("ping")["result"] == {}  # b keeps its copy
        ended = on_a.client.delete(on_a.url, headers=dict(on_a.headers, **{
            "Mcp-Session-Id": on_a.session_id or "", "MCP-Protocol-Version": "2025-11-25"}))
        assert ended.status_code == 204, ended.text[:300]
        assert ping_until_refused(on_b) == 404


def test_updates_follow_the_subscriptions_read_with_the_cursor(app: Flask, studio,
                                                               live_server) -> None:  # type: ignore[no-untyped-def]
    """A process's copy made before a subscription it has not heard of yet (here made by hand,
    so no process hears of it) lacks that URI: the updates taken with the cursor follow the
    row, so the cursor never passes over the new subscription's events."""
    http = Http(live_server, studio.token)
    http.initialize()
    home, team = changes.page_uri("/studios/team"), changes.page_uri("/studios/team/team")
    assert http.call("resources/subscribe", {"uri": home})["result"] == {}
    assert http.call("ping")["result"] == {}  # the copy: subscribed to home only
    with app.app_context():
        row = db.session.get(McpSession, http.session_id)
        assert row is not None
        since = json.loads(row.subscriptions)
        row.subscriptions = json.dumps({**since, team: since[home]})
        changes.record(team)  # older than home's event below, which moves the cursor past it
        db.session.commit()
        changes.record(home)
        db.session.commit()
    told = [m["params"]["uri"] for m in messages_of(http.post(
        {"jsonrpc": "2.0", "id": 9, "method": "ping"})) if m.get("method") == UPDATED]
    assert told == [team, home]

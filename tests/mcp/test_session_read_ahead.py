"""A 2025-11-25 session's row asked for on the request's arrival (``app.models.read_ahead``).

On PostgreSQL, POST /mcp sends its session's read before Flask starts on the request and
collects the answer when the view needs the row. These drive real requests through the app
and check what an agent sees — the same answers, the same refusals — while a spy on the
collected reads shows which way each row came: ahead, or read again the usual way after a
failure. On SQLite nothing is sent ahead (its reads never wait).
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text

from app.extensions import db
from app.models import read_ahead
from tests.mcp.conftest import Http
from tests.mcp.test_http import _FlaskClient

PING = {"jsonrpc": "2.0", "id": 5, "method": "ping"}


@pytest.fixture
def collected(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What each collected read answered: rows (a list), or None where it failed."""
    seen: list[Any] = []
    rows = read_ahead.Pending.rows

    def spy(self: read_ahead.Pending) -> Any:
        answer = rows(self)
        seen.append(answer)
        return answer

    monkeypatch.setattr(read_ahead.Pending, "rows", spy)
    return seen


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every read sent ahead (None where ``send`` declined)."""
    seen: list[Any] = []
    send = read_ahead.send

    def spy(*args: Any, **kwargs: Any) -> Any:
        pending = send(*args, **kwargs)
        seen.append(pending)
        return pending

    monkeypatch.setattr(read_ahead, "send", spy)
    return seen


@pytest.fixture
def mcp(client, make_agent) -> Http:  # type: ignore[no-untyped-def]
    http = Http("http://localhost", make_agent("alice").token, _FlaskClient(client))
    http.initialize()
    return http


def _postgres(app: Flask) -> bool:
    return app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql")


def _set_log_level(mcp: Http, level: str) -> None:
    assert mcp.call("logging/setLevel", {"level": level})["result"] == {}


def test_calls_see_what_the_last_call_left_and_an_ended_session_is_gone(
        app: Flask, client, mcp: Http, collected: list[Any]) -> None:
    # Each call's row is read as the call arrives, after the previous call committed.
    mcp.call("tools/call", {"name": "navigate", "arguments": {"path": "/"}})
    here = mcp.call("tools/call", {"name": "navigate", "arguments": {"path": "."}})
    assert "error" not in here, here
    _set_log_level(mcp, "debug")
    _set_log_level(mcp, "error")
    assert mcp.post(PING).status_code == 200
    assert client.delete("/mcp", headers={**mcp.headers, "Mcp-Session-Id": mcp.session_id}
                         ).status_code == 204
    # The row read ahead says the session ended: 404, as without the read ahead.
    assert mcp.post(PING).status_code == 404
    assert mcp.post(PING, **{"Mcp-Session-Id": "no-such-session"}).status_code == 404
    if _postgres(app):
        assert len(collected) >= 6 and all(rows is not None for rows in collected), collected
        assert collected[-1] == [] and collected[-2] == []  # no live row: not found
    else:
        assert collected == []  # SQLite: read when needed, never ahead


def test_a_reader_cut_off_between_calls_is_replaced_and_the_call_answered(
        app: Flask, mcp: Http, collected: list[Any]) -> None:
    if not _postgres(app):
        pytest.skip("SQLite sends nothing ahead")
    assert mcp.post(PING).status_code == 200
    with app.app_context():
        cut = db.session.execute(text(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = 'harmonic-reader' AND datname = current_database()")
        ).scalar()
        db.session.commit()
    assert cut >= 1
    # Every cut reader fails its read (sent or collected) and the call reads the usual way.
    for _ in range(cut + 1):
        assert mcp.post(PING).json() == {"jsonrpc": "2.0", "id": 5, "result": {}}
    assert mcp.post(PING).status_code == 200
    assert collected[-1] is not None  # and new readers read ahead again


def test_an_answer_nobody_asked_for_leaves_no_reader_behind(
        app: Flask, mcp: Http, collected: list[Any]) -> None:
    # Refused before the view looks at the session (Origin), or answered without one (a
    # 2026-07-28 request, whatever its headers say): more of them than a process has readers.
    readers = app.config["HARMONIC_DB_READERS"]
    modern = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}}}
    for _ in range(readers + 2):
        assert mcp.post(PING, Origin="http://evil.example.com").status_code == 403
        assert mcp.post(modern, **{"MCP-Protocol-Version": "2026-07-28",
                                   "Mcp-Method": "tools/list"}).status_code == 200
    assert collected == []  # settled unasked: none of them was collected for a row
    # Had any kept its reader (or left an answer in its socket), these would read otherwise.
    for _ in range(readers + 1):
        assert mcp.post(PING).status_code == 200
    if _postgres(app):
        assert len(collected) == readers + 1 and all(rows for rows in collected), collected
        with app.app_context():
            busy = db.session.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                "'harmonic-reader' AND datname = current_database() AND state <> 'idle'"
            )).scalar()
            db.session.commit()
        assert busy == 0
    else:
        assert collected == []


def test_no_token_no_read(app: Flask, mcp: Http, sent: list[Any]) -> None:
    # A caller who may not use /mcp has no read made for it before it is refused.
    anonymous = {k: v for k, v in mcp.headers.items() if k != "Authorization"}
    response = mcp.client.post(mcp.url, content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                               headers={**anonymous, "Mcp-Session-Id": mcp.session_id or ""})
    assert response.status_code == 401
    assert sent == []
    assert mcp.post(PING).status_code == 200
    assert len(sent) == 1 and (sent[0] is not None) == _postgres(app)

"""The tool-call audit under concurrent calls: calls finishing together share one commit (group
commit), and still every call has exactly its own row, stored before its answer arrives."""

from __future__ import annotations

import threading

import pytest
from flask import Flask

from tests.mcp.conftest import Http

CLIENTS = 8
CALLS = 4


def _rows(app: Flask) -> list[tuple[str, str | None, str]]:
    from app.extensions import db
    from app.models.mcp import McpToolCall

    with app.app_context():
        return [(r.session_id or "", r.path, r.outcome)
                for r in db.session.query(McpToolCall).filter(McpToolCall.tool == "navigate")]


def test_every_concurrent_call_has_its_own_audit_row(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    clients = [Http(live_server, studio.token) for _ in range(CLIENTS)]
    for http in clients:
        http.initialize()
    seen: list[tuple[str, int]] = []
    problems: list[str] = []
    start = threading.Barrier(CLIENTS)

    def agent(http: Http) -> None:
        start.wait()
        for n in range(CALLS):
            path = "/studios/team" if n % 2 else "/studios"
            result = http.tool("navigate", path=path)
            if result.get("isError"):
                problems.append(result["content"][0]["text"][:200])
            # The row is committed before the answer: it is there as soon as the call returns.
            mine = [r for r in _rows(app) if r[0] == http.session_id]
            seen.append((http.session_id or "", len(mine)))
            if len(mine) != n + 1:
                problems.append(f"after call {n + 1} the session has {len(mine)} rows")

    threads = [threading.Thread(target=agent, args=(http,)) for http in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not problems, problems
    rows = _rows(app)
    assert len(rows) == CLIENTS * CALLS
    for http in clients:
        mine = sorted(r[1] or "" for r in rows if r[0] == http.session_id)
        assert mine == ["/studios"] * (CALLS // 2) + ["/studios/team"] * (CALLS // 2)
    assert {r[2] for r in rows} == {"ok"}


def test_a_reads_row_skips_the_flush_but_the_connection_keeps_it_for_writes(
        app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """A read's row is committed without waiting for the disk (SQLite synchronous=NORMAL, on
    the audit's own connection, or for that one transaction when it goes through the pool);
    every pooled connection must be at FULL afterwards, since they serve changes. The row is
    there when the call returns, as for any call."""
    from sqlalchemy import text

    from app.extensions import db

    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        pytest.skip("PostgreSQL sets synchronous_commit per transaction (SET LOCAL)")
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path="/studios/team").get("isError")
    assert [r[1] for r in _rows(app)] == ["/studios/team"]
    with app.app_context():
        # Every connection the pool holds (it keeps up to pool.size() idle ones), all at once,
        # so the one the row was written on is among them. FULL is 2.
        conns = [db.engine.connect() for _ in range(db.engine.pool.size() + 1)]  # type: ignore[attr-defined]
        try:
            levels = [c.execute(text("PRAGMA synchronous")).scalar() for c in conns]
        finally:
            for conn in conns:
                conn.close()
    assert levels == [2] * len(conns), levels

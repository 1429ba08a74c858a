"""The MCP session's row, read on every call on the reads' engine beside the app's
(``app.db.reads``): a lost connection there costs no call, an ended session is refused at
once, and the engine's connections end with the app's engine."""

from __future__ import annotations

import psycopg
import pytest
from flask import Flask

from app.extensions import db
from bench.sqlcount import counting
from tests.conftest import PG_ADMIN_URL
from tests.helpers import server_backends
from tests.mcp.conftest import Http

pytestmark = pytest.mark.data_layer

READS = "harmonic-reads"  # the application_name of the reads' own connections


def _postgres_only(app: Flask) -> None:
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        pytest.skip("a SQLite file has no server connections to lose or leave behind")


def test_a_cut_reading_connection_costs_no_call(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """Its connection cut (as a restart would), the next call reads its session through the
    app's pool and answers; the call after opens a new reading connection."""
    _postgres_only(app)
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path="/studios/team").get("isError")
    pids = server_backends(app, READS)
    assert pids, "the session's row was read on the reads' own connection"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE pid = ANY(%s)", (pids,))
    assert not http.tool("navigate", path="/studios").get("isError")
    assert not http.tool("navigate", path="/studios/team").get("isError")
    assert set(server_backends(app, READS, expect=1)).isdisjoint(pids)


def test_the_reading_connections_end_with_the_engine(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    _postgres_only(app)
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path="/studios/team").get("isError")
    assert server_backends(app, READS)
    with app.app_context():
        db.engine.dispose()
    assert server_backends(app, READS, expect=0) == []
    assert not http.tool("navigate", path="/studios").get("isError")


def test_every_call_reads_its_session_s_row(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """No copy of the row stands in for it: a session ended through another process must be
    refused at once (the MCP spec's 404, which the official conformance suite checks across
    processes: ``test_processes``)."""
    http = Http(live_server, studio.token)
    http.initialize()
    with counting(app) as statements:
        assert http.call("ping")["result"] == {}
        for _ in range(3):
            assert http.call("tools/list")["result"]["tools"]
    read = [s for s in statements if s.lstrip().upper().startswith("SELECT")
            and "FROM mcp_sessions" in s]
    assert len(read) == 4, statements


def test_an_ended_session_is_refused_at_its_next_call(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """The row is read on every call, so a session ended (here by its DELETE) answers 404 at
    once, on both databases."""
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path="/studios/team").get("isError")
    ended = http.client.delete(http.url, headers=dict(http.headers, **{
        "Mcp-Session-Id": http.session_id or "", "MCP-Protocol-Version": "2025-11-25"}))
    assert ended.status_code in (200, 204), ended.text[:300]
    answer = http.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    assert answer.status_code == 404, answer.text[:300]

"""The MCP session's row, kept per process (``app.mcp.store``, ``app.core.kept``) but for its
page: a session's calls read no row once its process keeps a copy; the page is read from the
row at every call that needs it; a session ended is refused at once by the process that ended
it (the other process: ``test_processes``). Both databases."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import update

from app.extensions import db
from app.models.mcp import McpSession
from bench.sqlcount import counting
from tests.mcp.conftest import Http

pytestmark = pytest.mark.data_layer


def test_a_kept_session_s_calls_read_no_row(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    http = Http(live_server, studio.token)
    http.initialize()
    with counting(app) as statements:
        assert http.call("ping")["result"] == {}  # the copy is made here, at the latest
        first = len(_of_sessions(statements))
        for _ in range(3):
            assert http.call("tools/list")["result"]["tools"]
    assert first <= 1 and len(_of_sessions(statements)) == first, statements


def _of_sessions(statements: list[str]) -> list[str]:
    return [statement for statement in statements if "mcp_sessions" in statement]


def test_the_page_is_read_from_the_row_at_each_call(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """Changed behind the process's back (as another process's navigate changes it), the page
    is what the next call acts on: it is never part of the copy."""
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path="/studios/team").get("isError")
    with app.app_context():
        db.session.execute(update(McpSession).where(McpSession.id == http.session_id)
                           .values(current_path="/studios/team/note"))
        db.session.commit()
    done = http.tool("execute_action", action="create_note", params={"text": "read anew"})
    assert done["structuredContent"]["location"].startswith("/studios/team/n/"), done


def test_an_ended_session_is_refused_at_its_next_call(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """Its process forgets its copy as the end commits: the DELETE's next call answers 404."""
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path="/studios/team").get("isError")
    ended = http.client.delete(http.url, headers=dict(http.headers, **{
        "Mcp-Session-Id": http.session_id or "", "MCP-Protocol-Version": "2025-11-25"}))
    assert ended.status_code in (200, 204), ended.text[:300]
    answer = http.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    assert answer.status_code == 404, answer.text[:300]

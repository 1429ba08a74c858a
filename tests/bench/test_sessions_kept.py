"""``bench/sessions_kept.py``, the what-if row of ``mcp_bench.py``, does what its row's label
says: after one read, each process answers a session's calls from the row it kept, so the
benchmark measures a call without the read. Served by gunicorn as the benchmark serves it, and
shown against the app itself: a session ended in the database by another process is refused by
the app at once, and still answered by the what-if (which is why it is not a mode of the
app)."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import update

from app.extensions import db
from app.models.base import utcnow
from app.models.mcp import McpSession
from tests.mcp.conftest import Http, gunicorn

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("target, answered_after_the_end", [("wsgi:app", False),
                                                             ("sessions_kept:app", True)])
def test_the_what_if_answers_from_the_row_it_kept(app: Flask, target: str,
                                                  answered_after_the_end: bool) -> None:
    with gunicorn(app, target=target, HARMONIC_MCP_AUTH="off", HARMONIC_MCP_CONFORMANCE="1",
                  PYTHONPATH=str(BENCH)) as url:
        client = Http(url)
        client.initialize()
        first = client.tool("test_simple_text")
        assert first["content"][0]["text"], first
        with app.app_context():
            db.session.execute(update(McpSession).where(McpSession.id == client.session_id)
                               .values(ended_at=utcnow()))
            db.session.commit()
        after = client.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                             "params": {"name": "test_simple_text", "arguments": {}}})
        assert (after.status_code == 200) is answered_after_the_end, after.text
        if not answered_after_the_end:
            assert after.status_code == 404

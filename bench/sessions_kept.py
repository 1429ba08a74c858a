"""A what-if for ``mcp_bench.py``, never a mode of the app: the app as ``bin/serve`` runs it,
except that each process keeps an MCP session's row in its memory after reading it once, as
the SDK's server keeps its sessions.

It answers one question with a measurement: how much of a 2025-11-25 session call's cost is the
read of the session's row from the database, which every call makes so that any process can
serve any session (README, "Production: many processes on many hosts"). A row kept in memory
is wrong for the app: a change made through another process (a page navigated to, a log
level, the session's end) would not be seen here. The benchmark's calls change nothing, so for
them it answers the same.

    gunicorn ... sessions_kept:app    (with ``bench/`` on PYTHONPATH)
"""

from __future__ import annotations

import threading
from typing import Any

from app.mcp import store
from app.models import plain_reads
from wsgi import app

_rows: dict[str, Any] = {}  # session id -> its row as first read (no row: not kept)
_lock = threading.Lock()
_read_aside, _touch = plain_reads.read_aside, store.touch


def _kept_read(statement: Any, params: dict[str, Any] | None = None) -> Any:
    # Only the session row's read is kept; ``store.find_session`` does the rest as in the app.
    if statement is not store._FIND_SESSION or params is None:
        return _read_aside(statement, params)
    rows = _rows.get(params["sid"])
    if rows is None:
        rows = _read_aside(statement, params)
        if rows:
            with _lock:
                _rows[params["sid"]] = rows
    return rows


def _touched(session: store.DbSession) -> None:
    # The app marks a session in use once a minute; the kept row must learn that it did, or
    # every call after the first minute would write it again.
    _touch(session)
    rows = _rows.get(session.id)
    if rows:
        with _lock:
            _rows[session.id] = plain_reads.Rows(
                [rows[0]._replace(last_seen_at=session.last_seen_at)])


plain_reads.read_aside = _kept_read
store.touch = _touched
store.send_session_read = lambda *args, **kwargs: None  # type: ignore[assignment]

__all__ = ["app"]

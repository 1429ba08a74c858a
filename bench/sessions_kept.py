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

from app.mcp import store
from wsgi import app

_kept: dict[str, store.DbSession] = {}  # session id -> as first read (no session: not kept)
_lock = threading.Lock()
_find, _touch = store.find_session, store.touch


def _kept_find(session_id: str) -> store.DbSession | None:
    # Only the session row's read is kept; what the call does with it is the app's own.
    found = _kept.get(session_id)
    if found is None:
        found = _find(session_id)
        if found is not None:
            with _lock:
                _kept[session_id] = found
        return found
    return store.DbSession({**found._loaded, "last_seen_at": found.last_seen_at})


def _touched(session: store.DbSession) -> None:
    # The app marks a session in use once a minute; the kept row must learn that it did, or
    # every call after the first minute would write it again.
    _touch(session)
    kept = _kept.get(session.id)
    if kept is not None:
        kept.last_seen_at = session.last_seen_at


store.find_session = _kept_find
store.touch = _touched

__all__ = ["app"]

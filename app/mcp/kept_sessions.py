"""2025-11-25 session rows kept per process on SQLite, used only while no process changed them.

Every call of a session reads its row (``store.find_session``), so that any process can serve
the session's next call and sees it as the last call left it: the page navigate left it on,
its log level, its subscriptions, its end. On SQLite that read was a fifth of a trivial
call's CPU under load (``bench/mcp_bench.py``: 717 µs a call against 523 with the row kept,
the benchmark's what-if row). Every process of a SQLite database is on the host that holds
its file, so they share a stamp file in memory (``app.models.host_stamps``): whoever writes a
session's row bumps its stamp after the commit (``changed``), and a process uses the copy it
read only while the stamp is the one it saw before reading. A call that arrives after another
process's change has answered therefore always reads the row again; one that runs at the
same moment as the change may see the row from just before it, as it would had it started a
moment earlier.

A row changed by something that does not bump (a process that died between its commit and
its bump, a hand-made edit) is still seen within ``HARMONIC_SESSION_CACHE_SECONDS`` (1 s by
default, never more; ``0`` turns the copies off), as a token is (``app.core.token_cache``).
PostgreSQL, an in-memory database and a stamp file that cannot be made keep no copies.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from flask import current_app

from app.extensions import db
from app.models import host_stamps

KEY = "harmonic.kept_sessions"
LIMIT = 10_000  # copies per process, the oldest dropped first
_PREFIX = "mcp-session:"


class KeptSessions:
    def __init__(self, stamps: host_stamps.Stamps, seconds: float) -> None:
        self.stamps = stamps
        self.seconds = seconds
        self._rows: OrderedDict[str, tuple[bytes, float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def rows(self, session_id: str, read: Callable[[], Any]) -> Any:
        """The session's rows: the copy, if nothing changed them since it was read; else
        ``read()``, kept under the stamp taken before it."""
        stamp = self.stamps.read(_PREFIX + session_id)
        with self._lock:
            kept = self._rows.get(session_id)
        if (kept is not None and kept[0] == stamp
                and time.monotonic() - kept[1] < self.seconds):
            return kept[2]
        fetched = time.monotonic()  # before the read: a copy never looks fresher than it is
        found = read()
        with self._lock:
            if found:
                self._rows[session_id] = (stamp, fetched, found)
                self._rows.move_to_end(session_id)
                while len(self._rows) > LIMIT:
                    self._rows.popitem(last=False)
            else:  # unknown or ended: nothing to keep (guessed ids must not fill the memory)
                self._rows.pop(session_id, None)
        return found


def _kept() -> KeptSessions | None:
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    kept = app.extensions.get(KEY)
    if kept is None:
        seconds = float(app.config.get("HARMONIC_SESSION_CACHE_SECONDS", 1.0))
        stamps = host_stamps.for_engine(db.engine) if seconds > 0 else None
        kept = app.extensions.setdefault(
            KEY, KeptSessions(stamps, seconds) if stamps is not None else False)
    return kept or None


def rows(session_id: str, read: Callable[[], Any]) -> Any:
    """``read()`` (the session's row), or this process's copy of its answer where that is
    still the row's present state."""
    kept = _kept()
    return read() if kept is None else kept.rows(session_id, read)


def changed(*session_ids: str) -> None:
    """Say these sessions' rows changed (after the commit): no process uses its copy again."""
    stamps = host_stamps.for_engine(db.engine)
    if stamps is not None:
        for session_id in session_ids:
            stamps.bump(_PREFIX + session_id)

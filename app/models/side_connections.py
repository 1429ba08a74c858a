"""Database connections of the app's own beside SQLAlchemy's pool, for work too small to pay
the pool's way.

A checkout from the pool runs its events (the idle ping's clock), a check-in its reset (a
rollback), and a connection borrowed for one statement in autocommit is switched there and
back; for a one-row read that costs several times the read itself. Two callers keep DBAPI
connections of their own instead, opened here from the engine's own URL and settings:

- the audit log's side connection (``app.mcp.audit_rows``), which writes rows that need no
  disk flush;
- a few reader connections per engine (``Readers``), each in autocommit, for the one-row reads
  that must see what any process committed a moment ago: an MCP session's row on every call of
  a 2025-11-25 session (``app.models.plain_reads.read_aside``).

Rules they share: an in-memory SQLite database has none (another connection would open
another, empty database); PostgreSQL names them in ``pg_stat_activity`` by
``application_name``; a forked worker opens its own and never closes its parent's (closing a
SQLite file's descriptor drops every lock the process holds on that file); and they are closed
when the engine disposes its pool (its app shutting down, tests ending, a database about to be
dropped), which they must not outlive. A connection that fails is dropped; its caller goes
through the pool, which knows how to reconnect.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

READER_NAME = "harmonic-reader"
READERS_PER_ENGINE = 4  # the default of HARMONIC_DB_READERS; more reading at once use the pool


def usable(engine: Engine) -> bool:
    """False for an in-memory SQLite database: another connection would open another one."""
    if engine.dialect.name != "sqlite":
        return True
    database = engine.url.database or ""
    return database not in ("", ":memory:") and "mode=memory" not in str(engine.url)


def open_dbapi(engine: Engine, application_name: str) -> Any:
    """A new DBAPI connection to the engine's database in autocommit: each statement is its
    own transaction (SQLite's driver then begins none; psycopg sends none)."""
    dialect = engine.dialect
    cargs, cparams = dialect.create_connect_args(engine.url)
    sqlite = dialect.name == "sqlite"
    if sqlite:
        # Used by one thread at a time, but not always the thread that opened it.
        cparams["check_same_thread"] = False
    else:
        cparams.setdefault("application_name", application_name)
    connection = dialect.loaded_dbapi.connect(*cargs, **cparams)
    try:
        if sqlite:
            connection.isolation_level = None
        else:
            connection.autocommit = True
    except Exception:
        close_quietly(connection)
        raise
    return connection


def close_quietly(connection: Any) -> None:
    try:
        connection.close()
    except Exception:  # already gone with the server: nothing left to release
        pass


def when_disposed(engine: Engine, callback: Callable[[Engine], None]) -> None:
    """Call ``callback`` when the engine disposes its pool (once per callback and engine)."""
    if not event.contains(engine, "engine_disposed", callback):
        event.listen(engine, "engine_disposed", callback)


class Readers:
    """At most ``limit`` reader connections of one engine in one process, lent one at a time.
    ``take`` answers None when all are lent (or none can be opened): the caller then reads
    through the pool."""

    def __init__(self, engine: Engine, limit: int = READERS_PER_ENGINE) -> None:
        self.limit = limit
        self._engine = weakref.ref(engine)
        self._idle: list[Any] = []
        self._opened = 0
        self._lock = threading.Lock()
        self._closed = False
        self.pid = os.getpid()

    def take(self) -> Any | None:
        with self._lock:
            if self._idle:
                return self._idle.pop()
            if self._closed or self._opened >= self.limit:
                return None
            self._opened += 1
        engine = self._engine()
        try:
            if engine is None:
                raise RuntimeError("the engine is gone")
            return open_dbapi(engine, READER_NAME)
        except Exception:
            with self._lock:
                self._opened -= 1
            return None

    def give(self, connection: Any) -> None:
        """Take back a connection whose last statement succeeded."""
        with self._lock:
            if not self._closed:
                self._idle.append(connection)
                return
        self.drop(connection)

    def drop(self, connection: Any) -> None:
        """Close a connection that failed; the next ``take`` may open a new one."""
        with self._lock:
            self._opened -= 1
        close_quietly(connection)

    def close(self) -> None:
        """Close the idle ones; one lent at this moment is closed when it comes back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._opened -= len(idle)
        for connection in idle:
            close_quietly(connection)


# Per engine, this process's readers. Weak: an engine no longer used takes its entry with it.
_READERS: weakref.WeakKeyDictionary[Engine, Readers] = weakref.WeakKeyDictionary()
_INHERITED: list[Readers] = []  # a parent's, kept open and unused in a forked child
_LOCK = threading.Lock()


def readers(engine: Engine, limit: int = READERS_PER_ENGINE) -> Readers | None:
    """This process's reader connections of ``engine`` (at most ``limit``, fixed by the first
    call), or None where it can have none."""
    found = _READERS.get(engine)
    if found is not None and found.pid == os.getpid():
        return found
    if limit <= 0 or not usable(engine):
        return None
    with _LOCK:
        found = _READERS.get(engine)
        if found is not None and found.pid == os.getpid():
            return found
        if found is not None:
            _INHERITED.append(found)
        found = _READERS[engine] = Readers(engine, limit)
    when_disposed(engine, _close_readers)
    return found


def _close_readers(engine: Engine) -> None:
    with _LOCK:
        found = _READERS.pop(engine, None)
    if found is not None and found.pid == os.getpid():
        found.close()

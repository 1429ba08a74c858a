"""The connection the queue uses: the app's engine on PostgreSQL, a locking one on SQLite.

PostgreSQL leases with ``FOR UPDATE SKIP LOCKED`` on the app's own engine. SQLite has no row
locks, so queue transactions there start with ``BEGIN IMMEDIATE`` (the database's write lock
is taken up front, so a lease's read-then-update cannot interleave with another process's)
and wait for the lock instead of failing with "database is locked".

A worker loop runs inside ``pinned()``: its queue transactions share one checked-out
PostgreSQL connection instead of checking one out of the pool (and resetting it) each time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event

from app.core import changes
from app.extensions import db

_engines: dict[str, Engine] = {}
_lock = threading.Lock()
SQLITE_BUSY_SECONDS = 60


def _sqlite_engine(url: str) -> Engine:
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_SECONDS,
                                                      "check_same_thread": False})

            @event.listens_for(engine, "connect")
            def _manual(dbapi_connection: Any, _record: Any) -> None:
                dbapi_connection.isolation_level = None  # we say BEGIN ourselves
                # WAL: readers never block the writer, and a commit is one fsync. The mode is
                # a property of the database file, so the app's own connections use it too.
                try:
                    dbapi_connection.execute("PRAGMA journal_mode=WAL")
                except Exception:  # another process holds the file; it is switched already
                    pass
                # Queue commits survive any process crash (kill -9 included) without an fsync
                # each; after a power loss the newest completions may be lost and those steps
                # run again, and then the side-effect ledger (written through the app's fully
                # synchronous connections) stops an effect from happening twice.
                dbapi_connection.execute("PRAGMA synchronous=NORMAL")

            @event.listens_for(engine, "begin")
            def _immediate(conn: Connection) -> None:
                if conn.get_execution_options().get("harmonic_read_only"):
                    conn.exec_driver_sql("BEGIN")  # a snapshot; takes no write lock
                else:
                    conn.exec_driver_sql("BEGIN IMMEDIATE")

            _engines[url] = engine
        return engine


def queue_engine() -> Engine:
    app_engine = db.engine
    if app_engine.dialect.name != "sqlite":
        return app_engine
    return _sqlite_engine(app_engine.url.render_as_string(hide_password=False))


def is_postgres() -> bool:
    return db.engine.dialect.name == "postgresql"


class _Pin(threading.local):
    active = False
    conn: Connection | None = None


_pin = _Pin()


@contextmanager
def pinned() -> Iterator[None]:
    """This thread's queue transactions share one connection until the block ends.

    Each checkout from the app's pool costs a reset on its return (and a ping after the
    connection sat idle, ``app.extensions.ping_after_idle``); a worker's loop would pay that
    several times per job. Here the connection is checked out once and kept; when a
    transaction on it fails, it is closed (SQLAlchemy invalidates it if the database went
    away) and the next transaction checks out a fresh one. SQLite connections are local
    files: no pin.
    """
    if _pin.active or not is_postgres():
        yield
        return
    _pin.active = True
    try:
        yield
    finally:
        _pin.active = False
        _unpin()


def _unpin() -> None:
    conn, _pin.conn = _pin.conn, None
    if conn is not None:
        conn.close()


@contextmanager
def _pinned_transaction() -> Iterator[Connection]:
    if _pin.conn is None:
        _pin.conn = queue_engine().connect()
    conn = _pin.conn
    try:
        with conn.begin():
            yield conn
    except BaseException:
        _unpin()  # whatever went wrong, the next transaction starts on a fresh connection
        raise


@contextmanager
def transaction() -> Iterator[Connection]:
    """One queue transaction: committed on success, rolled back on any error.

    The changes it records (``changes.record(..., conn=conn)``) are written to the outbox as
    its body ends, and told to this process's listeners only once it has committed.
    """
    with _begin() as conn, changes.staging(conn) as changed:
        yield conn
    changes.deliver(changed)


@contextmanager
def _begin() -> Iterator[Connection]:
    if _pin.active:
        with _pinned_transaction() as conn:
            yield conn
        return
    with queue_engine().begin() as conn:
        yield conn


@contextmanager
def reading() -> Iterator[Connection]:
    """A read-only snapshot (no write lock on SQLite)."""
    if _pin.active:  # PostgreSQL only: the read-only option matters to SQLite's BEGIN alone
        with _pinned_transaction() as conn:
            yield conn
        return
    with queue_engine().connect() as conn:
        conn = conn.execution_options(harmonic_read_only=True)
        with conn.begin():
            yield conn

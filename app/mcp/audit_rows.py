"""How the audit log's rows reach the database: a batch in one transaction, on an engine of
the audit's own for the rows of read-only calls, through the app's pool for the others.

A read's row needs no disk flush (``app.mcp.audit`` says why). Each app (in each process)
therefore keeps a small engine beside the app's, made from the same URL with one connection,
whose connections are set once, as they open, to the lower flush level (SQLite
``synchronous=NORMAL``, PostgreSQL ``synchronous_commit=off``; its ``application_name`` there
is ``harmonic-audit``): a pooled connection of the app's own would have to be set there and
back for every batch, since it goes on to serve writes. That one connection stays checked out
from one batch to the next, and it is in autocommit: a batch is one statement, so it is its
own transaction, and no BEGIN or COMMIT is sent around it (a lone row, the usual batch when
calls do not overlap, is the statement built once at import; several rows are one ``INSERT``
with a ``VALUES`` group each). Values are converted by the columns' own types as everywhere.

If that engine fails (a database restart, a dead server connection), it is dropped and the
batch goes through the app's pool as before; the next batch makes a new one. No row is lost
to it. A row of a call that may write goes through the pool with the full flush: the record
of a change is as durable as the change. The engine lives as every engine beside the app's
does (``app.db.beside``): none for an in-memory database, its own in a forked worker, closed
with the app's.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, cast

from sqlalchemy import Table, create_engine, event, insert
from sqlalchemy.engine import Connection, Engine

from app.db.beside import Beside
from app.models.mcp import McpToolCall

log = logging.getLogger("harmonic.mcp")
APPLICATION_NAME = "harmonic-audit"
# Well under SQLite's 32,766 bound parameters at the table's columns; a bigger batch (hundreds
# of calls ending at once in one process) goes through the pool.
MAX_ROWS_PER_STATEMENT = 500


def store(engine: Engine, rows: list[dict[str, Any]], durable: bool) -> None:
    """Insert the rows of ``engine``'s app in one transaction (on the audit's own engine
    unless ``durable``); if that fails, each in its own, so one bad row never costs the others
    theirs."""
    if not durable and _side_insert(engine, rows):
        return
    try:
        _pool_insert(engine, rows, durable)
        return
    except Exception:
        if len(rows) == 1:
            log.exception("could not record the call of %s", rows[0].get("tool"))
            return
    for row in rows:
        try:
            _pool_insert(engine, [row], durable)
        except Exception:
            log.exception("could not record the call of %s", row.get("tool"))


def _side_insert(engine: Engine, rows: list[dict[str, Any]]) -> bool:
    """Insert on the audit's own engine; False (and the engine dropped) if it cannot."""
    if len(rows) > MAX_ROWS_PER_STATEMENT:
        return False
    try:
        side = AUDIT_BESIDE.get(engine)
    except Exception as exc:
        log.warning("could not open the audit's own connection (%s); writing through the "
                    "pool", _first_line(exc))
        return False
    if side is None:
        return False
    try:
        side.insert(rows)
        return True
    except Exception as exc:  # expected after a database restart: one line, no traceback
        log.warning("the audit's own connection failed (%s); this batch goes through the "
                    "pool and the next opens a new one", _first_line(exc))
        AUDIT_BESIDE.drop(engine)
        return False


class _Side:
    """The audit's own engine and its one connection, kept checked out from one batch to the
    next: a checkout and check-in around every row cost more than the row's statement."""

    def __init__(self, engine: Engine) -> None:
        self.engine = _side_engine(engine)
        self.connection: Connection | None = None  # opened by the first batch
        # One batch at a time (the group commit's writer), and closing waits for it: the
        # engine may be disposed of from another thread.
        self._lock = threading.Lock()

    def insert(self, rows: list[dict[str, Any]]) -> None:
        with self._lock:
            if self.connection is None:
                self.connection = self.engine.connect()
            # In autocommit: each statement is its own transaction, and the connection is
            # never left inside one.
            if len(rows) == 1:
                self.connection.execute(_INSERT, rows[0])
            else:
                # Not kept in the engine's statement cache: each batch size would be an
                # entry of its own, and a batch is rare enough to compile afresh.
                self.connection.execute(insert(_table()).values(rows),
                                        execution_options={"compiled_cache": None})

    def close(self) -> None:
        with self._lock:
            connection, self.connection = self.connection, None
            if connection is not None:
                try:
                    connection.close()
                except Exception:  # already gone with the server: nothing left to release
                    pass
            self.engine.dispose()


def _table() -> Table:
    return cast(Table, McpToolCall.__table__)  # typed as any FromClause; a declarative Table


_INSERT = insert(_table())  # one row or many (executemany): its SQL is compiled once per engine


def _side_engine(engine: Engine) -> Engine:
    """An engine on ``engine``'s database, one connection in autocommit, at the lower flush
    level."""
    sqlite = engine.dialect.name == "sqlite"
    side = create_engine(engine.url, pool_size=1, max_overflow=0, isolation_level="AUTOCOMMIT",
                         connect_args={} if sqlite else {"application_name": APPLICATION_NAME})

    @event.listens_for(side, "connect")
    def _lower_flush_level(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA synchronous=NORMAL" if sqlite
                           else "SET SESSION synchronous_commit = off")
        finally:
            cursor.close()
        if not sqlite:
            dbapi_connection.commit()  # a transaction the driver may have begun for the SET

    return side


AUDIT_BESIDE = Beside(_Side, _Side.close)


def _pool_insert(engine: Engine, rows: list[dict[str, Any]], durable: bool) -> None:
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        if sqlite and not durable:
            # Outside a transaction (SQLite ignores it inside one); set back below, since the
            # pooled connection goes on to serve writes that need the full flush.
            conn.exec_driver_sql("PRAGMA synchronous=NORMAL")
            conn.commit()
        try:
            if not durable and not sqlite:
                conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
            conn.execute(_INSERT, rows)
            conn.commit()
        finally:
            if sqlite and not durable:
                conn.rollback()  # a failed insert's transaction, if any
                conn.exec_driver_sql("PRAGMA synchronous=FULL")
                conn.commit()


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]

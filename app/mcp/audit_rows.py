"""How the audit log's rows reach the database: a batch in one transaction, on a connection of
the app's own for the rows of read-only calls, through the app's pool for the others.

A read's row needs no disk flush (``app.mcp.audit`` says why), and writing it through the
pool cost more than the rest of navigate's own work together: a checkout and check-in, the
statement built and compiled again, and on SQLite two extra ``PRAGMA synchronous`` round trips
to lower the flush level and set it back (a pooled connection goes on to serve writes). Each
app (in each process) therefore keeps one DBAPI connection beside the pool, opened from the
engine's own URL and settings, that never serves anything else and so stays at the lower
level for good (SQLite ``synchronous=NORMAL``, PostgreSQL ``synchronous_commit=off``; its
``application_name`` there is ``harmonic-audit``). Its rows go in as one
multi-row ``INSERT`` with the SQL text made once and each value converted by the column
type's own bind processor, so a row reads back exactly as one inserted through SQLAlchemy.

If that connection fails (a database restart, a dead server connection), it is dropped and
the batch goes through the pool as before; the next batch opens a new one. No row is lost
to it. A row of a call that may write goes through the pool with the full flush: the record
of a change is as durable as the change.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, cast

from sqlalchemy import Table, insert
from sqlalchemy.engine import Engine

from app.models import side_connections
from app.models.mcp import McpToolCall

log = logging.getLogger("harmonic.mcp")
APPLICATION_NAME = "harmonic-audit"
# Well under SQLite's 32,766 bound parameters at 13 columns; a bigger batch (hundreds of calls
# ending at once in one process) goes through the pool.
MAX_ROWS_PER_STATEMENT = 500


class RowStore:
    """Where one app's audit rows go: its side connection for rows that need no flush (opened
    on first use, again after a failure, anew in a forked worker, closed with the engine's
    pool), the pool for the others and whenever the side connection cannot take them."""

    def __init__(self) -> None:
        self._side: SideConnection | None = None
        self._watched: Engine | None = None
        self._lock = threading.Lock()

    def store(self, engine: Engine, rows: list[dict[str, Any]], durable: bool) -> None:
        """Insert the rows in one transaction; if that fails, each in its own, so one bad row
        never costs the others theirs."""
        if not durable and self._side_insert(engine, rows):
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

    def _side_insert(self, engine: Engine, rows: list[dict[str, Any]]) -> bool:
        """Insert on the side connection; False (and the connection dropped) if it cannot."""
        side = self._connection(engine)
        if side is None or not side.fits(rows):
            return False
        try:
            side.insert(rows)
            return True
        except Exception as exc:  # expected after a database restart: one line, no traceback
            log.warning("the audit's own connection failed (%s); this batch goes through the "
                        "pool and the next opens a new one", _first_line(exc))
            self._drop(side)
            return False

    def _connection(self, engine: Engine) -> SideConnection | None:
        with self._lock:
            side = self._side
            if side is not None and side.engine is engine and side.pid == os.getpid():
                return side
            if side is not None and side.pid != os.getpid():
                # A forked worker opens its own, and never closes its parent's: closing a
                # SQLite file's descriptor drops every lock this process holds on that file.
                _INHERITED.append(side)
            if not side_connections.usable(engine):
                return None
            try:
                self._side = side = SideConnection(engine)
            except Exception as exc:
                log.warning("could not open the audit's own connection (%s); writing through "
                            "the pool", _first_line(exc))
                return None
            watch = self._watched is not engine
            self._watched = engine
        if watch:
            # The engine disposed (its app shut down, tests ending, a database about to be
            # dropped): this connection must not outlive the pool's.
            side_connections.when_disposed(engine, self._on_dispose)
        return side

    def _on_dispose(self, _engine: Engine) -> None:
        side = self._side
        if side is not None:
            self._drop(side)

    def _drop(self, side: SideConnection) -> None:
        with self._lock:
            if self._side is side:
                self._side = None
        side.close()


def _pool_insert(engine: Engine, rows: list[dict[str, Any]], durable: bool) -> None:
    table = cast(Table, McpToolCall.__table__)  # typed as any FromClause; a declarative Table
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
            conn.execute(insert(table), rows)
            conn.commit()
        finally:
            if sqlite and not durable:
                conn.rollback()  # a failed insert's transaction, if any
                conn.exec_driver_sql("PRAGMA synchronous=FULL")
                conn.commit()


class SideConnection:
    """An app's own connection for rows that need no flush (one writer at a time: the group
    commit in ``app.mcp.audit`` holds the writer's turn while it inserts)."""

    def __init__(self, engine: Engine) -> None:
        dialect = engine.dialect
        table = cast(Table, McpToolCall.__table__)
        self.pid = os.getpid()
        self.engine = engine
        self.columns = [column.key for column in table.columns]
        self._keys = frozenset(self.columns)
        # Each column's conversion as SQLAlchemy would do it (UUIDs as SQLite's hex text, times
        # in the app's own format): the row reads back the same either way.
        self._convert = [column.type.dialect_impl(dialect).bind_processor(dialect)
                         for column in table.columns]
        quote = dialect.identifier_preparer.quote
        self._head = (f"INSERT INTO {quote(table.name)} "
                      f"({', '.join(quote(name) for name in self.columns)}) VALUES ")
        mark = "?" if dialect.paramstyle == "qmark" else "%s"
        self._group = f"({', '.join([mark] * len(self.columns))})"
        self.sqlite = dialect.name == "sqlite"
        # In autocommit: one statement, its own transaction.
        self.dbapi = side_connections.open_dbapi(engine, APPLICATION_NAME)
        try:
            self.dbapi.execute("PRAGMA synchronous=NORMAL" if self.sqlite
                               else "SET synchronous_commit = off")
        except Exception:
            self.close()
            raise

    def fits(self, rows: list[dict[str, Any]]) -> bool:
        """Whether the batch fits one statement and every row gives exactly the table's
        columns (nothing left to a default)."""
        return len(rows) <= MAX_ROWS_PER_STATEMENT and all(row.keys() == self._keys
                                                           for row in rows)

    def insert(self, rows: list[dict[str, Any]]) -> None:
        """All the rows in one statement: one transaction."""
        values: list[Any] = []
        for row in rows:
            values.extend(value if convert is None else convert(value)
                          for convert, value in zip(self._convert,
                                                    (row[name] for name in self.columns),
                                                    strict=True))
        cursor = self.dbapi.cursor()
        try:
            cursor.execute(self._head + ", ".join([self._group] * len(rows)), values)
        finally:
            cursor.close()

    def close(self) -> None:
        side_connections.close_quietly(self.dbapi)


_INHERITED: list[SideConnection] = []  # a parent's, kept open and unused in a forked child


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]

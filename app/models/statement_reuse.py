"""Statements PostgreSQL keeps prepared from one request to the next.

psycopg prepares a statement on the server once it has run it five times on a connection, and
then skips its parsing and planning. But it forgets every prepared statement of a connection
whenever a transaction there is rolled back (and tells the server: ``DEALLOCATE ALL``), to stay
safe from objects a rolled-back transaction made. SQLAlchemy ends every transaction that did
not commit with a rollback: each request's session closing, the pool's reset of a returned
connection. So every request's statements were parsed and planned anew, and the statements of
a page (about ten) spent more time in PostgreSQL's planner than in running
(``bench/core_pages.py --quick --both``, "its SQL alone": the decision page's statements took
3.6 ms rolled back after each page and 2.3 ms kept prepared).

A transaction in which PostgreSQL assigned no transaction id wrote nothing: no row inserted,
updated, deleted or locked, no table made. Committing it is then the same as rolling it back,
and a commit keeps the prepared statements. So a rollback of an open transaction first asks the
server (``txid_current_if_assigned()``, one round trip, itself prepared after five), commits
when nothing was written, and rolls back otherwise (a change that failed, or was abandoned,
is still undone). A transaction already failed, or a question that fails, rolls back as
before. Transactions that commit their change never come here with anything open.

Since ``app.models.begin_at_write`` a transaction that only reads plain SELECTs never begins on
the server, so it never comes here either; this still serves one that began for a read that
needed it (a locking read, a WITH, a server-side cursor) and then wrote nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine

_ASKED = "SELECT txid_current_if_assigned()"


def keep_prepared_statements(engine: Engine) -> None:
    """End the engine's read-only transactions with a commit (psycopg only; others unchanged)."""
    dialect = engine.dialect
    if dialect.driver != "psycopg" or getattr(dialect, "_keeps_prepared", False):
        return
    from psycopg import pq

    rollback: Callable[[Any], None] = dialect.do_rollback
    open_transaction = pq.TransactionStatus.INTRANS

    def do_rollback(connection: Any) -> None:
        # SQLAlchemy passes its pool's proxy or the driver's connection itself.
        driver_connection = getattr(connection, "dbapi_connection", None) or connection
        try:
            if driver_connection.pgconn.transaction_status != open_transaction:
                rollback(connection)  # failed (it must roll back) or idle (nothing to end)
                return
            cursor = driver_connection.cursor()
            try:
                cursor.execute(_ASKED)
                row = cursor.fetchone()
            finally:
                cursor.close()
        except Exception:  # noqa: BLE001 - the rollback says what is wrong, if anything is
            rollback(connection)
            return
        if row is None or row[0] is not None:
            rollback(connection)  # something was written: undo it
        else:
            driver_connection.commit()

    dialect.do_rollback = do_rollback  # type: ignore[method-assign, assignment]
    dialect._keeps_prepared = True  # type: ignore[attr-defined]

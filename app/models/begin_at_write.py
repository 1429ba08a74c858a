"""PostgreSQL transactions that begin at their first write: a request that only reads sends
no BEGIN, no COMMIT and no question whether it wrote.

Under PostgreSQL's default isolation (READ COMMITTED) every statement of a transaction reads
from its own snapshot, taken when the statement starts: a plain SELECT answers the same in a
transaction and alone (autocommit). For a request that only reads, the transaction only cost
round trips: the BEGIN psycopg sends before the first statement, and at the end the question
whether anything was written (``app.models.statement_reuse``) and the COMMIT. On the decision
page that was three round trips of seven.

So when SQLAlchemy begins a transaction, the connection is put in autocommit and marked. A
plain read runs as it is. The first statement that is not one first takes the connection out
of autocommit, so psycopg sends BEGIN before it and the transaction holds it and everything
after it, exactly as before: an INSERT, UPDATE or DELETE, a SAVEPOINT, a WITH, anything that
does not begin with SELECT, a locking read (FOR UPDATE, FOR SHARE: its lock must last until the
end), a SELECT of a function whose effect belongs to a transaction (advisory locks,
notifications, settings, sequences), and a server-side cursor (PostgreSQL keeps one only in a
transaction). A transaction that never wrote ends with nothing to send; either way the
connection leaves autocommit when its transaction ends.

Left as they are: a connection in another isolation level (REPEATABLE READ and SERIALIZABLE
reads share one snapshot, which only a transaction gives), one already in autocommit (a read
asked for alone, ``app.models.plain_reads.read_alone``), and SQLite.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine

MARK = "_harmonic_begins_at_write"  # set on a driver connection in autocommit until its write

# A SELECT with any of these may need the transaction it would otherwise run without.
_NEEDS_TRANSACTION = re.compile(
    r"\bFOR\s+(?:NO\s+KEY\s+UPDATE|KEY\s+SHARE|UPDATE|SHARE)\b"
    r"|advisory|pg_notify|set_config|nextval|setval|txid_current|pg_current_xact_id",
    re.IGNORECASE)
_KNOWN_LIMIT = 4096
_known: dict[str, bool] = {}  # statement text -> whether it is a plain read (texts repeat)


def plain_read(statement: str) -> bool:
    """Whether ``statement`` may run outside the transaction: a SELECT that locks nothing and
    calls nothing whose effect lasts until the transaction's end."""
    found = _known.get(statement)
    if found is None:
        found = (statement.lstrip()[:6].upper() == "SELECT"
                 and _NEEDS_TRANSACTION.search(statement) is None)
        if len(_known) >= _KNOWN_LIMIT:
            _known.clear()
        _known[statement] = found
    return found


def reading_only(driver: Any) -> bool:
    """Whether the transaction on this driver connection has not begun on the server yet:
    it has sent only plain reads, each answered from the database as committed then."""
    return bool(getattr(driver, MARK, False))


def _driver(connection: Any) -> Any:
    # SQLAlchemy hands the dialect its pool's proxy or the driver's connection itself.
    return getattr(connection, "dbapi_connection", None) or connection


def begin_at_write(engine: Engine) -> None:
    """Make ``engine``'s transactions begin at their first write (psycopg only)."""
    dialect = engine.dialect
    if dialect.driver != "psycopg" or getattr(dialect, "_begins_at_write", False):
        return
    from psycopg import IsolationLevel, pq

    idle = pq.TransactionStatus.IDLE
    read_committed = (None, IsolationLevel.READ_COMMITTED)
    commit: Callable[[Any], None] = dialect.do_commit
    rollback: Callable[[Any], None] = dialect.do_rollback
    execute, execute_no_params = dialect.do_execute, dialect.do_execute_no_params
    executemany = dialect.do_executemany

    def do_begin(connection: Any) -> None:
        driver = _driver(connection)
        if (not driver.autocommit and driver.isolation_level in read_committed
                and driver.pgconn.transaction_status == idle):
            driver.autocommit = True
            setattr(driver, MARK, True)

    def leave_autocommit(driver: Any) -> None:
        setattr(driver, MARK, False)
        driver.autocommit = False  # psycopg sends BEGIN before the next statement

    def before(cursor: Any, statement: str, context: Any) -> None:
        driver = cursor.connection
        if getattr(driver, MARK, False) and (
                not plain_read(statement) or (context is not None and context._is_server_side)):
            leave_autocommit(driver)

    def do_execute(cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        before(cursor, statement, context)
        execute(cursor, statement, parameters, context)

    def do_execute_no_params(cursor: Any, statement: str, context: Any = None) -> None:
        before(cursor, statement, context)
        execute_no_params(cursor, statement, context)

    def do_executemany(cursor: Any, statement: str, parameters: Any,
                       context: Any = None) -> None:
        if getattr(cursor.connection, MARK, False):
            leave_autocommit(cursor.connection)
        executemany(cursor, statement, parameters, context)

    def ended(connection: Any) -> bool:
        """Whether the transaction ending on ``connection`` never began on the server (then
        nothing is sent, and the connection leaves autocommit for the next one)."""
        driver = _driver(connection)
        if not getattr(driver, MARK, False):
            return False
        leave_autocommit(driver)
        return True

    def do_commit(connection: Any) -> None:
        if not ended(connection):
            commit(connection)

    def do_rollback(connection: Any) -> None:
        if not ended(connection):
            rollback(connection)

    dialect.do_begin = do_begin  # type: ignore[method-assign, assignment]
    dialect.do_execute = do_execute  # type: ignore[method-assign]
    dialect.do_execute_no_params = do_execute_no_params  # type: ignore[method-assign]
    dialect.do_executemany = do_executemany  # type: ignore[method-assign]
    dialect.do_commit = do_commit  # type: ignore[method-assign, assignment]
    dialect.do_rollback = do_rollback  # type: ignore[method-assign, assignment]
    dialect._begins_at_write = True  # type: ignore[attr-defined]

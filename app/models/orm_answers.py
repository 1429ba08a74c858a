"""Entity queries answered from reads sent ahead: the ORM is handed the driver's cursor that
already holds its answer.

``app.models.plain_reads.together`` sends a page's independent reads to PostgreSQL in one
pipeline. Plain reads take their rows from it; an entity query (``db.session.scalars`` of a
``select(Model)``) goes through the ORM, which loads its entities from the cursor it executes
on. So the dialect's execute is wrapped here: when the statement text and its parameters, as
the driver takes them, are those of an answer waiting on that driver connection, the ORM's
fresh cursor is closed and the answer's cursor put in its place (the execution context's
``cursor``, which SQLAlchemy reads the result from after the execute); nothing is sent. The
ORM then loads, identity map and eager loads included, exactly as from its own answer.

Answers wait only inside the block, on the connection they were sent on, and only while the
request holds it: a connection given back to the pool (a commit in the block releases it)
drops them, so no other request's read takes them. A statement on that connection that is not
a plain read (a flush's INSERT, a locking read, anything that begins the transaction:
``app.models.begin_at_write.plain_read``) drops them first: they could not have seen what it
writes. psycopg only; SQLite sends nothing ahead.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from app.models.begin_at_write import plain_read
from app.models.plain_reads import ON_DRIVER, drop, take_cursor


def hand_answers_to_orm(engine: Engine) -> None:
    """Wrap ``engine``'s dialect so the ORM's reads take answers sent ahead (psycopg only;
    after ``begin_at_write``, whose execute this one calls when no answer is taken)."""
    dialect = engine.dialect
    if dialect.driver != "psycopg" or getattr(dialect, "_hands_answers", False):
        return
    execute, execute_no_params = dialect.do_execute, dialect.do_execute_no_params
    executemany = dialect.do_executemany

    def waiting_on(cursor: Any) -> list[Any] | None:
        return getattr(cursor.connection, ON_DRIVER, None)

    def do_execute(cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        waiting = waiting_on(cursor)
        if waiting:
            if context is not None:
                answered = take_cursor(waiting, statement, parameters)
                if answered is not None:
                    cursor.close()
                    context.cursor = answered  # the result is read from here
                    return
            if not plain_read(statement):
                drop(waiting)
        execute(cursor, statement, parameters, context)

    def do_execute_no_params(cursor: Any, statement: str, context: Any = None) -> None:
        waiting = waiting_on(cursor)
        if waiting and not plain_read(statement):
            drop(waiting)
        execute_no_params(cursor, statement, context)

    def do_executemany(cursor: Any, statement: str, parameters: Any,
                       context: Any = None) -> None:
        waiting = waiting_on(cursor)
        if waiting:
            drop(waiting)
        executemany(cursor, statement, parameters, context)

    @event.listens_for(engine, "checkin")
    def given_back(dbapi_connection: Any, _record: Any) -> None:
        waiting = getattr(dbapi_connection, ON_DRIVER, None)
        if waiting:
            drop(waiting)

    dialect.do_execute = do_execute  # type: ignore[method-assign]
    dialect.do_execute_no_params = do_execute_no_params  # type: ignore[method-assign]
    dialect.do_executemany = do_executemany  # type: ignore[method-assign]
    dialect._hands_answers = True  # type: ignore[attr-defined]

"""Reads: one query, or several whose answers all come back to the caller at once.

A read is a ``Query``: a statement, its parameters, and ``answer``, which turns its rows into
what the caller wants (a list, one value, rows made named tuples...). A service names each of
its reads once, as a function returning its ``Query``; the caller runs it alone (``read``) or
with others (``read_many``), and gets every answer back, in order. Nothing is sent ahead and
matched later.

Statements of plain columns run on the session's connection through SQLAlchemy Core (in the
session's transaction, so they see what a ``writing`` block has flushed; while reading, in
autocommit: ``app.db.session``). Statements that select entities go through the ORM session,
which builds them and keeps them in its identity map.

While reading alone, column statements run on the driver's cursor of the same connection,
compiled once per statement and database (``_Compiled``: SQLAlchemy compiles it, with
``construct_expanded_state``, which also expands ``IN`` lists; its types convert the values
both ways, ``bind_processor`` and ``result_processor``; the rows are SQLAlchemy ``Row``s, as
Core makes them), which skips Core's execution context around each statement; on PostgreSQL,
``read_many`` sends them in one pipeline (psycopg's pipeline mode on the session's own
connection, reached through ``Connection.connection``), so one round trip brings every answer.
If the driver fails, the queries run again one after another through Core, which raises its
own error (and, for a lost connection, replaces the pool's connections as everywhere else).
In a ``writing`` block the queries run through Core, in the block's transaction.

``HARMONIC_DB_PIPELINE = False`` turns off the driver's cursor and the pipeline (a statement
counter listening to the engine's events sees every statement then).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from typing import Any, Generic, NamedTuple, TypeVar, overload

from flask import current_app
from sqlalchemy import Executable
from sqlalchemy.engine import Connection, Dialect, result_tuple
from sqlalchemy.orm import Session

from app.db.session import in_reading_transaction, reading_engine, reads_alone_now
from app.extensions import db

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")
E = TypeVar("E")


def all_rows(rows: Sequence[Any]) -> list[Any]:
    return list(rows)


def first_value(rows: Sequence[Any]) -> Any:
    """The first column of the first row, None without rows."""
    return rows[0][0] if rows else None


def first_row(rows: Sequence[Any]) -> Any:
    return rows[0] if rows else None


class Query(NamedTuple, Generic[T]):
    """A read: ``statement`` with ``params``, its rows turned into the answer by ``answer``.
    Without a statement (``known``), the answer needs no database: ``answer([])``."""
    statement: Executable | None
    params: Mapping[str, Any]
    answer: Callable[[Sequence[Any]], T]


def known(value: T) -> Query[T]:
    """A read whose answer is known without asking (an anonymous caller's own votes)."""
    return Query(None, {}, lambda _rows: value)


def rows_of(statement: Executable, params: Mapping[str, Any] | None = None
            ) -> Query[list[Any]]:
    """A query whose answer is its rows."""
    return Query(statement, params or {}, all_rows)


def value_of(statement: Executable, params: Mapping[str, Any] | None = None) -> Query[Any]:
    """A query whose answer is its first row's first value (None without rows)."""
    return Query(statement, params or {}, first_value)


def read(query: Query[T]) -> T:
    """Run one query; its answer."""
    if query.statement is None:
        return query.answer([])
    if _selects_entities(query.statement):
        return query.answer(_ready_session().execute(query.statement, query.params).all())
    with _connection() as (connection, alone):
        return query.answer(_many(connection, alone, [query], None)[0])


def _past_core() -> bool:
    """Whether reads may go to the driver past Core (``HARMONIC_DB_PIPELINE``, on unless set
    to False: a statement counter listening to the engine's events turns it off to see every
    statement)."""
    return bool(current_app.config.get("HARMONIC_DB_PIPELINE", True))


@overload
def read_many(a: Query[A], b: Query[B], /) -> tuple[A, B]: ...
@overload
def read_many(a: Query[A], b: Query[B], c: Query[C], /) -> tuple[A, B, C]: ...
@overload
def read_many(a: Query[A], b: Query[B], c: Query[C], d: Query[D], /) -> tuple[A, B, C, D]: ...
@overload
def read_many(a: Query[A], b: Query[B], c: Query[C], d: Query[D], e: Query[E], /
              ) -> tuple[A, B, C, D, E]: ...
@overload
def read_many(*queries: Query[Any]) -> tuple[Any, ...]: ...


def read_many(*queries: Query[Any]) -> tuple[Any, ...]:
    """Run several queries that need no answer of one another; their answers, in order
    (pipelined on PostgreSQL, see the module's docstring)."""
    if any(_selects_entities(query.statement) for query in queries if query.statement is not None):
        session = _ready_session()  # the ORM's entities need the session's own connection
        found = _many(session.connection(), in_reading_transaction(session), queries, session)
    else:
        with _connection() as (connection, alone):
            found = _many(connection, alone, queries, None)
    return tuple(query.answer(rows) for query, rows in zip(queries, found, strict=True))


def _many(connection: Connection, alone: bool, queries: Sequence[Query[Any]],
          session: Session | None) -> list[Sequence[Any]]:
    def one(query: Query[Any]) -> Sequence[Any]:
        if query.statement is None:
            return []
        if session is not None and _selects_entities(query.statement):
            return session.execute(query.statement, query.params).all()
        return connection.execute(query.statement, query.params).all()

    found = _on_driver(connection, queries, one) if alone else None
    return found if found is not None else [one(query) for query in queries]


def _ready_session() -> Session:
    """The session, with its pending changes flushed (as the ORM does before its reads)."""
    session = db.session()
    if session.autoflush:
        session.flush()  # returns at once when nothing is pending
    return session


@contextmanager
def _connection() -> Iterator[tuple[Connection, bool]]:
    """Where column statements run, and whether each runs alone (in autocommit): the
    session's connection, in its transaction (a reading one while serving, else what a
    ``writing`` block or the code outside a call has begun); or, while serving a call whose
    session has begun nothing yet, a pooled connection of the reading engine for these reads
    only, which spares a call that reads only columns the session's making and ending.
    Reading alone, both answer the same: whatever was committed as each ran."""
    scoped = db.session
    if not (scoped.registry.has() and scoped().in_transaction()) and reads_alone_now():
        with reading_engine(db.engine).connect() as connection:
            yield connection, True
        return
    session = _ready_session()
    yield session.connection(), in_reading_transaction(session)


# Services build their statements once, so these caches stay as small as the code; bounded all
# the same (a statement built per call passes through).
@lru_cache(maxsize=4096)
def _selects_entities(statement: Executable) -> bool:
    """Whether the statement selects an entity (its type is a mapped class, not a column's)."""
    descriptions = getattr(statement, "column_descriptions", None) or ()
    return any(isinstance(found["type"], type) for found in descriptions)


# -- compiled once: the driver's cursor, and PostgreSQL's pipeline ------------------------------

class _Compiled:
    """A column statement compiled for one dialect, with what reads its answer: each column's
    result processor (by the type codes the driver describes with its first answer) and the
    rows' factory."""

    def __init__(self, statement: Executable, dialect: Dialect) -> None:
        self.compiled = statement.compile(dialect=dialect)  # type: ignore[attr-defined]
        self.types = [column.type.dialect_impl(dialect)
                      for column in statement.selected_columns]  # type: ignore[attr-defined]
        self.processors: list[Any] | None = None
        self.make: Callable[[Any], Any] | None = None
        # Without an expanding parameter (an IN list), the SQL, the order of its parameters
        # and their converters are the same for every call: kept after the first.
        self.expands = any(bind.expanding for bind in self.compiled.binds.values())
        # What converts each value on its way in (the expanded state names only those of
        # the ``IN`` lists it made).
        self.converters = {name: found for name, bind in self.compiled.binds.items()
                           if (found := bind.type.dialect_impl(dialect).bind_processor(dialect))}
        self.fixed: tuple[str, Sequence[str] | None, Mapping[str, Any]] | None = None

    def bound(self, params: Mapping[str, Any]) -> tuple[str, Any]:
        """The SQL and the values to send for ``params``, converted by the types (``IN`` lists
        expanded), in the driver's parameter style."""
        if self.fixed is not None:  # the SQL never changes: only the values are made anew
            statement, positions, processors = self.fixed
            given = self.compiled.construct_params(params)
        else:
            state = self.compiled.construct_expanded_state(dict(params))
            statement, positions = state.statement, state.positiontup
            processors = {**self.converters, **state.processors}
            given = state.parameters
            if not self.expands:
                self.fixed = (statement, positions, processors)
        values = {name: processors[name](value) if name in processors else value
                  for name, value in given.items()}
        if positions is None:
            return statement, values
        return statement, tuple(values[name] for name in positions)

    def rows(self, cursor: Any, dialect: Dialect) -> list[Any]:
        fetched = cursor.fetchall()
        if self.make is None:
            described = cursor.description
            self.processors = [kind.result_processor(dialect, column[1])
                               for kind, column in zip(self.types, described, strict=True)]
            self.make = result_tuple([column[0] for column in described])
        make, processors = self.make, self.processors
        assert processors is not None
        if not any(processors):
            return [make(row) for row in fetched]
        steps = list(enumerate(processors))
        return [make([process(row[at]) if process else row[at] for at, process in steps])
                for row in fetched]


@lru_cache(maxsize=4096)
def _compiled(statement: Executable | None, dialect: Dialect) -> _Compiled | None:
    """The statement compiled for the driver's cursor, or None: one Core runs (not a select of
    columns)."""
    if not hasattr(statement, "selected_columns") or _selects_entities(statement):
        return None
    return _Compiled(statement, dialect)  # type: ignore[arg-type]


def _on_driver(connection: Connection, queries: Sequence[Query[Any]],
               one: Callable[[Query[Any]], Sequence[Any]]) -> list[Sequence[Any]] | None:
    """Every query's rows, its column statements run on the driver's cursor of
    ``connection`` (in autocommit: a failed statement then spoils no transaction, and the
    queries can run again through Core), on PostgreSQL several in one pipeline; None when
    turned off, or when none is a column statement."""
    dialect = connection.dialect
    if not _past_core():
        return None
    compiled = [_compiled(query.statement, dialect) for query in queries]
    if not any(compiled):
        return None
    driver = connection.connection.driver_connection
    assert driver is not None
    pipelined = dialect.driver == "psycopg" and sum(found is not None for found in compiled) > 1
    cursors: list[Any] = []
    try:
        with driver.pipeline() if pipelined else nullcontext():
            for query, found in zip(queries, compiled, strict=True):
                cursors.append(driver.cursor() if found is not None else None)
                if found is not None:
                    cursors[-1].execute(*found.bound(query.params))
        return [found.rows(cursor, dialect) if found is not None else one(query)
                for query, found, cursor in zip(queries, compiled, cursors, strict=True)]
    except Exception:  # noqa: BLE001 - run again one after another: Core reports the error
        return None
    finally:
        for cursor in cursors:
            if cursor is not None:
                cursor.close()

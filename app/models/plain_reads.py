"""Reads of plain columns through the session's own connection, skipping the ORM's steps.

``Session.execute`` takes every statement through the ORM (its execution state and hooks, the
ORM compile state, the ORM result setup) even when it selects no entity: about 150 µs a
statement on a loaded two-core machine, more than SQLite needs to answer the counts and short
lists every page reads. A statement of plain columns gets the same rows, of the same types, from
the session's connection — the same transaction, so the same snapshot. What ``Session.execute``
does first is kept: pending changes are flushed when autoflush is on, so a read sees what the
request wrote. Entities (anything the identity map must know) still go through the session.

The statements given here are built once at import, so each is also compiled once per dialect
and then run on the driver's cursor of that same connection, with SQLAlchemy's own bind and
result processors for its column types (``bench/statement_cost.py``: SQLAlchemy Core's
execution around a short read cost about 90 µs against the driver's 15 on SQLite). Core still
runs a statement when something listens to the engine's statements (``before_cursor_execute``:
the statement counters of the tests and benchmarks see every statement), when it has an
expanding ``IN`` parameter, and again whenever the driver raises: SQLAlchemy then raises its
own error and, for a lost connection, replaces the pool's connections as everywhere else.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from flask import current_app
from sqlalchemy import Executable, bindparam, event, inspect, select
from sqlalchemy.orm import Session, make_transient_to_detached
from sqlalchemy.orm.util import identity_key

from app.extensions import db, session_exists
from app.models import begin_at_write, side_connections


class Rows(list[Any]):
    """The rows of a read (tuples that also answer to their column names), with the
    ``Result`` methods callers use."""

    def all(self) -> list[Any]:
        return list(self)

    def tuples(self) -> Rows:
        return self

    def scalar(self) -> Any:
        return self[0][0] if self else None


class PreparedRead:
    """A statement compiled for one dialect, run on the driver's cursor."""

    def __init__(self, statement: Executable, compiled: Any) -> None:
        self.statement = statement  # kept: the cache is keyed by its id
        self.compiled = compiled
        self.sql: str = compiled.string
        self.binds: dict[str, Any] = dict(compiled._bind_processors)
        self.order: tuple[str, ...] | None = (tuple(compiled.positiontup)
                                              if compiled.positional else None)
        columns = compiled._result_columns
        self.types = [column[3] for column in columns]
        self.row = namedtuple("Row", [column[0] for column in columns],  # type: ignore[misc]
                              rename=True)
        self.results: list[Any] | None = None  # per column, set from the first answer

    def bound(self, params: dict[str, Any]) -> dict[str, Any]:
        """The statement's parameters by name, each made the driver's by its type."""
        values = self.compiled.construct_params(params)
        for name, process in self.binds.items():
            values[name] = process(values[name])
        return values

    def arguments(self, params: dict[str, Any]) -> Any:
        """The parameters as the driver takes them: by position or by name."""
        values = self.bound(params)
        return tuple(values[name] for name in self.order) if self.order is not None else values

    def run(self, dbapi_connection: Any, dialect: Any, params: dict[str, Any]) -> Rows:
        cursor = dbapi_connection.cursor()  # sqlite3's cursor is no context manager
        try:
            cursor.execute(self.sql, self.arguments(params))
            return self.rows_from(cursor, dialect)
        finally:
            cursor.close()

    def rows_from(self, cursor: Any, dialect: Any) -> Rows:
        """The answer waiting on a driver's cursor, read and made ours (``rows_of``)."""
        fetched = cursor.fetchall()
        if self.results is None:
            self.choose_results([described[1] for described in cursor.description], dialect)
        return self.rows_of(fetched)

    def choose_results(self, type_codes: list[Any], dialect: Any) -> None:
        """SQLAlchemy's result processors of the columns' types, chosen once, from the first
        answer's type codes. (Only then is the cursor's description read: psycopg builds an
        object per column for it, which cost a page more than reading its rows.)"""
        self.results = [kind._cached_result_processor(dialect, code)
                        for kind, code in zip(self.types, type_codes, strict=True)]

    def rows_of(self, fetched: list[Any]) -> Rows:
        """The driver's rows made ours: the columns' result processors (``choose_results``
        first), rows named by column."""
        assert self.results is not None, "choose_results comes first"
        make, results = self.row._make, self.results  # type: ignore[attr-defined]
        if not any(results):
            return Rows(make(row) for row in fetched)
        steps = list(enumerate(results))
        return Rows(make([process(row[i]) if process else row[i] for i, process in steps])
                    for row in fetched)


# (id of the statement, dialect name) -> the prepared statement, or None: Core runs it. The
# statements are module constants, so this stays as small as the code that builds them.
_PREPARED: dict[tuple[int, str], PreparedRead | None] = {}
_SEEN: dict[tuple[int, str], Executable] = {}
_PARAMSTYLES = ("qmark", "pyformat")  # SQLite's driver and psycopg's


def prepared_read(statement: Executable, dialect: Any) -> PreparedRead | None:
    key = (id(statement), dialect.name)
    if key in _PREPARED:
        found = _PREPARED[key]
        if found is None or found.statement is statement:
            return found
    # Compiled on its second run only: a statement built anew for each call (never seen twice)
    # is left to Core's cache, which knows it by its structure.
    if _SEEN.get(key) is not statement:
        if len(_SEEN) >= 1024:
            _SEEN.clear()
        _SEEN[key] = statement
        return None
    compiled = statement.compile(dialect=dialect)  # type: ignore[attr-defined]
    simple = (dialect.paramstyle in _PARAMSTYLES and not compiled.post_compile_params
              and not compiled.literal_execute_params and not compiled.escaped_bind_names
              and not any(bind.expanding for bind in compiled.binds.values())
              and bool(compiled._result_columns))
    found = PreparedRead(statement, compiled) if simple else None
    if len(_PREPARED) >= 1024:  # bounded, should statements ever be built per call
        _PREPARED.clear()
    _PREPARED[key] = found
    return found


def execute(statement: Executable, params: dict[str, Any] | None = None) -> Rows:
    session = db.session()
    info = session.info
    waiting, early = info.get(_WAITING), info.get(_AHEAD)
    if (waiting or early) and (session.new or session.dirty or session.deleted):
        # The answers predate changes this read must see.
        for answers in (waiting, early):
            if answers:
                drop(answers)
    if session.autoflush:  # off inside ``no_autoflush``, as for Session.execute
        session.flush()  # returns at once when nothing is pending
    params = params or {}
    if waiting:
        rows = _take(waiting, statement, params)
        if rows is not None:
            return rows
    connection = session.connection()
    if early:
        # Sent as the request began: still the answer only while the request has written
        # nothing (a write through Core leaves the session without changes to see).
        if begin_at_write.reading_only(connection.connection.dbapi_connection):
            rows = _take(early, statement, params)
            if rows is not None:
                return rows
        else:
            drop(early)
    return _run(connection, statement, params)


class Answer:
    """A read sent ahead, its answer waiting on the driver's cursor until a read takes it: as
    rows (``rows``, by a read of the same statement with equal parameters) or, for an entity
    query, the cursor itself (``take_cursor``: the ORM reads it as it would its own)."""

    __slots__ = ("statement", "params", "prepared", "arguments", "cursor", "dialect")

    def __init__(self, statement: Executable, params: dict[str, Any], prepared: PreparedRead,
                 arguments: Any, cursor: Any, dialect: Any) -> None:
        self.statement, self.params, self.prepared = statement, params, prepared
        self.arguments, self.cursor, self.dialect = arguments, cursor, dialect

    def rows(self) -> Rows:
        with self.cursor:
            return self.prepared.rows_from(self.cursor, self.dialect)


def _take(answers: list[Answer], statement: Executable, params: dict[str, Any]) -> Rows | None:
    """The answer sent ahead for ``statement`` with ``params``, taken (once), or None."""
    for at, answer in enumerate(answers):
        if answer.statement is statement and answer.params == params:
            del answers[at]
            return answer.rows()
    return None


def take_cursor(answers: list[Answer], sql: str, arguments: Any) -> Any:
    """The driver's cursor holding the answer sent ahead for ``sql`` with ``arguments`` (as
    the driver takes them), taken (once), or None."""
    for at, answer in enumerate(answers):
        if answer.prepared.sql == sql and answer.arguments == arguments:
            del answers[at]
            return answer.cursor
    return None


def drop(answers: list[Answer]) -> None:
    """Drop answers no read will take: their cursors closed."""
    for answer in answers:
        answer.cursor.close()
    answers.clear()


class Read(NamedTuple):
    """A read a service will make, as ``together`` takes it: ``execute(*read)`` makes it."""
    statement: Executable
    params: dict[str, Any]


# session.info key: answers of reads sent together, each (statement, params, rows), taken by
# the ``execute`` of the same statement with equal parameters.
_WAITING = "harmonic.reads_waiting"
# session.info key: answers of reads sent ``ahead``, the same way.
_AHEAD = "harmonic.reads_ahead"
# Attribute of the driver's connection: while a ``together`` block runs, its answers, for the
# ORM's reads to take (``app.models.orm_answers``).
ON_DRIVER = "_harmonic_answers"


@contextmanager
def together(*reads: Read | None) -> Iterator[None]:
    """Send ``reads`` to PostgreSQL all at once, before the code in the block makes them.

    A page reads several things that do not depend on one another (an item's comments,
    backlinks, votes, whether it is pinned); one after the other, each waits a round trip to
    the server. Here they go out together in psycopg's pipeline mode, in the request's own
    transaction and in this order, and one round trip brings every answer back; each
    ``execute`` of the same statement with equal parameters inside the block then takes its
    answer instead of asking. What the block reads otherwise, or reads again, is asked as
    usual. Answers are dropped when the session has changes to write before a read (they could
    not have seen them) and when the block ends.

    Entity queries go too: a read the ORM makes in the block (``db.session.scalars`` of the
    same statement with equal parameters) is handed the driver's cursor that holds its answer
    (``app.models.orm_answers``), and loads its entities from it as from its own; a statement
    the block sends that is not a plain read (a flush's INSERT, a locking read) drops the
    answers first.

    Where nothing would be saved, nothing is sent ahead: SQLite (it answers in-process), a
    statement not yet prepared or one only Core may run, an engine whose statements are
    listened to (the statement counters see each read when it is made), fewer than two
    reads. If the pipeline fails, its answers are dropped and the block's reads are made as
    usual. (Before the request's first write there is no transaction on PostgreSQL to end:
    ``app.models.begin_at_write``; after one, the failure has ended it, so they fail too, as
    SQLAlchemy errors.) ``None`` in ``reads`` (a read the page skips, such as an anonymous
    caller's own votes) is left out. The block is for reads: a change written through Core in
    it (not through the session) is not seen by answers already in.
    """
    session = db.session()
    sent, driver = _send(session, [read for read in reads if read is not None])
    session.info[_WAITING] = sent
    if driver is not None:
        setattr(driver, ON_DRIVER, sent)
    try:
        yield
    finally:
        session.info.pop(_WAITING, None)
        if driver is not None:
            setattr(driver, ON_DRIVER, None)
        drop(sent)


def ahead(*reads: Read | None) -> None:
    """Send ``reads`` to PostgreSQL now, all at once, for code further on in the request.

    ``together`` without its block, for reads the request will make in another layer than the
    one that knows of them first: the sign-in, which reads the person, sends the reads of the
    page's loader and of its chrome along (``app.web.auth.READS_WITH_PERSON``), so that the
    request's first reads take one round trip instead of one each. Each answer is taken as in
    a ``together`` block, and only while the request has written nothing: once its
    transaction has begun (``app.models.begin_at_write``; a connection in another isolation
    level never reads without one), its session holds changes, or one of its transactions
    ends (a commit or a rollback), the answers are dropped and the reads are made as usual.
    What no read takes is dropped with the session at the end of the request. Nothing is sent
    where ``together`` sends nothing."""
    session = db.session()
    sent, _driver = _send(session, [read for read in reads if read is not None])
    if sent:
        session.info[_AHEAD] = (session.info.get(_AHEAD) or []) + sent


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_rollback")
def _transaction_ended(session: Session) -> None:
    # Answers sent ahead predate whatever the transaction wrote; after its end the request's
    # next transaction may look as if it had written nothing (begin_at_write.reading_only).
    answers = session.info.pop(_AHEAD, None)
    if answers:
        drop(answers)


def sends_ahead() -> bool:
    """Whether reads named for ``ahead`` or ``together`` would be sent at all: only to
    PostgreSQL (SQLite answers in-process, nothing to save), and not while statements are
    listened to. A caller may skip naming them otherwise: on SQLite that alone cost a page
    1–6% of its time."""
    engine = db.engine
    return engine.dialect.driver == "psycopg" and not engine.dispatch.before_cursor_execute


def answers_waiting() -> int:
    """How many answers sent ``together`` or ``ahead`` no read has taken yet."""
    info = db.session().info
    return len(info.get(_WAITING) or ()) + len(info.get(_AHEAD) or ())


def _send(session: Any, reads: list[Read]) -> tuple[list[Answer], Any]:
    """The answers of ``reads`` sent in one pipeline, and the driver's connection they wait on
    (None when nothing was sent)."""
    if len(reads) < 2 or not sends_ahead():
        return [], None
    if session.autoflush:
        session.flush()
    connection = session.connection()
    engine = connection.engine
    ready = [(read, prepared) for read in reads
             if (prepared := prepared_read(read.statement, engine.dialect)) is not None]
    if len(ready) < 2:
        return [], None
    dbapi_connection = connection.connection.dbapi_connection
    answers: list[Answer] = []
    try:
        with dbapi_connection.pipeline():
            for read, prepared in ready:
                arguments = prepared.arguments(read.params)
                cursor = dbapi_connection.cursor()
                answers.append(Answer(read.statement, dict(read.params), prepared, arguments,
                                      cursor, engine.dialect))
                cursor.execute(prepared.sql, arguments)
    except Exception:  # noqa: BLE001 - the block's reads run as usual and show any error
        drop(answers)
        return [], None
    return answers, dbapi_connection


def _run(connection: Any, statement: Executable, params: dict[str, Any]) -> Rows:
    """``statement`` on ``connection``: on its driver cursor when prepared, else through Core."""
    engine = connection.engine
    if not engine.dispatch.before_cursor_execute:
        prepared = prepared_read(statement, engine.dialect)
        if prepared is not None:
            try:
                return prepared.run(connection.connection.dbapi_connection, engine.dialect,
                                    params)
            except Exception:  # noqa: BLE001 - Core runs it again and raises its own error
                pass
    return Rows(connection.execute(statement, params))


def read_alone(statement: Executable, params: dict[str, Any] | None = None) -> Rows:
    """One read that needs no transaction, made before the request has begun one: on a pooled
    connection of its own in autocommit, so PostgreSQL gets the statement alone, without the
    BEGIN before it and the ROLLBACK when the request ends (three round trips become one).
    Once the request's session is in a transaction, the read joins it (``execute``)."""
    if session_exists() and db.session().in_transaction():
        return execute(statement, params)
    with db.engine.connect() as connection:
        return _run(connection.execution_options(isolation_level="AUTOCOMMIT"), statement,
                    params or {})


def read_aside(statement: Executable, params: dict[str, Any] | None = None) -> Rows:
    """``read_alone`` on one of the app's own reader connections (``app.models.side_connections``)
    instead of a pooled one: the same answer (autocommit, so whatever any process committed
    before it), without the pool's checkout, check-in and switches to and from autocommit,
    which cost several times a one-row read on SQLite.

    Like ``read_alone`` it joins the request's transaction once one is open; and it goes
    through the pool whenever the reader's way cannot serve: a statement not yet prepared or
    one Core must run (``_run``), an engine whose statements are listened to, every reader lent
    (``HARMONIC_DB_READERS`` per process, 0 for none), an in-memory database, or a reader that
    fails (it is dropped, and the pool's own error handling sees the statement)."""
    if session_exists() and db.session().in_transaction():
        return execute(statement, params)
    engine = db.engine
    prepared = (None if engine.dispatch.before_cursor_execute
                else prepared_read(statement, engine.dialect))
    readers = (side_connections.readers(engine, current_app.config.get(
        "HARMONIC_DB_READERS", side_connections.READERS_PER_ENGINE))
        if prepared is not None else None)
    connection = readers.take() if readers is not None else None
    if prepared is None or readers is None or connection is None:
        return read_alone(statement, params)
    try:
        rows = prepared.run(connection, engine.dialect, params or {})
    except Exception:  # noqa: BLE001 - the pool runs it again and raises its own error
        readers.drop(connection)
        return read_alone(statement, params)
    readers.give(connection)
    return rows


def scalar(statement: Executable, params: dict[str, Any] | None = None) -> Any:
    return execute(statement, params).scalar()


def get(model: Any, ident: Any, along: Iterable[Read | None] = ()) -> Any:
    """``Session.get(model, ident)`` for a row the session does not hold yet, read as plain
    columns and made the same entity a query would have loaded (``entity``).

    Every request loads its person this way (``Session.get`` took about 250 µs of ORM work
    around a 15 µs read on SQLite). A model with deferred columns or a composite key, or a
    row the session already holds, goes through ``Session.get`` itself. ``along``: reads sent
    ``ahead`` with this one, for the request to take later."""
    session = db.session()
    built = columns_of(model)
    if built is None or session.identity_map.get(identity_key(model, ident)) is not None:
        if along:
            ahead(*along)
        return session.get(model, ident)
    statement = _GETS.get(model)
    if statement is None:
        mapper = inspect(model)
        statement = _GETS[model] = select(*built.columns).where(
            mapper.primary_key[0] == bindparam("ident"))
    params = {"ident": ident}
    if along:
        ahead(Read(statement, params), *along)
    rows = execute(statement, params)
    return entity(model, rows[0]) if rows else None


class Columns(NamedTuple):
    """What ``entity`` builds a model from: its attributes' names and columns, in order, and
    where its key is among them."""
    keys: tuple[str, ...]
    columns: tuple[Any, ...]
    key_at: int


def columns_of(model: Any) -> Columns | None:
    """The columns ``entity`` builds ``model`` from; None for a model it cannot (deferred
    columns, a composite key)."""
    if model not in _COLUMNS:
        mapper = inspect(model)
        simple = (len(mapper.primary_key) == 1 and
                  not any(prop.deferred for prop in mapper.column_attrs))
        keys = tuple(prop.key for prop in mapper.column_attrs)
        key_at = next((at for at, prop in enumerate(mapper.column_attrs)
                       if mapper.primary_key[0] in prop.columns), -1)
        _COLUMNS[model] = (Columns(keys, tuple(getattr(model, key) for key in keys), key_at)
                           if simple and key_at >= 0 else None)
    return _COLUMNS[model]


def simple_columns_of(model: Any) -> Columns:
    """``columns_of`` a model known to be built from plain columns."""
    built = columns_of(model)
    if built is None:
        raise TypeError(f"{model.__name__} is not built from plain columns")
    return built


def entity(model: Any, values: Sequence[Any]) -> Any:
    """The entity of a row of ``model``'s columns (``columns_of``, in that order) read as
    plain values: the one the session holds for its key, else made as a query would have
    loaded it, persistent in the session, every column loaded and unchanged, its
    relationships loaded when first touched."""
    session = db.session()
    built = simple_columns_of(model)
    held = session.identity_map.get(identity_key(model, values[built.key_at]))
    if held is not None:
        return held
    found = model(**dict(zip(built.keys, values, strict=True)))
    make_transient_to_detached(found)  # its values become what was loaded, not changes
    session.add(found)
    return found


_GETS: dict[Any, Executable] = {}
_COLUMNS: dict[Any, Columns | None] = {}

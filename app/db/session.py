"""The session's two modes: reading without a transaction while the app serves a call, writing
in an explicit block.

While the app serves a request (or a stdio MCP message, ``serving``), every statement of
``db.session`` outside a ``writing`` block runs on a connection in autocommit
(``Engine.execution_options(isolation_level="AUTOCOMMIT")``, SQLAlchemy's own way): a read is
its own transaction on the server, so a request that only reads sends no BEGIN, no COMMIT and
no ROLLBACK, and PostgreSQL keeps the connection's prepared statements (psycopg forgets them at
every rollback). Under PostgreSQL's READ COMMITTED and SQLite's own transaction handling a
plain read sees what it would have seen in a transaction: the database as committed when the
statement starts.

A change goes in ``writing()``: the block ends the reading transaction (nothing to send), runs
its statements in one transaction on a connection of the engine's own isolation level, commits
when it ends and rolls back if it raises. A flush or an ORM ``INSERT``/``UPDATE``/``DELETE``
outside a block while the app serves a call raises ``WriteOutsideBlock``: a change is never
committed a statement at a time by accident.

Outside a call (the CLI, the queue's workers, scripts, tests' own setup) the session is
SQLAlchemy's as it comes: a transaction begins at the first statement and ``writing`` only
commits (or rolls back) at its end.

The mode is chosen when the session's transaction begins and kept until it ends
(``get_bind`` answers the engine the transaction began on), so a transaction never spans two
connections.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import flask_sqlalchemy.session
from flask import Flask, current_app, g, request
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import ORMExecuteState, Session, SessionTransaction

# ``g``: the calls being served (a request and those it dispatches), innermost last, each
# saying whether its caller was writing when it began.
_CALLS = "harmonic_calls"
_COUNTED = "harmonic.serving_counted"  # a request's environ: it added itself to _CALLS
_WRITING = "harmonic.writing"  # Session.info: a ``writing`` block is open
_BEGUN_ON = "harmonic.begun_on"  # Session.info: (engine, reading) of the open transaction

_READING_ENGINES: dict[Engine, Engine] = {}  # an engine -> the same in autocommit


class WriteOutsideBlock(RuntimeError):
    """A change made while serving a call, outside ``writing()``."""


def reading_engine(engine: Engine) -> Engine:
    """``engine`` with its connections in autocommit (sharing its pool). SQLite's driver
    already reads without a transaction (it begins one before a change only), so there the
    engine is its own: switching every connection to autocommit and back cost a statement
    each way."""
    found = _READING_ENGINES.get(engine)
    if found is None:
        found = _READING_ENGINES[engine] = engine if engine.dialect.name == "sqlite" else \
            engine.execution_options(isolation_level="AUTOCOMMIT")
    return found


class DataSession(flask_sqlalchemy.session.Session):
    """``db.session``'s class (Flask-SQLAlchemy's, which documents subclassing it): the engine
    of a transaction is chosen once, as it begins (see the module's docstring)."""

    def get_bind(self, mapper: Any | None = None, clause: Any | None = None,
                 bind: Engine | Connection | None = None,
                 **kwargs: Any) -> Engine | Connection:
        begun = self.info.get(_BEGUN_ON)
        if begun is not None and bind is None:
            return begun[0]
        found = super().get_bind(mapper=mapper, clause=clause, bind=bind, **kwargs)
        if isinstance(found, Engine) and reads_alone(self):
            return reading_engine(found)
        return found


def reads_alone(session: Session) -> bool:
    """Whether a transaction this session begins now runs in autocommit: the app serves a
    call and no ``writing`` block is open."""
    return bool(g.get(_CALLS)) and not session.info.get(_WRITING)


def in_reading_transaction(session: Session) -> bool:
    """Whether the session's open transaction runs in autocommit."""
    begun = session.info.get(_BEGUN_ON)
    return begun is not None and begun[1]


def _reads_alone_now(session: Session | None) -> bool:
    """Whether the session's next statement (or, without a session, a statement made now)
    runs in autocommit."""
    if session is None:
        return bool(g.get(_CALLS))
    begun = session.info.get(_BEGUN_ON)
    return begun[1] if begun is not None else reads_alone(session)


def reads_alone_now() -> bool:
    """Whether a statement made now reads alone (see ``_reads_alone_now``)."""
    return _reads_alone_now(_made_session())


@event.listens_for(DataSession, "after_begin")
def _begun(session: Session, transaction: SessionTransaction, connection: Connection) -> None:
    if _BEGUN_ON not in session.info:  # as get_bind chose a moment ago
        session.info[_BEGUN_ON] = (connection.engine, reads_alone(session))


@event.listens_for(DataSession, "after_transaction_end")
def _ended(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:
        session.info.pop(_BEGUN_ON, None)


# -- the guard: a change while reading alone is a mistake, said at once ---------------------

def require_block(session: Session, what: str) -> None:
    """Raise ``WriteOutsideBlock`` unless the session's next statement runs in a transaction:
    for ``what`` (a change, or a row lock that must last until the transaction's end)."""
    if _reads_alone_now(session):
        raise WriteOutsideBlock(f"{what} outside a writing() block while serving a call: "
                                f"open app.db.writing() around it")


@event.listens_for(DataSession, "before_flush")
def _flushing(session: Session, _context: Any, _instances: Any) -> None:
    if session.new or session.deleted or any(map(session.is_modified, session.dirty)):
        require_block(session, "a flush of changes")


@event.listens_for(DataSession, "do_orm_execute")
def _executing(state: ORMExecuteState) -> None:
    if state.is_insert or state.is_update or state.is_delete:
        require_block(state.session, "an INSERT, UPDATE or DELETE")


# -- the write block ----------------------------------------------------------------------------

def end_reading(session: Session) -> None:
    """End the session's reading transaction, if one is open: nothing is sent (it wrote
    nothing), its connection goes back to the pool and what it loaded stays loaded."""
    if not in_reading_transaction(session):
        return
    keep = session.expire_on_commit
    session.expire_on_commit = False
    try:
        session.commit()
    finally:
        session.expire_on_commit = keep


def _session() -> Session:
    """``db.session`` of the running app (Flask-SQLAlchemy keeps its extension there)."""
    session: Session = current_app.extensions["sqlalchemy"].session()
    return session


def _made_session() -> Session | None:
    """The app context's session if it made one (asking ``db.session()`` would make it)."""
    scoped = current_app.extensions["sqlalchemy"].session
    return scoped() if scoped.registry.has() else None


@contextmanager
def writing(expire: bool = True) -> Iterator[Session]:
    """A block whose statements run in one transaction, committed when it ends, rolled back
    if it raises. A block inside another is part of the outer one. ``expire=False`` keeps what
    the session loaded as it is after the commit (for a write that changed none of it)."""
    session = _session()
    if session.info.get(_WRITING):
        yield session
        return
    end_reading(session)
    session.info[_WRITING] = True
    try:
        yield session
        keep = session.expire_on_commit
        session.expire_on_commit = expire
        try:
            session.commit()
        finally:
            session.expire_on_commit = keep
    except BaseException:
        session.rollback()
        raise
    finally:
        session.info.pop(_WRITING, None)


# -- serving a call -----------------------------------------------------------------------------

def start_serving() -> None:
    """One call more. A call made inside another (an in-process request) is a call of its
    own: a block it opens commits when it ends, as over HTTP, even inside a block of the
    caller's (which goes on, in a new transaction, when the call returns)."""
    session = _made_session()
    g.setdefault(_CALLS, []).append(session is not None
                                    and bool(session.info.pop(_WRITING, None)))


def stop_serving() -> None:
    """One call less; when it was the outermost, end its reading transaction, so that code
    running on in the same app context (a test after its request) gets SQLAlchemy's ordinary
    transactions again."""
    calls = g.get(_CALLS)
    outer_writing = calls.pop() if calls else False
    session = _made_session()
    if session is None:
        return
    if outer_writing:
        end_reading(session)  # what the call read after its own commit
        session.info[_WRITING] = True
    elif not calls:
        end_reading(session)


@contextmanager
def serving() -> Iterator[None]:
    """Serve one call outside a request (a stdio MCP message) as a request is served."""
    start_serving()
    try:
        yield
    finally:
        stop_serving()


def init_app(app: Flask) -> None:
    """Serve every request this way. Called before any feature adds its hooks, so that the
    request is counted before any other hook reads, and its end after every other one."""

    def started() -> None:
        start_serving()
        request.environ[_COUNTED] = True

    def ended(_exc: BaseException | None) -> None:
        if request.environ.pop(_COUNTED, False):
            stop_serving()

    app.before_request(started)
    app.teardown_request(ended)

"""A read sent before it is needed, its answer collected when it is (PostgreSQL).

Waiting for PostgreSQL's answer puts the process to sleep, and on machines like ours a process
that sleeps wakes up to slower work: ``bench/trivial_call.py --postgres`` found a 2025-11-25
session row's read costing a call 217 µs of CPU, of which the statement on the bare driver was
67 µs and 118 µs what the wait cost the call's other work. ``/mcp`` knows the session id from
the request's headers about 110 µs before it needs the row (Flask's request context, the hooks,
the gate, the body's parsing): about a round trip. Sent on arrival, the answer is usually
waiting in the socket when the view asks for it, and the process never sleeps for it.

The statement goes out alone, in autocommit, on one of the app's reader connections
(``app.models.side_connections``), as ``plain_reads.read_aside`` would send it: the same
answer, asked for a tenth of a millisecond earlier, before the request has done anything of its
own. ``send`` answers None where it cannot help (SQLite, whose reads never wait; no reader
free; a statement only Core may run; statements listened to) and the caller reads as before.
``Pending.rows`` answers None when anything fails (the reader is dropped), and the caller reads
as before. ``Pending.settle`` takes in an answer nobody asked for, so that the reader goes back
with nothing left in its socket.
"""

from __future__ import annotations

import select
import threading
import weakref
from typing import Any

from sqlalchemy import Executable
from sqlalchemy.engine import Engine

from app.models import plain_reads, side_connections

try:  # psycopg is the PostgreSQL driver; without it nothing is sent ahead
    from psycopg import pq
    from psycopg.adapt import PyFormat, Transformer
except ImportError:  # pragma: no cover - SQLite-only installs
    pq = None  # type: ignore[assignment]


class _Statement:
    """A plain read compiled for libpq: ``$n`` placeholders in their parameters' order, a
    server-side name. (Its parameters' values are the ``PreparedRead``'s, by name.)"""

    def __init__(self, statement: Executable, engine: Engine, name: bytes) -> None:
        dollar = type(engine.dialect)(paramstyle="numeric_dollar")  # type: ignore[call-arg]
        compiled = statement.compile(dialect=dollar)  # type: ignore[attr-defined]
        self.statement = statement  # kept: the cache is keyed by its id
        self.sql = compiled.string.encode()
        self.order: list[str] = list(compiled.positiontup or ())
        self.name = name


# (id of the statement, id of the engine's dialect) -> compiled for libpq; the statements are
# module constants, so this stays as small as the code that sends them.
_STATEMENTS: dict[tuple[int, int], _Statement] = {}
# Which statements each reader connection has prepared on its server.
_PREPARED_ON: weakref.WeakKeyDictionary[Any, set[bytes]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _statement(statement: Executable, engine: Engine) -> _Statement:
    key = (id(statement), id(engine.dialect))
    found = _STATEMENTS.get(key)
    if found is None:
        with _LOCK:
            found = _STATEMENTS.get(key)
            if found is None:
                found = _STATEMENTS[key] = _Statement(
                    statement, engine, f"harmonic_ahead_{len(_STATEMENTS)}".encode())
    return found


def send(engine: Engine, statement: Executable, params: dict[str, Any],
         readers_limit: int) -> Pending | None:
    """Send ``statement`` now on a reader connection; None where it is read later instead."""
    if pq is None or engine.dialect.driver != "psycopg" or engine.dispatch.before_cursor_execute:
        return None
    prepared = plain_reads.prepared_read(statement, engine.dialect)
    readers = side_connections.readers(engine, readers_limit) if prepared is not None else None
    connection = readers.take() if readers is not None else None
    if prepared is None or readers is None or connection is None:
        return None
    try:
        pgconn = connection.pgconn
        if pgconn.transaction_status != pq.TransactionStatus.IDLE:
            raise RuntimeError("the reader is not idle")
        ahead = _statement(statement, engine)
        transformer = Transformer(connection)
        bound = prepared.bound(params)
        values = [bound[key] for key in ahead.order]
        dumped = transformer.dump_sequence(values, [PyFormat.TEXT] * len(values))
        names = _PREPARED_ON.setdefault(connection, set())
        if ahead.name not in names:  # once per connection: a round trip, then never again
            pgconn.send_prepare(ahead.name, ahead.sql)
            _flush(pgconn)
            if _result(pgconn).status != pq.ExecStatus.COMMAND_OK:
                raise RuntimeError("the statement could not be prepared")
            names.add(ahead.name)
        pgconn.send_query_prepared(ahead.name, list(dumped))
        _flush(pgconn)
    except Exception:  # noqa: BLE001 - read the usual way instead
        readers.drop(connection)
        return None
    return Pending(readers, connection, prepared, transformer, engine.dialect)


class Pending:
    """A read on its way: ``rows`` once, or ``settle`` when it was never needed."""

    def __init__(self, readers: side_connections.Readers, connection: Any,
                 prepared: plain_reads.PreparedRead, transformer: Any, dialect: Any) -> None:
        self._readers = readers
        self._dialect = dialect
        self._connection = connection
        self._prepared = prepared
        self._transformer = transformer
        self._open = True

    def rows(self) -> plain_reads.Rows | None:
        """The statement's rows, as ``plain_reads`` makes them; None if it failed (read it
        again the usual way). Gives the reader back either way."""
        return self._take()

    def settle(self) -> None:
        """Take in the answer if nobody asked for it, and give the reader back."""
        self._take()

    def _take(self) -> plain_reads.Rows | None:
        if not self._open:
            return None
        self._open = False
        try:
            result = _result(self._connection.pgconn)
            if result.status != pq.ExecStatus.TUPLES_OK:
                raise RuntimeError(result.error_message)
            self._transformer.set_pgresult(result)
            fetched = self._transformer.load_rows(0, result.ntuples, tuple)
            if self._prepared.results is None:
                self._prepared.choose_results([result.ftype(i) for i in range(result.nfields)],
                                              self._dialect)
        except Exception:  # noqa: BLE001 - the caller reads the usual way
            self._readers.drop(self._connection)
            return None
        self._readers.give(self._connection)
        return self._prepared.rows_of(fetched)


def _flush(pgconn: Any) -> None:
    while pgconn.flush() != 0:  # a non-blocking connection may hold part of the message
        select.select([], [pgconn.socket], [])


def _result(pgconn: Any) -> Any:
    """The next statement's result: waits for it without holding the GIL (``select``), then
    reads past the end of its results so the connection is ready for the next one."""
    while True:
        pgconn.consume_input()
        if not pgconn.is_busy():
            break
        select.select([pgconn.socket], [], [])
    result = pgconn.get_result()
    if result is None:
        raise RuntimeError("no result came back")
    while pgconn.get_result() is not None:
        pass
    return result

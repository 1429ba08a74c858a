"""Engines beside the app's: made from the app engine's URL for one job, one per app engine in
each process, disposed of with it.

A job whose connections must be set otherwise than the app pool's (the audit's rows, flushed
less; the reads of ``built_once`` statements, in autocommit with nothing to reset) keeps an
engine of its own rather than setting a pooled connection there and back at each use.

``Beside.get`` makes the engine on first use, and again after ``drop`` (which its user calls
when the engine failed: a database restart, a dead connection). An in-memory SQLite database
has none (another connection would open another, empty database). A forked process makes its
own and never closes its parent's (closing a SQLite file's descriptor drops every lock the
process holds on that file). When the app's engine is disposed of (its app shutting down,
tests ending, a database about to be dropped), so is the engine beside it, which must not
outlive it.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable

from sqlalchemy import event
from sqlalchemy.engine import Engine


class Beside:
    """One job's engines, one beside each app engine that asks (made by ``make``)."""

    def __init__(self, make: Callable[[Engine], Engine]) -> None:
        self._make = make
        # Weak: an app's engine that is gone takes its engine beside along.
        self._engines: weakref.WeakKeyDictionary[Engine, Engine] = weakref.WeakKeyDictionary()
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def get(self, engine: Engine) -> Engine | None:
        """The engine beside ``engine``, made now if there is none; None for an in-memory
        database. Raises what making it raised."""
        found = self._engines.get(engine)
        if found is not None and self._pid == os.getpid():
            return found
        with self._lock:
            if self._pid != os.getpid():
                # A forked process makes its own, and never closes its parent's.
                _INHERITED.extend(self._engines.values())
                self._engines, self._pid = weakref.WeakKeyDictionary(), os.getpid()
            found = self._engines.get(engine)
            if found is not None:
                return found
            if not shares_its_database(engine):
                return None
            found = self._engines[engine] = self._make(engine)
        if not event.contains(engine, "engine_disposed", self._disposed):
            event.listen(engine, "engine_disposed", self._disposed)
        return found

    def drop(self, engine: Engine) -> None:
        """Dispose of the engine beside ``engine`` (if this process made one): the next
        ``get`` makes a new one."""
        with self._lock:
            found = self._engines.pop(engine, None) if self._pid == os.getpid() else None
        if found is not None:
            found.dispose()

    def _disposed(self, engine: Engine) -> None:
        self.drop(engine)


def shares_its_database(engine: Engine) -> bool:
    """Whether another connection to ``engine``'s URL reaches the same database: not for an
    in-memory SQLite database, which each connection opens anew."""
    if engine.dialect.name != "sqlite":
        return True
    database = engine.url.database or ""
    return database not in ("", ":memory:") and "mode=memory" not in str(engine.url)


_INHERITED: list[Engine] = []  # a parent's, kept open and unused in a forked child

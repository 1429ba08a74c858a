"""Engines beside the app's: made from the app engine's URL for one job, one per app engine in
each process, closed with it.

A job whose connections must be set otherwise than the app pool's (the audit's rows, flushed
less) keeps an engine of its own, with the connections it holds between uses, rather than
setting a pooled connection there and back at each use. ``Beside`` keeps what the job makes
of an app engine (its engine and connections) and closes it with the job's ``close``.

``Beside.get`` makes it on first use, and again after ``drop`` (which the job calls when it
failed: a database restart, a dead connection). An in-memory SQLite database has none
(another connection would open another, empty database). A forked process makes its own and
never closes its parent's (closing a SQLite file's descriptor drops every lock the process
holds on that file). When the app's engine is disposed of (its app shutting down, tests
ending, a database about to be dropped), what is beside it is closed, and must not outlive
it.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Engine

T = TypeVar("T")


class Beside(Generic[T]):
    """One job's engines, one beside each app engine that asks: made by ``make`` (from the app
    engine), closed by ``close``."""

    def __init__(self, make: Callable[[Engine], T], close: Callable[[T], None]) -> None:
        self._make, self._close = make, close
        # Weak: an app's engine that is gone takes what is beside it along.
        self._engines: weakref.WeakKeyDictionary[Engine, T] = weakref.WeakKeyDictionary()
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def get(self, engine: Engine) -> T | None:
        """What is beside ``engine``, made now if there is none; None for an in-memory
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
        """Close what is beside ``engine`` (if this process made it): the next ``get`` makes
        it anew."""
        with self._lock:
            found = self._engines.pop(engine, None) if self._pid == os.getpid() else None
        if found is not None:
            self._close(found)

    def _disposed(self, engine: Engine) -> None:
        self.drop(engine)


def shares_its_database(engine: Engine) -> bool:
    """Whether another connection to ``engine``'s URL reaches the same database: not for an
    in-memory SQLite database, which each connection opens anew."""
    if engine.dialect.name != "sqlite":
        return True
    database = engine.url.database or ""
    return database not in ("", ":memory:") and "mode=memory" not in str(engine.url)


_INHERITED: list[Any] = []  # a parent's, kept open and unused in a forked child

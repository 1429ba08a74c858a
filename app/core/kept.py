"""Copies of rows kept per process, forgotten through the change feed: the app's one cache.

What may be kept (a resolved token's facts) is kept here, by topic, and forgotten the same way
on both databases:

- A writer of such a row says so in its own transaction (``changed(topic, key)``), which
  records the change event ``internal://<topic>/<key>`` (or ``internal://<topic>`` for all)
  in the outbox (``app.core.changes``). Its process forgets the copy when the change commits;
  every other process when its relay reads the event (``app.core.feed``: PostgreSQL is woken
  by the commit's notification; SQLite reads the outbox four times a second).
- A copy is used only while this process's relay is caught up (``Relay.fresh``), and for at
  most ``HARMONIC_CACHE_SECONDS`` (60 s by default; ``0`` keeps nothing), the bound for a row
  changed without the app (by hand in the database).

Only what was found is kept (an unknown key never is: guessing must not fill the memory), at
most ``LIMIT`` entries per topic and app, the oldest dropped first. These events are the app's
own: ``internal://`` names no resource a client may read or subscribe to.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from typing import Any, Generic, TypeVar

from flask import Flask

from app.core import changes, feed

V = TypeVar("V")
LIMIT = 10_000
PREFIX = "internal://"


class Kept(Generic[V]):
    """One app's copies of one topic in this process."""

    def __init__(self, topic: str, seconds: float, relay: feed.Relay) -> None:
        self.topic, self.seconds, self.relay = topic, seconds, relay
        self._entries: OrderedDict[str, tuple[V, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._forgot_at = 0.0  # when a copy was last forgotten (``time.monotonic()``)
        _ALL.add(self)

    def get(self, key: str) -> V | None:
        """The copy of ``key``, or None: none kept, kept too long, or the relay behind."""
        with self._lock:
            found = self._entries.get(key)
        if found is None:
            return None
        value, fetched = found
        if time.monotonic() - fetched >= self.seconds or not self.relay.fresh():
            return None
        return value

    def put(self, key: str, value: V, fetched: float) -> None:
        """Keep ``value`` as read at ``fetched`` (``time.monotonic()`` taken before the read:
        a copy must never look fresher than the row it came from), unless a copy was forgotten
        since: the row may be older than the change that made it forget."""
        with self._lock:
            if fetched < self._forgot_at:
                return
            self._entries[key] = (value, fetched)
            self._entries.move_to_end(key)
            while len(self._entries) > LIMIT:
                self._entries.popitem(last=False)

    def forget(self, key: str | None = None) -> None:
        with self._lock:
            self._forgot_at = time.monotonic()
            if key is None:
                self._entries.clear()
            else:
                self._entries.pop(key, None)


_ALL: weakref.WeakSet[Kept[Any]] = weakref.WeakSet()


def of(app: Flask, topic: str) -> Kept[Any] | None:
    """``app``'s copies of ``topic`` (its relay started on first use), or None when nothing is
    kept (``HARMONIC_CACHE_SECONDS`` is 0)."""
    key = f"harmonic.kept.{topic}"
    found = app.extensions.get(key)
    if found is None:
        seconds = float(app.config.get("HARMONIC_CACHE_SECONDS", 60.0))
        found = app.extensions.setdefault(
            key, Kept(topic, seconds, feed.ensure_started(app)) if seconds > 0 else False)
    return found or None


def forget(topic: str, key: str | None = None) -> None:
    """Forget ``key`` (every key when None) of ``topic`` in every app of this process."""
    for kept in list(_ALL):
        if kept.topic == topic:
            kept.forget(key)


def changed(topic: str, key: str | None = None) -> None:
    """Say, in the current transaction, that ``key`` of ``topic`` (every key when None)
    changed: forgotten here at once, and everywhere once the change commits."""
    forget(topic, key)
    changes.record(f"{PREFIX}{topic}" + (f"/{key}" if key is not None else ""))


def _heard(uri: str) -> None:
    if uri.startswith(PREFIX):
        topic, _, key = uri[len(PREFIX):].partition("/")
        forget(topic, key or None)


changes.listen(_heard)  # this process's commits, and other processes' through the relay

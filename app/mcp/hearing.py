"""What one in-process subscriber is told: change events from this process's listeners
(``app.core.changes.listen``), each checked against the audience before it goes out.

A listener runs inside someone else's commit and must not touch the database, so it only
queues the event with its bound (``app.core.audience.bound``); whoever takes from the queue
(an HTTP listen stream's response, stdio's delivery thread, or a stdio call about to answer)
checks each event there (``app.core.audience.hears``) as the subscriber is at that moment: a
person removed from the studio, or whose token was revoked, is told nothing more.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from flask import Flask

from app.core import audience
from app.core.identity import Identity
from app.extensions import db
from app.services.errors import DomainError

log = logging.getLogger("harmonic.mcp.hearing")

# Who the subscriber is now: an Identity, or None when anonymous (auth off on loopback).
# Raises when they are no longer anyone (a revoked or expired token): nothing is told then.
Who = Callable[[], Identity | None]


class Gone(Exception):
    """The subscriber's token no longer resolves: the stream it opened ends. ``reason`` is the
    token's (revoked, expired, unknown)."""

    def __init__(self, message: str, reason: str = "unknown") -> None:
        super().__init__(message)
        self.reason = reason


class Hearing:
    """Events (bound, URI, payload) queued by listeners, told through the audience."""

    def __init__(self, app: Flask, who: Who) -> None:
        self.app = app
        self.who = who
        self._items: deque[tuple[int, str, Any]] = deque()
        self._ready = threading.Condition()
        self._turn = threading.Lock()  # what is taken is told before anything after it

    def put(self, uri: str, payload: Any) -> None:
        """From a listener (no database): tell ``payload`` if the subscriber may hear ``uri``."""
        with self._ready:
            self._items.append((audience.bound(self.app), uri, payload))
            self._ready.notify()

    def wait(self, timeout: float) -> bool:
        """Whether something is queued, waiting up to ``timeout`` seconds for it."""
        with self._ready:
            return self._ready.wait_for(lambda: bool(self._items), timeout)

    def take(self) -> list[Any]:
        """The payloads queued so far that the subscriber may hear now, oldest first. Raises
        Gone when the subscriber's token no longer resolves."""
        with self._ready:
            items = list(self._items)
            self._items.clear()
        if not items:
            return []
        with self.app.app_context():
            try:
                try:
                    identity = self.who()
                except Exception as exc:  # Unauthorized, or stdio's own TokenError
                    reason = (exc.details.get("reason") if isinstance(exc, DomainError)
                              else getattr(exc, "reason", None))
                    raise Gone(str(exc), reason if isinstance(reason, str) else "unknown") \
                        from None
                return [payload for as_of, uri, payload in items
                        if audience.hears(identity, uri, as_of)]
            finally:
                db.session.remove()

    def tell(self, send: Callable[[Any], None]) -> None:
        """Send what is queued and may be heard; concurrent callers send in queue order (a
        stdio call tells the changes it made before its answer)."""
        with self._turn:
            try:
                payloads = self.take()
            except Gone:
                return  # (stdio: every call says why; the events simply stop)
            for payload in payloads:
                send(payload)

    def tell_in_background(self, send: Callable[[Any], None],
                           name: str = "mcp-hearing") -> threading.Thread:
        """Tell what comes on a daemon thread for as long as the process runs (stdio: its
        subscriptions and listen streams share one)."""

        def run() -> None:
            while True:
                try:
                    if self.wait(60):
                        self.tell(send)
                except Exception:  # a failed delivery must not end the next ones
                    log.exception("change delivery failed")

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        return thread

"""Resolved Bearer tokens kept per process, so a busy agent's requests skip the token query.

What a token may do changes everywhere at once, through the change feed the app already has
(``app.core.changes``, ``app.core.feed``), the same way on both databases:

- Every change to a token through the app (a revocation, a deletion with its OAuth grant, a
  bulk update) records the change event ``TOKENS`` in its own transaction. Its process forgets
  every cached token when the change is flushed and again once it commits (a request
  resolving the token in between would cache the old row again); every other process forgets
  them when its relay reads the event (PostgreSQL: woken by the commit's notification; SQLite:
  within a quarter of a second).
- A cached token is used only while this process's relay is caught up (``Relay.fresh``):
  listening on PostgreSQL, having read the outbox within the second on SQLite. Otherwise the
  token is read again.
- An entry is kept at most ``HARMONIC_TOKEN_CACHE_SECONDS`` (60 s by default; ``0`` turns the
  cache off), the bound for a row changed without the app (by hand in the database).
- Expiry is checked on every hit, against the clock.

Only tokens that resolved are kept (an unknown token is never cached: guessing must not fill
the memory), at most ``LIMIT`` of them, the oldest dropped first.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flask import current_app
from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session

from app.core import changes, feed
from app.core.identity import Identity, from_token
from app.models import ApiToken, User
from app.services import tokens
from app.services.errors import Unauthorized

KEY = "harmonic.token_cache"
LIMIT = 10_000
TOKENS = "internal://api-tokens"  # the change event of any change to any token


@dataclass(frozen=True)
class _Entry:
    identity: Identity
    expires_at: datetime | None
    fetched: float  # time.monotonic() of the read


class TokenCache:
    def __init__(self, seconds: float, relay: feed.Relay) -> None:
        self.seconds = seconds
        self.relay = relay
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        _CACHES.add(self)

    def get(self, digest: str) -> Identity | None:
        with self._lock:
            entry = self._entries.get(digest)
        if entry is None:
            return None
        if time.monotonic() - entry.fetched >= self.seconds or not self.relay.fresh():
            return None
        if entry.expires_at is not None and entry.expires_at <= datetime.now(UTC):
            self.forget(digest)
            raise Unauthorized(f"the token expired at "
                               f"{entry.expires_at.isoformat(timespec='seconds')}; create a new "
                               f"one", reason="expired")
        return entry.identity

    def put(self, digest: str, token: ApiToken, identity: Identity, fetched: float) -> None:
        with self._lock:
            self._entries[digest] = _Entry(identity, token.expires_at, fetched)
            self._entries.move_to_end(digest)
            while len(self._entries) > LIMIT:
                self._entries.popitem(last=False)

    def forget(self, digest: str | None = None) -> None:
        with self._lock:
            if digest is None:
                self._entries.clear()
            else:
                self._entries.pop(digest, None)


_CACHES: weakref.WeakSet[TokenCache] = weakref.WeakSet()


def _cache() -> TokenCache | None:
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    cache = app.extensions.get(KEY)
    if cache is None:
        seconds = float(app.config.get("HARMONIC_TOKEN_CACHE_SECONDS", 60.0))
        cache = app.extensions.setdefault(
            KEY, TokenCache(seconds, feed.ensure_started(app)) if seconds > 0 else False)
    return cache or None


def resolve(plaintext: str) -> tuple[Identity, User | None]:
    """The identity of a Bearer token, and its person when this call read the token (a cached
    identity comes without: the caller loads the person if it needs one). Raises Unauthorized
    as ``tokens.resolve`` does."""
    cache = _cache()
    digest = tokens.digest(plaintext)
    if cache is not None:
        cached = cache.get(digest)
        if cached is not None:
            return cached, None
    # Taken before the read: an entry must never look fresher than the row it came from.
    fetched = time.monotonic()
    token = tokens.resolve(plaintext)
    identity = from_token(token)
    if cache is not None:
        cache.put(digest, token, identity, fetched)
    return identity, token.user


def forget_all() -> None:
    """Drop every cached token of every app in this process (a token changed)."""
    for cache in list(_CACHES):
        cache.forget()


def _heard(uri: str) -> None:
    if uri == TOKENS:
        forget_all()


changes.listen(_heard)  # this process's commits, and other processes' through the relay


# -- a change to a token row, by the ORM or by a bulk statement: recorded in its transaction --

def _mark(session: Session) -> None:
    forget_all()
    changes.record(TOKENS)


@event.listens_for(Session, "before_flush")
def _on_flush(session: Session, _context: Any, _instances: Any) -> None:
    if any(isinstance(o, ApiToken) for o in (*session.dirty, *session.deleted)):
        _mark(session)


@event.listens_for(Session, "do_orm_execute")
def _on_execute(state: ORMExecuteState) -> None:
    if (state.is_update or state.is_delete) and state.bind_mapper is not None \
            and state.bind_mapper.class_ is ApiToken:
        _mark(state.session)

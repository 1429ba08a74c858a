"""Resolved Bearer tokens kept per process for a moment, so a busy agent's requests skip the
token query.

What a token may do never waits longer than a second to change:

- In the process that changes a token (revokes it, or deletes it with its OAuth grant), every
  cached token is forgotten at once: when the change is flushed, and again when it commits (a
  request resolving the token between the two would otherwise cache the old row again).
- Every other process keeps an entry at most ``HARMONIC_TOKEN_CACHE_SECONDS`` (1 s by default,
  never more), so a revocation reaches every process within one second without any message
  between them. ``0`` turns the cache off (every request reads the token, as before).
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

from app.core.identity import Identity, from_token
from app.models import ApiToken, User
from app.services import tokens
from app.services.errors import Unauthorized

KEY = "harmonic.token_cache"
LIMIT = 10_000
CHANGED = "harmonic.tokens_changed"  # a Session.info flag: this transaction changed a token


@dataclass(frozen=True)
class _Entry:
    identity: Identity
    expires_at: datetime | None
    fetched: float  # time.monotonic() of the read


class TokenCache:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        _CACHES.add(self)

    def get(self, digest: str) -> Identity | None:
        with self._lock:
            entry = self._entries.get(digest)
        if entry is None:
            return None
        if time.monotonic() - entry.fetched >= self.seconds:
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
        seconds = float(app.config.get("HARMONIC_TOKEN_CACHE_SECONDS", 1.0))
        cache = app.extensions.setdefault(KEY, TokenCache(seconds) if seconds > 0 else False)
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
    """Drop every cached token of every app in this process (a token changed here)."""
    for cache in list(_CACHES):
        cache.forget()


# -- in-process invalidation: any change to a token row, by the ORM or by a bulk statement ----

def _mark(session: Session) -> None:
    session.info[CHANGED] = True
    forget_all()


@event.listens_for(Session, "before_flush")
def _on_flush(session: Session, _context: Any, _instances: Any) -> None:
    if any(isinstance(o, ApiToken) for o in (*session.dirty, *session.deleted)):
        _mark(session)


@event.listens_for(Session, "do_orm_execute")
def _on_execute(state: ORMExecuteState) -> None:
    if (state.is_update or state.is_delete) and state.bind_mapper is not None \
            and state.bind_mapper.class_ is ApiToken:
        _mark(state.session)


@event.listens_for(Session, "after_commit")
def _on_commit(session: Session) -> None:
    if session.info.pop(CHANGED, False):
        forget_all()


@event.listens_for(Session, "after_rollback")
def _on_rollback(session: Session) -> None:
    session.info.pop(CHANGED, None)

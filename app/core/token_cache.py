"""Resolved Bearer tokens kept per process (``app.core.kept``), so a busy agent's requests skip
the token query.

What a token may do changes everywhere at once: every change to a token through the app (a
revocation, a deletion with its OAuth grant, a bulk update) says so in its own transaction
(``kept.changed``), is forgotten by its process when flushed and by every other one through
the change feed; ``HARMONIC_CACHE_SECONDS`` bounds a change made by hand in the database.
Expiry is checked on every hit, against the clock. Only tokens that resolved are kept.

A token's identity carries the representation session its holder is in (``Identity.
representing``), so a grant or a session that starts, ends or is revoked is such a change too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flask import current_app
from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session

from app.core import kept
from app.core.identity import Identity, Representing, from_token, kind_of
from app.models import ApiToken, User
from app.models.grants import Grant, Representation
from app.services import grants, tokens
from app.services.errors import Unauthorized

TOPIC = "api-tokens"  # keyed by the token's digest; any change forgets them all


@dataclass(frozen=True)
class _Entry:
    identity: Identity
    expires_at: datetime | None


def _cached(copies: kept.Kept[_Entry], digest: str) -> Identity | None:
    entry = copies.get(digest)
    if entry is None:
        return None
    if entry.expires_at is not None and entry.expires_at <= datetime.now(UTC):
        copies.forget(digest)
        raise Unauthorized(f"the token expired at "
                           f"{entry.expires_at.isoformat(timespec='seconds')}; create a new "
                           f"one", reason="expired")
    return entry.identity


def identity_from_token(plaintext: str) -> Identity:
    """Resolve a Bearer token to an Identity or raise Unauthorized (web, /mcp and stdio)."""
    return resolve(plaintext)[0]


def resolve(plaintext: str) -> tuple[Identity, User | None]:
    """The identity of a Bearer token, and its person when this call read the token (a cached
    identity comes without: the caller loads the person if it needs one). Raises Unauthorized
    as ``tokens.resolve`` does."""
    copies = kept.of(current_app._get_current_object(), TOPIC)  # type: ignore[attr-defined]
    digest = tokens.digest(plaintext)
    if copies is not None:
        cached = _cached(copies, digest)
        if cached is not None:
            return cached, None
    fetched = time.monotonic()
    token = tokens.resolve(plaintext)
    identity = from_token(token, representing_of(token.user_id)
                          if kind_of(token) != "grant" else None)
    if copies is not None:
        copies.put(digest, _Entry(identity, token.expires_at), fetched)
    return identity, token.user


def representing_of(user_id: Any) -> Representing | None:
    """The representation session ``user_id`` is in now, as an identity carries it."""
    session = grants.active_for(user_id)
    return Representing.of(session) if session is not None else None


def representing_in(session_id: Any) -> Representing | None:
    """The representation session ``session_id``, ended or not, as an identity carries it:
    work started in a session (a task, a run) acts in it, or not at all."""
    session = grants.session(session_id)
    return Representing.of(session) if session is not None else None


# -- a change to a token row, by the ORM or by a bulk statement: said in its transaction ------

@event.listens_for(Session, "before_flush")
def _on_flush(session: Session, _context: Any, _instances: Any) -> None:
    if any(isinstance(o, ApiToken | Grant) for o in (*session.dirty, *session.deleted)) \
            or any(isinstance(o, Representation) for o in (*session.new, *session.dirty)):
        kept.changed(TOPIC)


@event.listens_for(Session, "do_orm_execute")
def _on_execute(state: ORMExecuteState) -> None:
    if (state.is_update or state.is_delete) and state.bind_mapper is not None \
            and state.bind_mapper.class_ is ApiToken:
        kept.changed(TOPIC)

"""API tokens: created once in plaintext, stored as a SHA-256 hash with a visible prefix."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import joinedload
from sqlalchemy.orm.attributes import set_committed_value

from app.db import writing
from app.extensions import db
from app.models import ApiToken, User
from app.models.accounts import TOKEN_SCOPES
from app.services.errors import Forbidden, NotFound, Unauthorized, invalid_param
from app.services.timeparse import expiry

PREFIX = "hmn_"


def digest(plaintext: str) -> str:
    """The stored form of a token. Tokens carry 256 bits of randomness, so a fast hash is
    enough (no KDF needed); OAuth access tokens (app.oauth) are stored the same way."""
    return hashlib.sha256(plaintext.encode()).hexdigest()


def parse_scopes(scopes: str | list[str]) -> list[str]:
    items = scopes.split(",") if isinstance(scopes, str) else list(scopes)
    items = [s.strip() for s in items if s and s.strip()]
    bad = [s for s in items if s not in TOKEN_SCOPES]
    if bad or not items:
        raise invalid_param("scopes", f"use a comma list of {', '.join(TOKEN_SCOPES)}")
    return [s for s in TOKEN_SCOPES if s in items]


def create_token(user: User, name: str, scopes: str | list[str] = "read,write",
                 expires: str = "90d") -> tuple[ApiToken, str]:
    """Create a token; return it and its plaintext (never stored, shown once)."""
    now = datetime.now(UTC)
    expires_at = expiry(expires, now)
    if not (name or "").strip():
        raise invalid_param("name", "is required")
    secret = secrets.token_urlsafe(32)
    plaintext = f"{PREFIX}{secret}"
    token = ApiToken(user_id=user.id, name=name.strip()[:120], prefix=plaintext[:12],
                     token_hash=digest(plaintext), scopes=",".join(parse_scopes(scopes)),
                     created_at=now, expires_at=expires_at)
    db.session.add(token)
    db.session.flush()
    return token, plaintext


def resolve(plaintext: str) -> ApiToken:
    """The active token for ``plaintext``; Unauthorized says why when there is none, with
    ``reason`` (a detail every door passes on): ``unknown``, ``revoked`` or ``expired``."""
    # The user comes in the same query: every token request needs it next (g.user).
    token = db.session.scalar(select(ApiToken).options(joinedload(ApiToken.user))
                              .where(ApiToken.token_hash == digest(plaintext)).limit(1))
    if token is None:
        raise Unauthorized("invalid token: no token matches it (mistyped, or from another "
                           "server?)", reason="unknown")
    now = datetime.now(UTC)
    if token.revoked_at is not None:
        raise Unauthorized(f"the token was revoked at {_when(token.revoked_at)}; create a new "
                           f"one", reason="revoked")
    if token.expires_at is not None and token.expires_at <= now:
        raise Unauthorized(f"the token expired at {_when(token.expires_at)}; create a new one",
                           reason="expired")
    # Only write last_used_at once a minute: a busy agent must not turn every read into a write.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        _note_use(token, now)
    return token


def _note_use(token: ApiToken, now: datetime) -> None:
    """Write the token's last use in the session's own transaction and commit it there, keeping
    the token and its person loaded. Not on a second pooled connection: the session already
    holds one, and when every thread of a process held one while waiting for another (more
    threads than the pool has connections, e.g. forty agents' first calls at once), none got
    it until the pool's 30 s timeout turned each call into a 500. The caller has changed
    nothing yet (the token is the first thing a request reads); a session that has, or that
    is inside a savepoint, skips the write this time (it is a once-a-minute mark)."""
    session = db.session()
    if session.new or session.dirty or session.deleted or session.in_nested_transaction():
        return
    # The token and its person stay as read (no reload): nothing of theirs changes but this.
    with writing(expire=False):
        # On the transaction's connection, as Core: not a change of the token that the token
        # cache must forget (``app.core.token_cache`` listens to the session's statements).
        session.connection().execute(update(ApiToken).where(ApiToken.id == token.id)
                                     .values(last_used_at=now))
    set_committed_value(token, "last_used_at", now)


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def revoke(user: User, token_id: str) -> ApiToken:
    token = None
    for candidate in user.tokens:
        if str(candidate.id) == token_id or candidate.prefix == token_id:
            token = candidate
    if token is None:
        raise NotFound("no such token")
    if token.user_id != user.id:
        raise Forbidden("not your token")
    if token.revoked_at is None:
        token.revoked_at = datetime.now(UTC)
    return token

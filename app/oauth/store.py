"""OAuth records: codes, grants with their refresh-token families, access tokens, consents.

Every secret is a 256-bit random value stored as its SHA-256 hash (as API tokens are): a
database leak gives no usable code, refresh token or client secret, and no signing key is
involved. An access token is an ``ApiToken`` row (hashed, scoped, expiring, rate limited,
audited like a pasted one) that points at its grant and carries its audience.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update

from app.extensions import db
from app.models import ApiToken, User
from app.models.base import utcnow
from app.models.oauth import OAuthClient, OAuthCode, OAuthConsent, OAuthGrant, OAuthRefreshToken
from app.services import revocation, tokens

ACCESS_TTL = timedelta(hours=1)
REFRESH_TTL = timedelta(days=30)
CODE_TTL = timedelta(minutes=5)
PRUNE_AFTER = timedelta(days=1)
ACCESS_PREFIX = "hmo_"  # an OAuth access token; the rest of the app reads it as any API token


def new_secret() -> str:
    return secrets.token_urlsafe(32)


# -- registered clients (RFC 7591) -----------------------------------------------------------

def add_client(client_id: str, metadata: dict, secret_hash: str | None) -> OAuthClient:
    """Store a dynamically registered client (its secret, if any, only as a hash)."""
    client = OAuthClient(client_id=client_id, client_metadata=metadata, secret_hash=secret_hash)
    db.session.add(client)
    db.session.flush()
    return client


def registered_client(client_id: str) -> OAuthClient | None:
    return db.session.scalar(select(OAuthClient).where(OAuthClient.client_id == client_id))


# -- authorization codes ---------------------------------------------------------------------

def save_code(code: str, *, client_id: str, client_name: str, user_id: uuid.UUID,
              redirect_uri: str, scopes: str, resource: str, challenge: str,
              method: str) -> OAuthCode:
    row = OAuthCode(code_hash=tokens.digest(code), client_id=client_id,
                    client_name=client_name[:200], user_id=user_id, redirect_uri=redirect_uri,
                    scopes=scopes, resource=resource, code_challenge=challenge,
                    code_challenge_method=method, expires_at=utcnow() + CODE_TTL)
    db.session.add(row)
    db.session.flush()
    return row


def find_code(code: str, client_id: str) -> OAuthCode | None:
    """The unused, unexpired code issued to ``client_id``. A code presented a second time
    revokes the grant its first use produced (RFC 6749 §4.1.2) and is refused."""
    row = db.session.scalar(select(OAuthCode).where(OAuthCode.code_hash == tokens.digest(code)))
    if row is None or row.client_id != client_id:
        return None
    if row.used_at is not None:
        if row.grant_id is not None:
            revoke_grant(row.grant_id, "code_reused")
        db.session.commit()
        return None
    if row.expires_at <= utcnow():
        return None
    return row


# -- grants, access and refresh tokens ------------------------------------------------------

def _store_tokens(grant: OAuthGrant, access: str, refresh: str, scopes: str) -> None:
    """Store a new access token (an ApiToken row) and refresh token of ``grant``, hashed.
    Access tokens of the grant that expired over a day ago go (a client refreshing hourly
    would otherwise leave a row an hour); the newest, which says the last use, stays."""
    moment = utcnow()
    db.session.execute(delete(ApiToken).where(ApiToken.oauth_grant_id == grant.id,
                                              ApiToken.expires_at < moment - PRUNE_AFTER))
    db.session.execute(delete(OAuthRefreshToken)
                       .where(OAuthRefreshToken.grant_id == grant.id,
                              OAuthRefreshToken.expires_at < moment - PRUNE_AFTER))
    db.session.add(ApiToken(user_id=grant.user_id, name=f"OAuth: {grant.client_name}"[:120],
                            prefix=access[:12], token_hash=tokens.digest(access),
                            scopes=",".join(scopes.split()), created_at=moment,
                            expires_at=moment + ACCESS_TTL, oauth_grant_id=grant.id,
                            audience=grant.resource))
    db.session.add(OAuthRefreshToken(grant_id=grant.id, token_hash=tokens.digest(refresh),
                                     created_at=moment, expires_at=moment + REFRESH_TTL))
    db.session.flush()


class Spent(Exception):
    """A code or refresh token another request spent first (a race, or a replay)."""


def _spend(model: type[OAuthCode] | type[OAuthRefreshToken], row_id: uuid.UUID) -> None:
    # One conditional UPDATE: of two requests presenting the same secret at once, exactly one
    # spends it, whatever each read before.
    done = db.session.execute(update(model).where(model.id == row_id, model.used_at.is_(None))
                              .values(used_at=utcnow()))
    if getattr(done, "rowcount", 1) != 1:
        raise Spent()


def exchange_code(code: OAuthCode, access: str, refresh: str) -> OAuthGrant:
    """Spend ``code``: a new grant (a refresh-token family) holding its first tokens."""
    _spend(OAuthCode, code.id)
    grant = OAuthGrant(user_id=code.user_id, client_id=code.client_id,
                       client_name=code.client_name, scopes=code.scopes, resource=code.resource)
    db.session.add(grant)
    db.session.flush()
    db.session.execute(update(OAuthCode).where(OAuthCode.id == code.id)
                       .values(grant_id=grant.id))
    _store_tokens(grant, access, refresh, code.scopes)
    return grant


@dataclass
class RefreshCheck:
    token: OAuthRefreshToken | None
    grant: OAuthGrant | None


def find_refresh(plaintext: str, client_id: str) -> RefreshCheck:
    """The live refresh token for ``plaintext`` and its grant. A token already rotated away
    revokes its whole family (it was stolen, or the client is confused: either way, stop)."""
    row = db.session.scalar(select(OAuthRefreshToken)
                            .where(OAuthRefreshToken.token_hash == tokens.digest(plaintext)))
    if row is None:
        return RefreshCheck(None, None)
    grant = db.session.get(OAuthGrant, row.grant_id)
    if grant is None or grant.client_id != client_id:
        return RefreshCheck(None, None)
    if row.used_at is not None:
        revoke_grant(grant.id, "refresh_reused")
        db.session.commit()
        return RefreshCheck(None, None)
    if grant.revoked_at is not None or row.expires_at <= utcnow():
        return RefreshCheck(None, None)
    return RefreshCheck(row, grant)


def rotate(row: OAuthRefreshToken, grant: OAuthGrant, access: str, refresh: str,
           scopes: str | None = None) -> None:
    """Spend refresh token ``row`` and store its successors in the same family (the access
    token's scopes may only narrow: Authlib refused anything wider)."""
    try:
        _spend(OAuthRefreshToken, row.id)
    except Spent:
        db.session.rollback()
        revoke_grant(grant.id, "refresh_reused")
        db.session.commit()
        raise
    _store_tokens(grant, access, refresh, scopes or grant.scopes)


def revoke_grant(grant_id: uuid.UUID, reason: str) -> None:
    """Revoke a grant, its refresh tokens and every access token it issued, and end what they
    made (``app.services.revocation``: tokens, agents, MCP sessions, tasks, teach sessions,
    runs, webhooks)."""
    moment = utcnow()
    db.session.execute(update(OAuthGrant).where(OAuthGrant.id == grant_id,
                                                OAuthGrant.revoked_at.is_(None))
                       .values(revoked_at=moment, revoked_reason=reason))
    db.session.execute(update(ApiToken).where(ApiToken.oauth_grant_id == grant_id,
                                              ApiToken.revoked_at.is_(None))
                       .values(revoked_at=moment))
    issued = set(db.session.scalars(select(ApiToken.id)
                                    .where(ApiToken.oauth_grant_id == grant_id)))
    revocation.end(tokens=issued, grants={grant_id})


def grant_of_token(plaintext: str) -> OAuthGrant | None:
    """The grant behind an access or refresh token (for revocation, RFC 7009)."""
    access = db.session.scalar(select(ApiToken)
                               .where(ApiToken.token_hash == tokens.digest(plaintext)))
    if access is not None and access.oauth_grant_id is not None:
        return db.session.get(OAuthGrant, access.oauth_grant_id)
    refresh = db.session.scalar(select(OAuthRefreshToken)
                                .where(OAuthRefreshToken.token_hash == tokens.digest(plaintext)))
    return db.session.get(OAuthGrant, refresh.grant_id) if refresh is not None else None


# -- consent and connected apps --------------------------------------------------------------

def _consent(user_id: uuid.UUID, client_id: str) -> OAuthConsent | None:
    return db.session.scalar(select(OAuthConsent).where(OAuthConsent.user_id == user_id,
                                                        OAuthConsent.client_id == client_id))


def remembered(user_id: uuid.UUID, client_id: str, scopes: str) -> bool:
    row = _consent(user_id, client_id)
    return row is not None and set(scopes.split()) <= set(row.scopes.split())


def remember(user_id: uuid.UUID, client_id: str, scopes: str) -> None:
    row = _consent(user_id, client_id)
    if row is None:
        db.session.add(OAuthConsent(user_id=user_id, client_id=client_id, scopes=scopes))
    else:
        row.scopes = " ".join(sorted(set(row.scopes.split()) | set(scopes.split())))


@dataclass
class ConnectedApp:
    client_id: str
    client_name: str
    scopes: str
    connected_at: datetime
    last_used_at: datetime | None


def connected_apps(user: User) -> list[ConnectedApp]:
    """The clients holding a live grant of ``user``, one line per client."""
    grants = db.session.scalars(select(OAuthGrant).where(OAuthGrant.user_id == user.id,
                                                         OAuthGrant.revoked_at.is_(None))
                                .order_by(OAuthGrant.created_at)).all()
    apps: dict[str, ConnectedApp] = {}
    for grant in grants:
        used = db.session.scalar(select(ApiToken.last_used_at)
                                 .where(ApiToken.oauth_grant_id == grant.id)
                                 .order_by(ApiToken.last_used_at.desc().nulls_last()).limit(1))
        app = apps.setdefault(grant.client_id, ConnectedApp(grant.client_id, grant.client_name,
                                                            grant.scopes, grant.created_at,
                                                            None))
        app.scopes = " ".join(sorted(set(app.scopes.split()) | set(grant.scopes.split())))
        if used is not None and (app.last_used_at is None or used > app.last_used_at):
            app.last_used_at = used
    return list(apps.values())


def disconnect(user: User, client_id: str) -> int:
    """Revoke every grant ``user`` gave ``client_id`` and forget the remembered consent."""
    grants = db.session.scalars(select(OAuthGrant.id).where(OAuthGrant.user_id == user.id,
                                                            OAuthGrant.client_id == client_id,
                                                            OAuthGrant.revoked_at.is_(None)))
    ids = list(grants)
    for grant_id in ids:
        revoke_grant(grant_id, "disconnected")
    consent = _consent(user.id, client_id)
    if consent is not None:
        db.session.delete(consent)
    return len(ids)


def has_dealt_with(client_id: str) -> bool:
    """Whether a person ever consented to ``client_id`` (a code or a grant was issued to it):
    only then may a request without a signed-in person make the server fetch its document."""
    code = select(OAuthCode.id).where(OAuthCode.client_id == client_id).limit(1)
    grant = select(OAuthGrant.id).where(OAuthGrant.client_id == client_id).limit(1)
    return (db.session.scalar(code) is not None) or (db.session.scalar(grant) is not None)

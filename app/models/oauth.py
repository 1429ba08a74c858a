"""OAuth 2.1 for remote MCP clients: registered clients, authorization codes, grants (one per
sign-in: a refresh-token family), refresh tokens and remembered consents.

Access tokens are not here: they are rows of ``api_tokens`` (``ApiToken.oauth_grant_id`` and
``audience``), so every door resolves them as the API tokens they are. Every secret (client
secret, code, refresh token) is stored as a SHA-256 hash of a 256-bit random value.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, Uuid, utcnow


class OAuthClient(Model):
    """A client registered through dynamic client registration (RFC 7591). Clients identified
    by a Client ID Metadata Document are not stored: their document is fetched and cached."""

    __tablename__ = "oauth_clients"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    client_id: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    secret_hash: Mapped[str | None] = mapped_column(String(64))
    client_metadata: Mapped[dict] = mapped_column(JSON, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)


class OAuthGrant(Model):
    """What a person granted one client in one sign-in; its refresh tokens form one family and
    its access tokens point here. Revoking it revokes them all."""

    __tablename__ = "oauth_grants"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True,
                                               nullable=False)
    client_id: Mapped[str] = mapped_column(Text, nullable=False)
    client_name: Mapped[str] = mapped_column(String(200), nullable=False)
    scopes: Mapped[str] = mapped_column(String(64), nullable=False)
    resource: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_reason: Mapped[str | None] = mapped_column(String(40))


class OAuthCode(Model):
    """An authorization code: single use, short-lived, bound to client, redirect URI, PKCE
    challenge and resource. Kept after use so a second use can revoke what the first issued."""

    __tablename__ = "oauth_codes"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    client_id: Mapped[str] = mapped_column(Text, nullable=False)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    redirect_uri: Mapped[str] = mapped_column(Text, nullable=False)
    scopes: Mapped[str] = mapped_column(String(64), nullable=False)
    resource: Mapped[str] = mapped_column(Text, nullable=False)
    client_name: Mapped[str] = mapped_column(String(200), nullable=False)
    code_challenge: Mapped[str] = mapped_column(String(128), nullable=False)
    code_challenge_method: Mapped[str] = mapped_column(String(8), nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    grant_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("oauth_grants.id"))


class OAuthRefreshToken(Model):
    """One refresh token of a grant's family. Used once: the next one replaces it (rotation);
    presenting a used one again revokes the family (reuse detection)."""

    __tablename__ = "oauth_refresh_tokens"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    grant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("oauth_grants.id"), index=True,
                                                nullable=False)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class OAuthConsent(Model):
    """A remembered "allow": the same client asking for no more scopes is not asked again."""

    __tablename__ = "oauth_consents"
    __table_args__ = (UniqueConstraint("user_id", "client_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    client_id: Mapped[str] = mapped_column(String(2048), nullable=False)
    scopes: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

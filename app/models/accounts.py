"""People and agents (users) and the API tokens they hold."""

from __future__ import annotations

import uuid
from datetime import datetime

from flask_login import UserMixin
from sqlalchemy import Boolean, ForeignKey, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Model, TimestampMixin, UTCDateTime, Uuid, utcnow
from app.models.provenance import MadeBy

USER_TYPES = ("human", "ai_agent")
TOKEN_SCOPES = ("read", "write")


class User(UserMixin, TimestampMixin, MadeBy, Model):
    __tablename__ = "users"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    handle: Mapped[str] = mapped_column(String(40), unique=True, nullable=False)
    name: Mapped[str] = mapped_column(String(120), nullable=False)
    email: Mapped[str | None] = mapped_column(String(254), unique=True)
    # When the person proved ``email`` is theirs (its signed confirmation link); None: not
    # proved, so no mail is sent there and no reply from there is believed.
    email_verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Notifications by email once a day (``flask mail digest``) instead of one by one.
    email_digest: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false(),
                                               nullable=False)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    user_type: Mapped[str] = mapped_column(String(16), default="human", nullable=False)
    # IANA name for the times pages show this person; None: the studio's zone, else UTC.
    timezone: Mapped[str | None] = mapped_column(String(64))
    # An agent account belongs to the person who made it: they see it in their settings and
    # can revoke it (app.services.agents). People, and agents made before owners, have none.
    # ``made_by_*`` (MadeBy): the token and grant that made an agent account.
    owner_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"), index=True)

    tokens: Mapped[list[ApiToken]] = relationship(back_populates="user")
    owner: Mapped[User | None] = relationship(remote_side=[id])

    def get_id(self) -> str:  # Flask-Login stores this in the session cookie
        return str(self.id)


class ApiToken(MadeBy, Model):
    __tablename__ = "api_tokens"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True, nullable=False)
    name: Mapped[str] = mapped_column(String(120), nullable=False)
    prefix: Mapped[str] = mapped_column(String(16), nullable=False)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    scopes: Mapped[str] = mapped_column(Text, default="read,write", nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Set for an access token issued through OAuth (app.oauth): its grant (revoking the grant
    # revokes it) and its audience, the resource (/mcp URL) it was minted for (RFC 8707).
    oauth_grant_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("oauth_grants.id"),
                                                             index=True)
    audience: Mapped[str | None] = mapped_column(Text)
    # ``made_by_*`` (MadeBy): the token and grant that created this one, if one did.

    user: Mapped[User] = relationship(back_populates="tokens")

    @property
    def scope_list(self) -> list[str]:
        return [s for s in self.scopes.split(",") if s]

    def is_active(self, now: datetime) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

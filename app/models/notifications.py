"""Notifications (a person's inbox), per-studio notification levels, per-type channel
preferences, the outgoing mail, and webhooks with their delivery log.

A notification's ``key`` says what it is about (``mention:note:<id>``, ``deadline:decision:<id>``);
(user, key) is unique, so the same thing never lands in an inbox twice, whichever process or
retry writes it.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import IdMixin, Model, UTCDateTime, Uuid, utcnow
from app.models.provenance import MadeBy
from app.models.studios import Studio

LEVELS = ("all", "mentions", "none")
CHANNELS = ("inbox", "email", "webhook")
# The types of notification (``Notification.kind``), each with its own channel preferences.
KINDS = ("mention", "reply", "new_decision", "new_commitment", "deadline", "decision_closed",
         "commitment_closed", "decision_outcome", "decision_review", "automation")


class Notification(IdMixin, Model):
    __tablename__ = "notifications"
    __table_args__ = (UniqueConstraint("user_id", "key"),
                      Index("ix_notifications_user_read", "user_id", "read_at"))

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    studio_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("studios.id"))
    kind: Mapped[str] = mapped_column(String(24), nullable=False)
    key: Mapped[str] = mapped_column(String(120), nullable=False)
    text: Mapped[str] = mapped_column(String(500), nullable=False)
    path: Mapped[str] = mapped_column(String(300), nullable=False)
    actor_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    actor: Mapped[User | None] = relationship(foreign_keys=[actor_id])
    studio: Mapped[Studio | None] = relationship()


class NotificationSetting(Model):
    """How much of one studio reaches one person's inbox: all, mentions (and replies), none."""

    __tablename__ = "notification_settings"
    __table_args__ = (UniqueConstraint("user_id", "studio_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), nullable=False)
    level: Mapped[str] = mapped_column(String(16), default="all", nullable=False)


class Webhook(IdMixin, MadeBy, Model):
    """A URL told about changes: a person's (every studio they belong to) or a studio's.

    ``secret`` signs each payload, so it is kept as it was issued (a hash could not sign); it is
    shown once, at creation, and never again on any page.
    """

    __tablename__ = "webhooks"

    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True,
                                                nullable=False)
    studio_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("studios.id"), index=True)
    url: Mapped[str] = mapped_column(String(2000), nullable=False)
    secret: Mapped[str] = mapped_column(String(80), nullable=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True, nullable=False)
    # The payload's shape: json (Harmonic's own), slack, discord, teams or matrix.
    format: Mapped[str] = mapped_column(String(16), default="json", server_default="json",
                                        nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    owner: Mapped[User] = relationship()
    studio: Mapped[Studio | None] = relationship()


class WebhookDelivery(IdMixin, Model):
    """One event for one webhook: written in the changing transaction, sent by the job queue."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_webhook_created", "webhook_id", "created_at"),
                      Index("ix_webhook_deliveries_status", "status"))

    webhook_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhooks.id"), nullable=False)
    event: Mapped[str] = mapped_column(String(80), nullable=False)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    # pending (not sent yet) → retrying (a failed attempt, another to come) → delivered | failed
    status: Mapped[str] = mapped_column(String(16), default="pending", nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    enqueued: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    # Sent again by hand (``redeliver``): its next attempt is one more try, never retried.
    redeliver: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false(),
                                            nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class WebhookAttempt(Model):
    __tablename__ = "webhook_attempts"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    delivery_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhook_deliveries.id"),
                                                   index=True, nullable=False)
    number: Mapped[int] = mapped_column(Integer, nullable=False)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    duration_ms: Mapped[int] = mapped_column(Integer, nullable=False)
    status_code: Mapped[int | None] = mapped_column(Integer)
    ok: Mapped[bool] = mapped_column(Boolean, nullable=False)
    error: Mapped[str] = mapped_column(Text, default="", nullable=False)


class NotificationPreference(Model):
    """Whether one type of notification (``mention``, ``reply``…) reaches one person by one
    channel (inbox, email, webhook); a missing row means the channel's default
    (``app.notifications.preferences``)."""

    __tablename__ = "notification_preferences"
    __table_args__ = (UniqueConstraint("user_id", "kind", "channel"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    kind: Mapped[str] = mapped_column(String(24), nullable=False)
    channel: Mapped[str] = mapped_column(String(16), nullable=False)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False)


class MailMessage(IdMixin, Model):
    """One email to one person: written in the transaction that caused it, sent by the job
    queue (``app.notifications.mailing``).

    ``key`` says what it is about (``n:mention:note:<id>``, ``digest:2026-11-29``,
    ``confirm:<address>``); (user, key) is unique, so the same thing is never mailed twice,
    whichever process or retry stages it. A notification held for the daily digest waits with
    status ``held`` until ``flask mail digest`` gathers it.
    """

    __tablename__ = "mail_messages"
    __table_args__ = (UniqueConstraint("user_id", "key"),
                      Index("ix_mail_messages_status", "status"))

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    studio_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("studios.id"))
    key: Mapped[str] = mapped_column(String(140), nullable=False)
    # notification (one), digest (the day's), confirm (an address's confirmation link)
    purpose: Mapped[str] = mapped_column(String(16), nullable=False)
    kind: Mapped[str] = mapped_column(String(24), default="", nullable=False)  # its type
    text: Mapped[str] = mapped_column(String(500), default="", nullable=False)
    path: Mapped[str] = mapped_column(String(300), default="", nullable=False)
    # held (for a digest) → pending → retrying → sent | failed | dropped (no longer allowed)
    status: Mapped[str] = mapped_column(String(16), default="pending", nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    enqueued: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    error: Mapped[str] = mapped_column(Text, default="", nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    digest_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("mail_messages.id"))

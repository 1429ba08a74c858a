"""Studios, their members, invites, pins and links between items."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy import false as sa_false
from sqlalchemy import true as sa_true
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import Model, SoftDeleteMixin, TimestampMixin, UTCDateTime, Uuid, utcnow

TEMPOS = ("daily", "weekly", "monthly")
JOIN_POLICIES = ("open", "invite")
# A studio member's role: admins manage the studio and its people, members take part, guests
# read only (every action that writes is refused to them: app.actions.registry).
ROLES = ("admin", "member", "guest")
INVITE_ROLES = ("member", "guest")  # what an invite grants; admins are made by change_role
HANDLE_PATTERN = r"^[a-z0-9-]+$"
# What a new studio starts with unless told otherwise (the create_studio action shows these).
NEW_STUDIO_DEFAULTS: dict[str, Any] = {"timezone": "UTC", "tempo": "weekly",
                                        "join_policy": "invite", "heartbeats_required": True}


class Studio(TimestampMixin, SoftDeleteMixin, Model):
    __tablename__ = "studios"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    handle: Mapped[str] = mapped_column(String(40), unique=True, nullable=False)
    name: Mapped[str] = mapped_column(String(120), nullable=False)
    description: Mapped[str] = mapped_column(Text, default="", nullable=False)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC", nullable=False)
    tempo: Mapped[str] = mapped_column(String(16), default="weekly", nullable=False)
    join_policy: Mapped[str] = mapped_column(String(16), default="invite", nullable=False)
    heartbeats_required: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    # Recipe governance: may a playbook's teacher replay their own captured session for real
    # (after a dry run) before its recipe is approved? (seed 000's quick start; default yes)
    teacher_replays: Mapped[bool] = mapped_column(Boolean, default=True, server_default=sa_true(),
                                                  nullable=False)
    # Must agents, apps and representatives declare the context of each action here
    # (app.core.declared)?
    context_required: Mapped[bool] = mapped_column(Boolean, default=False,
                                                   server_default=sa_false(), nullable=False)
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    # Deleting a studio takes two steps: an admin asks (this is set), then confirms (deleted_at).
    deletion_requested_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deletion_requested_by_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)

    memberships: Mapped[list[Membership]] = relationship(back_populates="studio")


class Membership(Model):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("studio_id", "user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), nullable=False)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True, nullable=False)
    role: Mapped[str] = mapped_column(String(16), default="member", nullable=False)
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    studio: Mapped[Studio] = relationship(back_populates="memberships")
    user: Mapped[User] = relationship()


class Invite(Model):
    """An invite link (anyone with its code may join, ``max_uses`` times) or, with
    ``invitee_id``, a pending invitation only that person may accept."""

    __tablename__ = "invites"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), index=True)
    code: Mapped[str] = mapped_column(String(32), unique=True, nullable=False)
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    role: Mapped[str] = mapped_column(String(16), default="member", server_default="member",
                                      nullable=False)
    max_uses: Mapped[int | None] = mapped_column(Integer)  # None: unlimited until it expires
    uses: Mapped[int] = mapped_column(Integer, default=0, server_default="0", nullable=False)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    invitee_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"), index=True)

    studio: Mapped[Studio] = relationship()
    created_by: Mapped[User | None] = relationship(foreign_keys=[created_by_id])
    invitee: Mapped[User | None] = relationship(foreign_keys=[invitee_id])


class Pin(Model):
    """An item pinned to a studio's home page. Items are addressed by (type, id)."""

    __tablename__ = "pins"
    __table_args__ = (UniqueConstraint("studio_id", "item_type", "item_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), nullable=False)
    item_type: Mapped[str] = mapped_column(String(24), nullable=False)
    item_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    pinned_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    pinned_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)


class Link(Model):
    """``from`` mentions the URL of ``to`` in its text; read backwards it is a backlink."""

    __tablename__ = "links"
    # The backlinks page counts a studio's links per target from this index alone, in its
    # order (migration 0032); it also serves every other lookup by studio.
    __table_args__ = (UniqueConstraint("from_type", "from_id", "to_type", "to_id"),
                      Index("ix_links_studio_target", "studio_id", "to_type", "to_id"))

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"))
    from_type: Mapped[str] = mapped_column(String(24), nullable=False)
    from_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    to_type: Mapped[str] = mapped_column(String(24), nullable=False)
    to_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

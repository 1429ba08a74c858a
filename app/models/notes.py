"""Notes (and comments, which are notes attached to another item) and their history."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import (
    IdMixin,
    Model,
    SoftDeleteMixin,
    TimestampMixin,
    UTCDateTime,
    Uuid,
    utcnow,
)
from app.models.provenance import Represented


class Note(IdMixin, TimestampMixin, SoftDeleteMixin, Represented, Model):
    __tablename__ = "notes"
    __table_args__ = (Index("ix_notes_commentable", "commentable_type", "commentable_id"),
                      # the studio lists' keyset order
                      Index("ix_notes_studio_created", "studio_id", "created_at", "id"))

    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), index=True)
    title: Mapped[str] = mapped_column(String(256), nullable=False)
    text: Mapped[str] = mapped_column(Text, default="", nullable=False)
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    updated_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    # Set when this note is a comment on another item (note, decision, commitment, ...).
    commentable_type: Mapped[str | None] = mapped_column(String(24))
    commentable_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)

    created_by: Mapped[User] = relationship(foreign_keys=[created_by_id])
    updated_by: Mapped[User] = relationship(foreign_keys=[updated_by_id])


class NoteEvent(Model):
    __tablename__ = "note_events"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    note_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("notes.id"), index=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    event_type: Mapped[str] = mapped_column(String(24), nullable=False)
    happened_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    # The note as this create or update left it (a version); None for other events and for
    # edits made before versions were kept.
    title: Mapped[str | None] = mapped_column(String(256))
    text: Mapped[str | None] = mapped_column(Text)

    user: Mapped[User] = relationship()

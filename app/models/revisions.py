"""Item revisions: the audit trail and edit history of studio items.

One row per edit, deletion, restoration or studio-deletion step, with the values the item had
before (``before``) and after (``after``) for the fields that changed. The history pages read
it, and so does anyone auditing who removed what.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import Model, UTCDateTime, Uuid, utcnow


class ItemRevision(Model):
    __tablename__ = "item_revisions"
    __table_args__ = (Index("ix_item_revisions_item", "item_type", "item_id"),
                      Index("ix_item_revisions_studio_time", "studio_id", "happened_at"))

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), nullable=False)
    item_type: Mapped[str] = mapped_column(String(24), nullable=False)  # note, comment, option...
    item_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    # The item's short id (or an option's title) as people read it, kept for deleted items too.
    item_label: Mapped[str] = mapped_column(String(300), nullable=False, default="")
    event: Mapped[str] = mapped_column(String(24), nullable=False)  # edit, delete, restore, ...
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    before: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    after: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    happened_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    user: Mapped[User] = relationship()

"""Receipts of forms people sent: a form rendered once is accepted once.

Every form for an action that must not run twice (it makes something) carries a one-time
key; the first submit that runs records (person, key) with where its result is. Back and
submit again finds the receipt and shows what the first submit made instead of making it
twice. The primary key is what refuses a second receipt when two submits race.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, utcnow


class FormReceipt(Model):
    __tablename__ = "form_receipts"
    __table_args__ = (Index("ix_form_receipts_user_created", "user_id", "created_at"),)

    user_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    action: Mapped[str] = mapped_column(String(64), nullable=False)
    location: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)

"""The change-event outbox: one row per resource changed, written in the changing transaction.

Rows are read by MCP sessions (each keeps the id of the last event it has seen) and pruned
after a bounded age (``app.core.changes``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Index, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, utcnow


class ChangeEvent(Model):
    __tablename__ = "change_events"
    # AUTOINCREMENT on SQLite: ids are never reused after pruning, so a reader's cursor (the
    # last id it has seen) stays meaningful when every older row is gone.
    __table_args__ = (Index("ix_change_events_uri_id", "uri", "id"),
                      {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"),
                                    primary_key=True, autoincrement=True)
    uri: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False,
                                                 index=True)

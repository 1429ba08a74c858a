"""Playbook capture lines kept in the database (``PLAYBOOK_CAPTURE_STORE=database``).

Append-only: one row per recorded call, its ``capture.jsonl`` line exactly as the folder store
would write it (ASCII JSON and the newline), so exporting the rows of a session in id order
gives the same file byte for byte. Hosts that share a database but no disk record into one
capture. Rows are never updated; they go when their session's rows are deleted.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, utcnow


class CaptureLine(Model):
    __tablename__ = "capture_lines"
    __table_args__ = (Index("ix_capture_lines_session_id_id", "session_id", "id"),
                      {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"),
                                    primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(200), nullable=False)
    line: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

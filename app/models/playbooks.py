"""Playbooks: teach sessions (one row per capture folder) and stored replay runs.

A ``Playbook`` is one teach session: who owns it (``owner`` is the identity key — a token, a
user, an MCP session or the loopback operator — so many can record at once without mixing),
its capture folder ``session_id`` under ``HARMONIC_DATA_DIR/playbooks`` and whether it is still
recording. A ``PlaybookRun`` is one replay or dry run with its per-step record.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import IdMixin, Model, UTCDateTime, utcnow


class Playbook(IdMixin, Model):
    __tablename__ = "playbooks"

    name: Mapped[str] = mapped_column(String(80), nullable=False)
    session_id: Mapped[str] = mapped_column(String(120), unique=True, nullable=False)
    owner: Mapped[str] = mapped_column(String(120), index=True, nullable=False)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"), index=True)
    upstream: Mapped[str] = mapped_column(String(300), nullable=False, default="")
    teaching: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    entries: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PlaybookRun(IdMixin, Model):
    __tablename__ = "playbook_runs"

    playbook_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("playbooks.id"),
                                                          index=True)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    recipe_name: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    dry_run: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="running")
    args: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False, default=list)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

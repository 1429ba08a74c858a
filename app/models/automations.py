"""Automations: a studio's rules (a trigger and an effect) and each of their firings.

A firing row is the one gate every trigger passes: (automation, trigger key) is unique, so a
rule fires once per trigger however many transactions or processes see it.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import IdMixin, Model, UTCDateTime, Uuid, utcnow
from app.models.studios import Studio

TRIGGERS = ("event", "schedule", "webhook", "manual")
EVENTS = ("decision_closed", "note_created", "mention")
EFFECTS = ("workflow", "action", "notify", "webhook")


class Automation(IdMixin, Model):
    """A rule of one studio, acting with its owner's rights."""

    __tablename__ = "automations"

    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), index=True,
                                                 nullable=False)
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    name: Mapped[str] = mapped_column(String(120), nullable=False)
    trigger: Mapped[str] = mapped_column(String(16), nullable=False)
    event: Mapped[str | None] = mapped_column(String(32))  # the event a trigger "event" hears
    schedule: Mapped[str | None] = mapped_column(String(120))  # as written: cron or words
    secret: Mapped[str | None] = mapped_column(String(80))  # signs inbound webhook calls
    effect: Mapped[str] = mapped_column(String(16), nullable=False)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    paused_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    paused_why: Mapped[str] = mapped_column(Text, default="", nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    studio: Mapped[Studio] = relationship()
    owner: Mapped[User] = relationship()


class AutomationFiring(IdMixin, Model):
    """One trigger of one rule: recorded in the causing transaction (or by the worker for a
    schedule), then its effect is carried out by a worker and its outcome written back."""

    __tablename__ = "automation_firings"
    __table_args__ = (UniqueConstraint("automation_id", "trigger_key"),
                      Index("ix_automation_firings_rule_fired", "automation_id", "fired_at"),
                      Index("ix_automation_firings_status", "status"))

    automation_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("automations.id"),
                                                     nullable=False)
    trigger_key: Mapped[str] = mapped_column(String(200), nullable=False)
    trigger: Mapped[str] = mapped_column(Text, default="", nullable=False)  # in words
    data: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    # How many automation effects led to this trigger (0: a person or a deadline did).
    depth: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    # pending → running → done | failed; refused: stopped at the gate (depth, paused)
    status: Mapped[str] = mapped_column(String(16), default="pending", nullable=False)
    outcome: Mapped[str] = mapped_column(Text, default="", nullable=False)
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)  # a workflow it started
    fired_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

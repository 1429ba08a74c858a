"""Workflow runs, their durable job queue, the event log and the side-effect ledger.

A run is one execution of a compiled workflow (or of a list of enqueued callables). Each step
instance is a job row; workers lease jobs (``app.workflows.queue``). Events are the
append-only, per-run numbered record everything else (the /runs page, ``--follow``, the MCP
resource) reads. Effects record that a step's side effect happened, in the same transaction as
the effect itself, so a retried step never repeats it.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import IdMixin, Model, UTCDateTime, utcnow
from app.models.provenance import ActsInSession, MadeBy


class WorkflowRun(IdMixin, MadeBy, ActsInSession, Model):
    __tablename__ = "workflow_runs"

    kind: Mapped[str] = mapped_column(String(16), nullable=False, default="workflow")
    workflow: Mapped[str] = mapped_column(String(200), nullable=False)  # metadata.name
    path: Mapped[str] = mapped_column(String(300), nullable=False, default="")
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="queued")
    inputs: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    compiled: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    result: Mapped[Any] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"), index=True,
                                                      nullable=True)
    # Its steps act as the identity that started it: ``user_id``, this kind
    # (app.core.identity.KINDS) and the token and grant in ``made_by_*``.
    caller_kind: Mapped[str] = mapped_column(String(16), default="person", nullable=False)
    # A sub-run (a noetl.io/v2 ``playbook`` task): the run and the waiting job it releases
    # when it ends.
    parent_run_id: Mapped[uuid.UUID | None] = mapped_column(index=True, nullable=True)
    parent_step: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class WorkflowJob(Model):
    __tablename__ = "workflow_jobs"
    __table_args__ = (
        UniqueConstraint("run_id", "step", name="uq_workflow_jobs_run_id_step"),
        Index("ix_workflow_jobs_status_available_at", "status", "available_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), nullable=False)
    step: Mapped[str] = mapped_column(String(200), nullable=False)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    # queued, leased, done, dead, failed, cancelled; or waiting: enqueued, to be queued once
    # what it waits for (payload["wait"]) has happened
    status: Mapped[str] = mapped_column(String(10), nullable=False, default="queued")
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=3)
    available_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    worker_id: Mapped[str | None] = mapped_column(String(120), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    result: Mapped[Any] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class WorkflowEvent(Model):
    __tablename__ = "workflow_events"
    __table_args__ = (UniqueConstraint("run_id", "seq", name="uq_workflow_events_run_id_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), nullable=False)
    seq: Mapped[int] = mapped_column(Integer, nullable=False)
    type: Mapped[str] = mapped_column(String(40), nullable=False)
    step: Mapped[str | None] = mapped_column(String(200), nullable=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    time: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)


class WorkflowEffect(Model):
    """A side effect that happened: written in the effect's own transaction (see runner)."""

    __tablename__ = "workflow_effects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(300), nullable=False, unique=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), index=True,
                                              nullable=False)
    step: Mapped[str] = mapped_column(String(200), nullable=False)
    result: Mapped[Any] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

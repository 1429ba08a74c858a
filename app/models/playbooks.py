"""Playbooks: teach sessions (one row per capture folder) and stored replay runs.

A ``Playbook`` is one teach session: who owns it (``owner`` is the identity key — a token, a
user, an MCP session or the loopback operator — so many can record at once without mixing),
its capture folder ``session_id`` under ``HARMONIC_DATA_DIR/playbooks`` and whether it is still
recording, and the studio it is shared with (``studio_id``: whose members may review its
recipe and whose admins approve it). A ``PlaybookRun`` is one replay or dry run with its
per-step record, the digest of the recipe it ran and of its arguments (a real run looks for an
earlier successful dry run with both), the recipe's governance state at the time and the door
it came through.

A ``RecipeVersion`` is one version of a playbook's recipe with its whole content: ``draft`` when
generated or saved, then ``reviewed``, ``approved``, and perhaps ``retired`` (see
``app.playbooks.governance``). A ``PlaybookAudit`` row records every state change and every
replay, refused ones included.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import IdMixin, Model, UTCDateTime, Uuid, utcnow
from app.models.provenance import MadeBy


class Playbook(IdMixin, MadeBy, Model):
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
    studio_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("studios.id"), index=True)


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
    recipe_version: Mapped[str] = mapped_column(String(40), nullable=False, default="")
    recipe_digest: Mapped[str] = mapped_column(String(64), nullable=False, default="",
                                               index=True)
    args_digest: Mapped[str] = mapped_column(String(64), nullable=False, default="")
    state: Mapped[str] = mapped_column(String(16), nullable=False, default="")
    door: Mapped[str] = mapped_column(String(16), nullable=False, default="")


class RecipeVersion(IdMixin, Model):
    __tablename__ = "playbook_recipe_versions"

    playbook_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("playbooks.id"), index=True,
                                                   nullable=False)
    version: Mapped[str] = mapped_column(String(40), nullable=False)
    digest: Mapped[str] = mapped_column(String(64), nullable=False, index=True)
    content: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False, default="draft")
    author_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    author: Mapped[str] = mapped_column(String(120), nullable=False, default="")
    previous_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("playbook_recipe_versions.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    reviewed_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    approved_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    approved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PlaybookAudit(Model):
    __tablename__ = "playbook_audit"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    playbook_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("playbooks.id"),
                                                          index=True)
    version_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("playbook_recipe_versions.id"))
    run_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("playbook_runs.id"))
    event: Mapped[str] = mapped_column(String(24), nullable=False)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    actor: Mapped[str] = mapped_column(String(120), nullable=False, default="")
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow,
                                                 index=True)

"""Floorplans shared in a studio: the current DSL text, and every version of it with its author."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import Model, TimestampMixin, UTCDateTime, Uuid, utcnow


class Floorplan(TimestampMixin, Model):
    """A named plan in a studio; its URL is /studios/<handle>/f/<name>."""

    __tablename__ = "floorplans"
    __table_args__ = (UniqueConstraint("studio_id", "name"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), index=True)
    name: Mapped[str] = mapped_column(String(64), nullable=False)
    dsl: Mapped[str] = mapped_column(Text, default="", nullable=False)
    version: Mapped[int] = mapped_column(Integer, default=1, nullable=False)
    created_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    updated_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)

    created_by: Mapped[User] = relationship(foreign_keys=[created_by_id])
    updated_by: Mapped[User] = relationship(foreign_keys=[updated_by_id])


class FloorplanVersion(Model):
    """One saved state of a plan: number 1 is the creation, each change adds the next."""

    __tablename__ = "floorplan_versions"
    __table_args__ = (UniqueConstraint("floorplan_id", "number"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    floorplan_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("floorplans.id"), index=True)
    number: Mapped[int] = mapped_column(Integer, nullable=False)
    dsl: Mapped[str] = mapped_column(Text, nullable=False)
    summary: Mapped[str] = mapped_column(String(300), nullable=False)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    user: Mapped[User] = relationship()

"""Grants and representation sessions: a person lets a member of a studio act for them there.

A ``Grant`` names the principal (who grants), the grantee (a person or an agent, a member of
the studio), the studio, which actions (names, comma-separated) and until when; revoking sets
``revoked_at``. A ``Representation`` is one session of a grantee acting for its principal under
one grant: one at a time per representative, ``ends_at`` at most an hour after it started,
``ended_at`` once either side ends it (or the grant is revoked).

What a representative makes carries its id beside the principal's
(``app.models.provenance.Represented``), so pages can say "Agent Y for Alice".
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import Model, UTCDateTime, Uuid, utcnow
from app.models.studios import Studio


class Grant(Model):
    __tablename__ = "grants"
    __table_args__ = (Index("ix_grants_grantee", "grantee_id", "revoked_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), nullable=False)
    principal_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True,
                                                    nullable=False)
    grantee_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    actions: Mapped[str] = mapped_column(Text, nullable=False)  # action names, comma-separated
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    studio: Mapped[Studio] = relationship()
    principal: Mapped[User] = relationship(foreign_keys=[principal_id])
    grantee: Mapped[User] = relationship(foreign_keys=[grantee_id])

    @property
    def action_names(self) -> list[str]:
        return [name for name in self.actions.split(",") if name]

    def is_active(self, now: datetime) -> bool:
        return self.revoked_at is None and self.expires_at > now


class Representation(Model):
    __tablename__ = "representations"
    __table_args__ = (Index("ix_representations_representative", "representative_id",
                            "ended_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    grant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("grants.id"), index=True,
                                                nullable=False)
    principal_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True,
                                                    nullable=False)
    representative_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"),
                                                         nullable=False)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    grant: Mapped[Grant] = relationship()
    principal: Mapped[User] = relationship(foreign_keys=[principal_id])
    representative: Mapped[User] = relationship(foreign_keys=[representative_id])

    def is_active(self, now: datetime) -> bool:
        return self.ended_at is None and self.ends_at > now and self.grant.is_active(now)


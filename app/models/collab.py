"""Decisions (acceptance voting and the other kinds), commitments (critical mass) and heartbeats.

Uniqueness that concurrent agents could break lives in the database, not in Python: one option
title per decision, one vote per (option, voter), one participant per (commitment, user), one
heartbeat per (studio, user, cycle).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.accounts import User
from app.models.base import (
    IdMixin,
    Model,
    SoftDeleteMixin,
    TimestampMixin,
    UTCDateTime,
    Uuid,
    utcnow,
)
from app.models.outcomes import DecisionOutcome
from app.models.provenance import Represented

# "No deadline" is stored as a deadline this far away: the item closes when its creator says so.
MANUAL_CLOSE = timedelta(days=365 * 100)
# Anything further out than this is shown as "no deadline".
MANUAL_CLOSE_THRESHOLD = timedelta(days=365 * 50)


class ClosesByDeadline:
    """When an item with a deadline is closed: for its entity and for the plain rows a list
    shows of it (``app.services.list_rows``) alike. Reads ``deadline`` and ``created_at``."""

    __slots__ = ()
    if TYPE_CHECKING:  # not at run time: the ORM would read them as columns of the models
        deadline: datetime
        created_at: datetime

    def is_closed(self, now: datetime | None = None) -> bool:
        return self.deadline <= (now or utcnow())

    @property
    def closed(self) -> bool:
        return self.is_closed()

    @property
    def manual_close(self) -> bool:
        """True when the item has no real deadline (it closes when its creator closes it)."""
        return self.deadline - self.created_at > MANUAL_CLOSE_THRESHOLD


class DeadlineMixin(ClosesByDeadline):
    deadline: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    # When its close was acted on (events, notifications, webhooks: ``services.closing``),
    # once; None while that is still to come. The item is closed by its deadline either way.
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # When its "closes in 24 hours" reminder went out; None again when the deadline moves.
    reminded_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class Decision(IdMixin, TimestampMixin, DeadlineMixin, SoftDeleteMixin, DecisionOutcome, Model):
    __tablename__ = "decisions"
    __table_args__ = (Index("ix_decisions_studio_created", "studio_id", "created_at", "id"),
                      Index("ix_decisions_closed_deadline", "closed_at", "deadline"),
                      Index("ix_decisions_review", "outcome_reminded_at", "outcome_review_at"))

    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), index=True,
                                                 nullable=False)
    question: Mapped[str] = mapped_column(String(500), nullable=False)
    description: Mapped[str] = mapped_column(Text, default="", nullable=False)
    options_open: Mapped[bool] = mapped_column(Boolean, default=True, nullable=False)
    created_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    # How it is decided (``app.services.tallies.KINDS``): acceptance keeps its votes in
    # decision_votes, every other kind one ballot per voter in decision_ballots.
    kind: Mapped[str] = mapped_column(String(20), default="acceptance",
                                      server_default="acceptance", nullable=False)
    # The kind's settings as ``app.services.decision_kinds`` validated them at creation: dots,
    # who votes and proposes, quorum, required share, none of the above, anonymous, hidden
    # results.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, nullable=False)

    created_by: Mapped[User] = relationship()
    options: Mapped[list[Option]] = relationship(back_populates="decision",
                                                 order_by="Option.created_at")


class Option(SoftDeleteMixin, Model):
    __tablename__ = "decision_options"
    __table_args__ = (UniqueConstraint("decision_id", "title"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    decision_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("decisions.id"), nullable=False)
    title: Mapped[str] = mapped_column(String(256), nullable=False)
    # Breaks ties in the results; drawn once when the option is added, so the order is stable.
    random_id: Mapped[int] = mapped_column(Integer, nullable=False)
    created_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    # A time poll's slot: when it starts and how long it lasts (its title says both, in the
    # studio's time zone). None for every other kind.
    starts_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    minutes: Mapped[int | None] = mapped_column(Integer, default=None)

    decision: Mapped[Decision] = relationship(back_populates="options")
    created_by: Mapped[User] = relationship()


class Vote(Represented, Model):
    """One voter's stance on one option; voting again updates this row (an upsert)."""

    __tablename__ = "decision_votes"
    # The decision page's tally and voters read only these columns (migrations 0019 and
    # 0031); the studio's feed reads the newest votes (migration 0020).
    __table_args__ = (UniqueConstraint("option_id", "user_id"),
                      Index("ix_decision_votes_tally", "decision_id", "option_id", "accepted",
                            "preferred"),
                      Index("ix_decision_votes_voters", "decision_id", "user_id", "created_at",
                            "representative_id"),
                      Index("ix_decision_votes_recent", "updated_at"))

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    decision_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("decisions.id"), index=True,
                                                   nullable=False)
    option_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("decision_options.id"),
                                                 nullable=False)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    accepted: Mapped[bool] = mapped_column(Boolean, nullable=False)
    preferred: Mapped[bool] = mapped_column(Boolean, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    user: Mapped[User] = relationship()


class DecisionBallot(Model):
    """One voter's whole ballot on a decision of any kind but acceptance (``choices`` as
    ``app.services.tallies`` reads them); voting again replaces it.

    An anonymous decision's ballot is stored unlinked: no voter, no representative, no time,
    and its id is drawn anew each time the decision's anonymous ballots are rewritten in a
    random order (``app.services.ballots``); who voted is in ``decision_participants``.
    """

    __tablename__ = "decision_ballots"
    __table_args__ = (UniqueConstraint("decision_id", "user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    decision_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("decisions.id"), index=True,
                                                   nullable=False)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    # Set explicitly (not ``Represented``, whose stamp would link an anonymous ballot).
    representative_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    choices: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    created_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class DecisionParticipant(Model):
    """Who took part in a decision of a kind with ballots (anonymous or not): the voter and
    the representative who voted for them, with no time, so nothing orders them beside the
    ballots."""

    __tablename__ = "decision_participants"
    __table_args__ = (UniqueConstraint("decision_id", "user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    decision_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("decisions.id"), index=True,
                                                   nullable=False)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    representative_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)


class Commitment(IdMixin, TimestampMixin, DeadlineMixin, SoftDeleteMixin, Model):
    __tablename__ = "commitments"
    __table_args__ = (Index("ix_commitments_studio_created", "studio_id", "created_at", "id"),
                      Index("ix_commitments_closed_deadline", "closed_at", "deadline"))

    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), index=True,
                                                 nullable=False)
    title: Mapped[str] = mapped_column(String(256), nullable=False)
    description: Mapped[str] = mapped_column(Text, default="", nullable=False)
    critical_mass: Mapped[int] = mapped_column(Integer, nullable=False)
    # At most this many participants; reaching it closes the commitment. None: no cap.
    participant_limit: Mapped[int | None] = mapped_column(Integer)
    created_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)

    created_by: Mapped[User] = relationship()


class CommitmentParticipant(Model):
    __tablename__ = "commitment_participants"
    __table_args__ = (UniqueConstraint("commitment_id", "user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    commitment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("commitments.id"),
                                                     nullable=False)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), nullable=False)
    committed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    user: Mapped[User] = relationship()


class Heartbeat(Model):
    """A member's "I'm here" for one cycle of a studio's tempo."""

    __tablename__ = "heartbeats"
    __table_args__ = (UniqueConstraint("studio_id", "user_id", "cycle_start"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    studio_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("studios.id"), nullable=False)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id"), index=True,
                                               nullable=False)
    cycle_start: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)

    user: Mapped[User] = relationship()

"""Heartbeats: a member's check-in for the current cycle of the studio's tempo.

Where a studio requires them, a member sees its content only after sending one this cycle.
One heartbeat per (studio, member, cycle) is enforced by a unique constraint.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models import Studio, User
from app.models.base import utcnow
from app.models.collab import Heartbeat
from app.services import cycles
from app.services.errors import Conflict


def current(studio: Studio, user: User, now: datetime | None = None) -> Heartbeat | None:
    window = cycles.current(studio, now)
    return db.session.scalar(
        select(Heartbeat)
        .where(Heartbeat.studio_id == studio.id, Heartbeat.user_id == user.id,
               Heartbeat.created_at >= window.start, Heartbeat.created_at < window.end)
        .limit(1))


def needed(studio: Studio, user: User | None) -> bool:
    """True when the studio requires a heartbeat and ``user`` has not sent one this cycle."""
    return bool(studio.heartbeats_required and user is not None
                and current(studio, user) is None)


def send(studio: Studio, user: User, now: datetime | None = None) -> Heartbeat:
    now = now or utcnow()
    window = cycles.current(studio, now)
    if current(studio, user, now) is not None:
        raise Conflict("you already sent a heartbeat in this cycle")
    beat = Heartbeat(studio_id=studio.id, user_id=user.id, cycle_start=window.start,
                     expires_at=window.end, created_at=now)
    try:
        with db.session.begin_nested():
            db.session.add(beat)
    except IntegrityError:
        raise Conflict("you already sent a heartbeat in this cycle") from None
    return beat


def last(studio: Studio, user: User) -> Heartbeat | None:
    return db.session.scalar(
        select(Heartbeat)
        .where(Heartbeat.studio_id == studio.id, Heartbeat.user_id == user.id)
        .order_by(Heartbeat.created_at.desc()).limit(1))


def latest_of(studio: Studio, user_ids: list[uuid.UUID]) -> dict[uuid.UUID, datetime]:
    """When each of these people last sent a heartbeat to the studio (absent: never)."""
    if not user_ids:
        return {}
    rows = db.session.execute(
        select(Heartbeat.user_id, func.max(Heartbeat.created_at))
        .where(Heartbeat.studio_id == studio.id, Heartbeat.user_id.in_(user_ids))
        .group_by(Heartbeat.user_id)).all()
    return {user_id: when for user_id, when in rows}


def present(studio: Studio, now: datetime | None = None) -> list[User]:
    """Members with a heartbeat in the current cycle."""
    window = cycles.current(studio, now)
    return list(db.session.scalars(
        select(User).join(Heartbeat, Heartbeat.user_id == User.id)
        .where(Heartbeat.studio_id == studio.id, Heartbeat.created_at >= window.start,
               Heartbeat.created_at < window.end)
        .order_by(Heartbeat.created_at)))

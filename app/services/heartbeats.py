"""Heartbeats: a member's check-in for the current cycle of the studio's tempo.

Where a studio requires them, a member sees its content only after sending one this cycle.
One heartbeat per (studio, member, cycle) is enforced by a unique constraint.

Not gated: a member on the day they joined (in the studio's time zone; a studio's creator joined
when they made it), so nobody is stopped on their first day; and guests, who read but do not
take part. Anyone not gated may still send one, and it counts for the whole cycle.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError

from app.db import Query
from app.extensions import db
from app.models import Membership, Studio, User
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


def _membership(studio: Studio, user: User) -> Membership | None:
    return db.session.scalar(select(Membership).where(Membership.studio_id == studio.id,
                                                      Membership.user_id == user.id).limit(1))


def can_send(studio: Studio, user: User | None, member: Membership | None = None) -> bool:
    """True when the studio asks for heartbeats, ``user`` takes part in it (a member or admin,
    not a guest) and has not sent one this cycle."""
    if not studio.heartbeats_required or user is None:
        return False
    member = member or _membership(studio, user)
    if member is None or member.role == "guest":
        return False
    return current(studio, user) is None


def first_day(studio: Studio, member: Membership, now: datetime | None = None) -> bool:
    """True on the day ``member`` joined, in the studio's time zone."""
    zone = cycles.zone_of(studio)
    return member.joined_at.astimezone(zone).date() == (now or utcnow()).astimezone(zone).date()


def needed(studio: Studio, user: User | None, member: Membership | None = None) -> bool:
    """True when ``user`` must send a heartbeat before seeing the studio: it asks for them,
    they take part, have sent none this cycle, and this is not the day they joined."""
    if user is None:
        return False
    member = member or _membership(studio, user)
    return (member is not None and can_send(studio, user, member)
            and not first_day(studio, member))


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


def latest(studio: Studio) -> Query[dict[uuid.UUID, datetime]]:
    """When each person last sent a heartbeat to the studio (absent: never): everyone's, its
    members being most of the people who ever sent one there."""
    return Query(_LATEST_OF, {"studio_id": studio.id},
                 lambda rows: {user_id: when for user_id, when in rows})


# The team page reads it on every view: built once. By the studio alone, not by its members'
# ids, so that it needs no answer before it and goes to the database with the members' read.
_LATEST_OF = (select(Heartbeat.user_id, func.max(Heartbeat.created_at))
              .where(Heartbeat.studio_id == bindparam("studio_id"))
              .group_by(Heartbeat.user_id))


def present(studio: Studio, now: datetime | None = None) -> list[User]:
    """Members with a heartbeat in the current cycle."""
    window = cycles.current(studio, now)
    return list(db.session.scalars(
        select(User).join(Heartbeat, Heartbeat.user_id == User.id)
        .where(Heartbeat.studio_id == studio.id, Heartbeat.created_at >= window.start,
               Heartbeat.created_at < window.end)
        .order_by(Heartbeat.created_at)))

"""A person's inbox: notifications written, read, marked read; per-studio levels; a decision's
outcome in words.

The rows are written by ``notify`` (an action's, a close's and a reminder's notifications alike);
the (user, key) uniqueness makes writing the same notification twice write it once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, func, or_, select, update

from app.core import kept
from app.db import conflicts, read, value_of, writing
from app.extensions import db
from app.models import Membership, Studio, User
from app.models.base import utcnow
from app.models.collab import Decision
from app.models.notifications import LEVELS, Notification, NotificationSetting
from app.services import decisions, standings
from app.services.errors import invalid_param

PAGE_SIZE = 50
PERSONAL = ("mention", "reply")  # what the "mentions" level still lets through


@dataclass
class Draft:
    """A notification to write: for whom, about what (``key`` makes it unique per person)."""

    user_id: uuid.UUID
    kind: str
    key: str
    text: str
    path: str
    studio_id: uuid.UUID | None = None
    actor_id: uuid.UUID | None = None


def write(drafts: list[Draft]) -> int:
    """Insert the drafts, skipping any (user, key) already there; returns how many were new."""
    unique: dict[tuple[uuid.UUID, str], Draft] = {}
    for draft in drafts:
        unique.setdefault((draft.user_id, draft.key), draft)
    if not unique:
        return 0
    now = utcnow()
    rows: list[dict[str, Any]] = []
    for d in unique.values():
        ident = uuid.uuid4()
        rows.append({"id": ident, "short_id": ident.hex[:8], "user_id": d.user_id,
                     "studio_id": d.studio_id, "kind": d.kind, "key": d.key[:120],
                     "text": d.text[:500], "path": d.path[:300], "actor_id": d.actor_id,
                     "created_at": now, "read_at": None})
    statement = conflicts.insert(Notification).values(rows) \
        .on_conflict_do_nothing(index_elements=["user_id", "key"])
    with writing():  # the action's own, when an observer writes them (nested blocks join)
        for user_id in {d.user_id for d in unique.values()}:
            kept.changed(BADGE, str(user_id))
        return int(db.session.execute(statement).rowcount or 0)  # type: ignore[attr-defined]


# Levels ----------------------------------------------------------------------------------------

def levels_of(user_ids: list[uuid.UUID], studio_id: uuid.UUID) -> dict[uuid.UUID, str]:
    """Each person's level for one studio ("all" unless they chose otherwise)."""
    chosen = dict(db.session.execute(
        select(NotificationSetting.user_id, NotificationSetting.level)
        .where(NotificationSetting.studio_id == studio_id,
               NotificationSetting.user_id.in_(user_ids))).all()) if user_ids else {}
    return {uid: chosen.get(uid, "all") for uid in user_ids}


def wants(level: str, kind: str) -> bool:
    if level == "none":
        return False
    return level == "all" or kind in PERSONAL


def studio_levels(user: User) -> list[tuple[Studio, str]]:
    """The person's studios with their level in each, by studio name."""
    chosen = dict(db.session.execute(
        select(NotificationSetting.studio_id, NotificationSetting.level)
        .where(NotificationSetting.user_id == user.id)).all())
    rows = db.session.scalars(select(Studio).join(Membership, Membership.studio_id == Studio.id)
                              .where(Membership.user_id == user.id).order_by(Studio.name))
    return [(s, chosen.get(s.id, "all")) for s in rows]


def set_level(user: User, studio_handle: str, level: str) -> Studio:
    if level not in LEVELS:
        raise invalid_param("level", f"must be one of {', '.join(LEVELS)}")
    studio = db.session.scalar(select(Studio).join(Membership, Membership.studio_id == Studio.id)
                               .where(Studio.handle == (studio_handle or "").strip().lower(),
                                      Membership.user_id == user.id))
    if studio is None:
        raise invalid_param("studio", f"you are not a member of a studio '{studio_handle}'")
    setting = db.session.scalar(select(NotificationSetting).where(
        NotificationSetting.user_id == user.id, NotificationSetting.studio_id == studio.id))
    if setting is None:
        db.session.add(NotificationSetting(user_id=user.id, studio_id=studio.id, level=level))
    else:
        setting.level = level
    db.session.flush()
    return studio


# Reading and marking ------------------------------------------------------------------------

BADGE = "inbox-badge"  # app.core.kept's topic: each person's unread count (the header's badge)


def unread_count(user: User) -> int:
    return int(read(value_of(_UNREAD, {"user_id": user.id})) or 0)


# Every HTML page's badge: built once, bound per request.
_UNREAD = select(func.count(Notification.id)).where(
    Notification.user_id == bindparam("user_id"), Notification.read_at.is_(None))


def listing(user: User, before: str | None = None, unread_only: bool = False,
            limit: int = PAGE_SIZE) -> tuple[list[Notification], str | None]:
    """Newest first, ``limit`` at a time; the cursor of the next page (or None)."""
    query = select(Notification).where(Notification.user_id == user.id)
    if unread_only:
        query = query.where(Notification.read_at.is_(None))
    if before:
        anchor = _own(user, before)
        query = query.where(or_(Notification.created_at < anchor.created_at,
                                and_(Notification.created_at == anchor.created_at,
                                     Notification.id < anchor.id)))
    rows = list(db.session.scalars(query.order_by(Notification.created_at.desc(),
                                                  Notification.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].short_id if more and rows else None)


def _own(user: User, ident: str) -> Notification:
    ident = (ident or "").strip()
    found = db.session.scalar(select(Notification).where(
        Notification.user_id == user.id, Notification.short_id == ident[:8].lower()))
    if found is None:
        # A parameter error, not a 404: the page exists, the id given to it does not.
        raise invalid_param("id", f"you have no notification '{ident}' (ids are listed at "
                                  "/inbox)")
    return found


def mark_read(user: User, ident: str) -> Notification:
    found = _own(user, ident)
    if found.read_at is None:
        found.read_at = utcnow()
        kept.changed(BADGE, str(user.id))
    return found


def mark_all_read(user: User) -> int:
    kept.changed(BADGE, str(user.id))
    result = db.session.execute(update(Notification).where(
        Notification.user_id == user.id, Notification.read_at.is_(None))
        .values(read_at=utcnow()))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


# Outcomes ------------------------------------------------------------------------------------

def outcome(decision: Decision) -> str:
    if decision.kind != "acceptance":
        return standings.outcome(decision)
    rows = read(decisions.results(decision))
    if not rows or rows[0].accepted == 0:
        return "no option was accepted"
    top = rows[0]
    plural = "s" if top.accepted != 1 else ""
    return f"“{top.option.title}” won with {top.accepted} acceptance{plural}"

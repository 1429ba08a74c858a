"""A person's inbox: notifications written, read, marked read; per-studio levels; and the
notifications that come from time passing (a deadline within 24 hours, a decision closed with
its outcome), computed when the inbox is read.

Time-driven notifications are computed lazily, on reading the inbox (``sync_due``), not by a
periodic job: nothing happens at a deadline, so there is no change to hang them on, and a
person who never opens the inbox costs nothing. The (user, key) uniqueness makes the
computation idempotent across processes. The header badge counts stored rows only, so it
shows them once the inbox has been opened.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app.db import read, value_of, writing
from app.extensions import db
from app.models import Membership, Studio, User
from app.models.base import utcnow
from app.models.collab import Commitment, Decision
from app.models.notifications import LEVELS, Notification, NotificationSetting
from app.notifications import preferences
from app.services import decisions, items
from app.services.errors import invalid_param

PAGE_SIZE = 50
DUE_WITHIN = timedelta(hours=24)
CLOSED_LOOKBACK = timedelta(days=7)  # closed decisions older than this are not news any more
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
    dialect = postgresql if db.session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(Notification).values(rows) \
        .on_conflict_do_nothing(index_elements=["user_id", "key"])
    with writing():  # the action's own, when an observer writes them (nested blocks join)
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
    return found


def mark_all_read(user: User) -> int:
    result = db.session.execute(update(Notification).where(
        Notification.user_id == user.id, Notification.read_at.is_(None))
        .values(read_at=utcnow()))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


# What time brings ----------------------------------------------------------------------------

def sync_due(user: User, now: datetime | None = None) -> int:
    """Write the person's deadline and closed-decision notifications that are due and missing."""
    now = now or utcnow()
    memberships = list(db.session.execute(
        select(Membership.studio_id, Membership.joined_at).where(Membership.user_id == user.id)))
    if not memberships:
        return 0
    levels = {sid: lvl for sid, lvl in db.session.execute(
        select(NotificationSetting.studio_id, NotificationSetting.level)
        .where(NotificationSetting.user_id == user.id))}
    joined = {sid: at for sid, at in memberships if levels.get(sid, "all") == "all"}
    if not joined:
        return 0
    handles = dict(db.session.execute(select(Studio.id, Studio.handle)
                                      .where(Studio.id.in_(joined))).all())
    seen = set(db.session.scalars(select(Notification.key).where(
        Notification.user_id == user.id,
        Notification.kind.in_(("deadline", "decision_closed")))))
    drafts: list[Draft] = []
    kinds: tuple[tuple[Any, str], ...] = ((Decision, "decision"), (Commitment, "commitment"))
    for model, item_type in kinds:
        due = db.session.scalars(select(model).where(
            model.studio_id.in_(joined), model.deadline > now,
            model.deadline <= now + DUE_WITHIN))
        for item in due:
            key = f"deadline:{item_type}:{item.short_id}"
            if key in seen:
                continue
            hours = max(1, round((item.deadline - now).total_seconds() / 3600))
            drafts.append(Draft(user.id, "deadline", key,
                                f"{item_type.title()} “{items.title_of(item_type, item)}” closes "
                                f"in about {hours} hour{'s' if hours != 1 else ''}",
                                _path(handles[item.studio_id], item_type, item),
                                item.studio_id))
    closed = db.session.scalars(select(Decision).where(
        Decision.studio_id.in_(joined), Decision.deadline <= now,
        Decision.deadline > now - CLOSED_LOOKBACK))
    for decision in closed:
        key = f"closed:decision:{decision.short_id}"
        if key in seen or decision.deadline < joined[decision.studio_id]:
            continue
        if decision.created_by_id == user.id and decision.updated_at >= decision.deadline:
            continue  # closed by hand, which only its creator does: their own act, not news
        drafts.append(Draft(user.id, "decision_closed", key,
                            f"Decision “{decision.question}” closed: {outcome(decision)}",
                            _path(handles[decision.studio_id], "decision", decision),
                            decision.studio_id))
    # Computed for the inbox alone: the kinds the person keeps out of it are not written.
    choices = preferences.chosen([user.id], {d.kind for d in drafts})
    return write([d for d in drafts if preferences.wants(choices, user.id, d.kind, "inbox")])


def outcome(decision: Decision) -> str:
    rows = read(decisions.results(decision))
    if not rows or rows[0].accepted == 0:
        return "no option was accepted"
    top = rows[0]
    plural = "s" if top.accepted != 1 else ""
    return f"“{top.option.title}” won with {top.accepted} acceptance{plural}"


def _path(handle: str, item_type: str, item: Any) -> str:
    return f"/studios/{handle}/{items.KINDS[item_type].letter}/{item.short_id}"

"""Cycles: named windows of time (today, this-week, ...) in a studio's time zone.

Cycles are computed, never stored. An item is in a cycle when it was created before the cycle's
end and its deadline is after the cycle's start; a note without a deadline counts as closing
when it was written. Filters and sorting for the cycle pages live here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import joinedload

from app.db import reads
from app.extensions import db
from app.models import Note, Studio, User
from app.models.base import utcnow
from app.models.collab import Commitment, Decision
from app.services import list_rows
from app.services.errors import Invalid, NotFound

UNITS = ("day", "week", "month", "year")
NAMES: dict[str, tuple[str, int]] = {
    "yesterday": ("day", -1), "today": ("day", 0), "tomorrow": ("day", 1),
    "last-week": ("week", -1), "this-week": ("week", 0), "next-week": ("week", 1),
    "last-month": ("month", -1), "this-month": ("month", 0), "next-month": ("month", 1),
    "last-year": ("year", -1), "this-year": ("year", 0), "next-year": ("year", 1),
}
TEMPO_CYCLE = {"daily": "today", "weekly": "this-week", "monthly": "this-month"}

FILTERS = ("mine", "not_mine", "open", "closed", "closing_soon")
CLOSING_SOON = timedelta(hours=24)
SORT_KEYS = ("created", "deadline")
KINDS = (("note", Note), ("decision", Decision), ("commitment", Commitment))


@dataclass(frozen=True)
class Cycle:
    name: str
    unit: str
    start: datetime  # UTC
    end: datetime  # UTC, exclusive
    zone: ZoneInfo

    @property
    def label(self) -> str:
        return self.name.replace("-", " ").capitalize()

    @property
    def span(self) -> str:
        """The cycle's dates as the studio reads them, e.g. 'Mon 2026-11-23 – Sun 2026-11-29'."""
        first = self.start.astimezone(self.zone).date()
        last = (self.end.astimezone(self.zone) - timedelta(seconds=1)).date()
        if first == last:
            return first.strftime("%a %Y-%m-%d")
        return f"{first.strftime('%a %Y-%m-%d')} – {last.strftime('%a %Y-%m-%d')}"

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def zone_of(studio: Studio) -> ZoneInfo:
    try:
        return ZoneInfo(studio.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _shift(day: date, unit: str, steps: int) -> date:
    """The first day of the unit ``steps`` away from the unit starting at ``day``."""
    if unit == "day":
        return day + timedelta(days=steps)
    if unit == "week":
        return day + timedelta(weeks=steps)
    if unit == "month":
        months = day.year * 12 + day.month - 1 + steps
        return date(months // 12, months % 12 + 1, 1)
    return date(day.year + steps, 1, 1)


def _unit_start(local: date, unit: str) -> date:
    if unit == "day":
        return local
    if unit == "week":  # weeks start on Monday
        return local - timedelta(days=local.weekday())
    if unit == "month":
        return local.replace(day=1)
    return date(local.year, 1, 1)


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    # Built from calendar fields, so a 23- or 25-hour day across a DST change stays a day.
    return datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC)


def cycle(name: str, zone: ZoneInfo, now: datetime | None = None) -> Cycle:
    if name not in NAMES:
        raise NotFound(f"no cycle '{name}': use one of {', '.join(NAMES)}")
    unit, steps = NAMES[name]
    local_today = (now or utcnow()).astimezone(zone).date()
    first = _shift(_unit_start(local_today, unit), unit, steps)
    return Cycle(name, unit, _midnight(first, zone), _midnight(_shift(first, unit, 1), zone),
                 zone)


def current(studio: Studio, now: datetime | None = None) -> Cycle:
    """The cycle of the studio's tempo that contains ``now``."""
    return cycle(TEMPO_CYCLE.get(studio.tempo, "this-week"), zone_of(studio), now)


# Items in a cycle -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Query:
    filters: tuple[str, ...] = ()
    sort: str = "created"
    descending: bool = True

    @property
    def sort_param(self) -> str:
        return f"{self.sort}-{'desc' if self.descending else 'asc'}"


def parse_query(args: Any) -> Query:
    """Filters (``filter=mine,open`` or repeated) and sort (``sort=deadline-asc``) from a query."""
    raw: list[str] = []
    for key in ("filter", "filters"):
        for value in args.getlist(key):
            raw += [part.strip() for part in value.split(",") if part.strip()]
    unknown = [f for f in raw if f not in FILTERS]
    errors = []
    if unknown:
        errors.append({"param": "filter", "message": f"unknown filter {', '.join(unknown)} "
                                                     f"(use {', '.join(FILTERS)})"})
    sort_value = (args.get("sort") or args.get("sort_by") or "created-desc").strip().lower()
    key, _, direction = sort_value.partition("-")
    key = {"created_at": "created", "deadline_at": "deadline"}.get(key, key)
    if key not in SORT_KEYS or direction not in ("", "asc", "desc"):
        errors.append({"param": "sort", "message": "use created or deadline, optionally with "
                                                   "-asc or -desc (e.g. deadline-asc)"})
    if errors:
        raise Invalid("invalid cycle query", errors=errors)
    descending = direction == "desc" if direction else key == "created"
    return Query(tuple(dict.fromkeys(raw)), key, descending)


def deadline_column(model: Any) -> Any:
    """When an item closes, as SQL (the lists' deadline sort and open/closed filter too)."""
    if model is Note:  # notes without a deadline close when written
        return func.coalesce(Note.deadline, Note.created_at)
    return model.deadline


def _base(model: Any, studio: Studio) -> Any:
    query = (select(model).options(joinedload(model.created_by))
             .where(model.studio_id == studio.id, model.deleted_at.is_(None)))
    if model is Note:
        query = query.where(Note.commentable_type.is_(None))  # comments are not items
    return query


def _in_cycle(query: Any, model: Any, window: Cycle) -> Any:
    return query.where(model.created_at < window.end, deadline_column(model) > window.start)


ITEMS_SHOWN = 100  # per kind on a cycle page; the studio's lists page through the rest


def items_in(studio: Studio, window: Cycle, user: User | None, q: Query | None = None,
             now: datetime | None = None, limit: int = ITEMS_SHOWN
             ) -> dict[str, reads.Query[list[Any]]]:
    """The reads of the studio's notes, decisions and commitments in ``window``, filtered and
    sorted, by kind: at most ``limit`` of each kind (a page never loads an unbounded number of
    rows), as rows lists show (``list_rows``), not entities. None needs another's answer: a page
    reads them together."""
    q = q or Query()
    params = _items_params(studio, window, user, now or utcnow())
    return {kind: reads.Query(_items_statement(model, q, user is not None, limit), params,
                              list_rows.rows_of(model))
            for kind, model in KINDS}


def _items_params(studio: Studio, window: Cycle, user: User | None,
                  now: datetime) -> dict[str, Any]:
    return {"studio_id": studio.id, "start": window.start, "end": window.end, "now": now,
            "soon": now + CLOSING_SOON, "user_id": user.id if user is not None else None}


def notes_among(notes: list[list_rows.ListedNote], read_limit: int, window: Cycle,
                limit: int = ITEMS_SHOWN) -> list[list_rows.ListedNote] | None:
    """``items_in``'s notes of the window with the default query (no filter, newest first)
    taken from the studio's newest notes (``notes.recent`` read with ``read_limit``), or None
    when those may not hold them all. Fewer than their limit: they are all the studio's notes.
    Otherwise they are its newest, so when ``limit`` of them fall in the window, no note
    outside them comes before those."""
    # What _items_statement and _in_cycle ask in SQL, in Python.
    inside = [n for n in notes
              if n.created_at < window.end and (n.deadline or n.created_at) > window.start]
    if len(notes) < read_limit or len(inside) >= limit:
        return inside[:limit]
    return None


# Built once per (kind, filters, sort, limit) with bound parameters: building the three
# statements cost more than SQLite running them (the studio home shows this on every view).
@cache
def _items_statement(model: Any, q: Query, has_user: bool, limit: int) -> Any:
    deadline = deadline_column(model)
    query = (list_rows.select_listed(model)
             .where(model.studio_id == bindparam("studio_id"), model.deleted_at.is_(None),
                    model.created_at < bindparam("end"), deadline > bindparam("start")))
    if model is Note:
        query = query.where(Note.commentable_type.is_(None))  # comments are not items
    now: Any = bindparam("now")
    for name in q.filters:
        if name == "mine" and has_user:
            query = query.where(model.created_by_id == bindparam("user_id"))
        elif name == "not_mine" and has_user:
            query = query.where(model.created_by_id != bindparam("user_id"))
        elif name == "open":
            query = query.where(deadline > now)
        elif name == "closed":
            query = query.where(deadline <= now)
        elif name == "closing_soon":
            query = query.where(deadline > now, deadline <= bindparam("soon"))
    column = model.created_at if q.sort == "created" else deadline
    return query.order_by(column.desc() if q.descending else column.asc(),
                          model.created_at.desc()).limit(limit)


def counts(studio: Studio, window: Cycle) -> dict[str, int]:
    return {kind: db.session.scalar(select(func.count()).select_from(
                  _in_cycle(_base(model, studio), model, window).subquery())) or 0
            for kind, model in KINDS}


OVERVIEW = (("Daily", ("yesterday", "today", "tomorrow")),
            ("Weekly", ("last-week", "this-week", "next-week")),
            ("Monthly", ("last-month", "this-month", "next-month")))


def overview(studio: Studio, now: datetime | None = None
             ) -> list[tuple[str, list[tuple[Cycle, dict[str, int]]]]]:
    """Counts per kind for the cycles around now: a day, a week and a month each way."""
    zone = zone_of(studio)
    rows = []
    for section, names in OVERVIEW:
        windows = [cycle(name, zone, now) for name in names]
        rows.append((section, [(w, counts(studio, w)) for w in windows]))
    return rows

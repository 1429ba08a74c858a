"""A studio's lists of notes, decisions and commitments: filters, sorts, counts and pages.

Filters: ``status`` (open or closed, by the item's deadline; a note without one counts as
closing when written, as on the cycle pages) and ``author`` (a person's handle). Sorts:
``newest`` (default), ``oldest``, ``deadline`` (soonest first). Pages are keyset pages
(``app.services.keyset``) of at most ``limit`` rows, so a list never loads the whole table and
stays stable while items are added. Deleted items and comments are never listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.models import Note, Studio, User
from app.models.base import utcnow
from app.models.collab import Commitment, Decision
from app.services import cycles, keyset
from app.services.errors import Invalid

KINDS: dict[str, Any] = {"notes": Note, "decisions": Decision, "commitments": Commitment}
ITEM_TYPE = {"notes": "note", "decisions": "decision", "commitments": "commitment"}
STATUSES = ("open", "closed")
SORTS = ("newest", "oldest", "deadline")
PAGE_SIZE = 25


@dataclass(frozen=True)
class ListQuery:
    status: str | None = None
    author: str | None = None  # a handle, without the @
    sort: str = "newest"
    cursor: str | None = None
    limit: int = PAGE_SIZE

    def params(self, **changes: Any) -> dict[str, str]:
        """The query string of this list (with ``changes``), leaving out the defaults."""
        values = {"status": self.status, "author": self.author, "sort": self.sort,
                  "limit": self.limit, "cursor": None}
        values.update(changes)
        if values["sort"] == "newest":
            values["sort"] = None
        if values["limit"] == PAGE_SIZE:
            values["limit"] = None
        return {k: str(v) for k, v in values.items() if v not in (None, "")}


def parse(args: Any) -> ListQuery:
    """A list query from request arguments; Invalid names every bad parameter at once."""
    errors = []
    status = (args.get("status") or "").strip().lower() or None
    if status is not None and status not in STATUSES:
        errors.append({"param": "status", "message": f"one of {', '.join(STATUSES)}"})
    sort = (args.get("sort") or "newest").strip().lower()
    if sort not in SORTS:
        errors.append({"param": "sort", "message": f"one of {', '.join(SORTS)}"})
    author = (args.get("author") or "").strip().lstrip("@").lower() or None
    limit = PAGE_SIZE
    try:
        limit = keyset.limit_of(args.get("limit"), PAGE_SIZE)
    except Invalid as exc:
        errors += exc.errors
    if errors:
        raise Invalid("invalid list query", errors=errors)
    return ListQuery(status, author, sort, (args.get("cursor") or "").strip() or None, limit)


@dataclass(frozen=True)
class ListPage:
    kind: str  # notes, decisions, commitments
    rows: list[Any]
    next_cursor: str | None
    total: int  # matching the filters, over all pages
    counts: dict[str, int]  # all / open / closed for the author filter


def _author_id(handle: str) -> Any:
    user = db.session.scalar(select(User).where(User.handle == handle).limit(1))
    if user is None:
        raise Invalid(f"no person '@{handle}'", errors=[{"param": "author",
                                                        "message": "no such person"}])
    return user.id


def _conditions(model: Any, studio: Studio) -> list[Any]:
    found = [model.studio_id == studio.id, model.deleted_at.is_(None)]
    if model is Note:
        found.append(Note.commentable_type.is_(None))  # comments are not listed
    return found


def _order(model: Any, sort: str) -> keyset.Order:
    if sort == "deadline":
        deadline = cycles.deadline_column(model)
        if model is Note:
            return keyset.Order(deadline, model.id, descending=False,
                                value=lambda note: note.deadline or note.created_at)
        return keyset.Order(deadline, model.id, descending=False,
                            value=lambda item: item.deadline)
    return keyset.Order(model.created_at, model.id, descending=sort == "newest")


def list_items(studio: Studio, kind: str, q: ListQuery, now: datetime | None = None) -> ListPage:
    model = KINDS[kind]
    now = now or utcnow()
    deadline = cycles.deadline_column(model)
    where = _conditions(model, studio)
    if q.author:
        where.append(model.created_by_id == _author_id(q.author))
    # One statement counts all, open and closed (for the author filter).
    is_open = case((deadline > now, 1), else_=0)
    total_all, total_open = db.session.execute(
        select(func.count(), func.coalesce(func.sum(is_open), 0)).select_from(model)
        .where(*where)).one()
    counts = {"all": int(total_all), "open": int(total_open),
              "closed": int(total_all) - int(total_open)}
    query = select(model).where(*where)
    if q.status == "open":
        query = query.where(deadline > now)
    elif q.status == "closed":
        query = query.where(deadline <= now)
    rows, next_cursor = keyset.page(query.options(joinedload(model.created_by)),
                                    _order(model, q.sort), q.cursor, q.limit)
    return ListPage(kind, rows, next_cursor, counts[q.status or "all"], counts)

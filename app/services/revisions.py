"""Item revisions: write one per edit, deletion or restoration; read an item's history.

``snapshot`` takes the fields an edit may change before and after it; ``record`` stores only the
fields that differ, so a save that changed nothing leaves no revision.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.models import Studio, User
from app.models.revisions import ItemRevision
from app.services import keyset

EDITABLE_FIELDS: dict[str, tuple[str, ...]] = {
    "note": ("title", "text", "deadline"),
    "comment": ("text",),
    "decision": ("question", "description", "options_open", "deadline"),
    "commitment": ("title", "description", "critical_mass", "participant_limit", "deadline"),
    "option": ("title",),
    "studio": ("name", "description"),
}
PAGE_SIZE = 50


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def snapshot(item_type: str, item: Any) -> dict[str, Any]:
    return {name: _json_value(getattr(item, name, None)) for name in EDITABLE_FIELDS[item_type]}


def label_of(item_type: str, item: Any) -> str:
    if item_type == "option":
        return str(item.title)[:300]
    return str(getattr(item, "short_id", None) or getattr(item, "handle", "") or item.id)


def record(studio: Studio, user: User, item_type: str, item: Any, event: str,
           before: dict[str, Any] | None = None, after: dict[str, Any] | None = None
           ) -> ItemRevision | None:
    """Store one revision; an edit that changed nothing stores none (and returns None)."""
    before, after = dict(before or {}), dict(after or {})
    if event == "edit":
        changed = [k for k in after if before.get(k) != after.get(k)]
        before = {k: before.get(k) for k in changed}
        after = {k: after[k] for k in changed}
        if not changed:
            return None
    revision = ItemRevision(studio_id=studio.id, item_type=item_type, item_id=item.id,
                            item_label=label_of(item_type, item), event=event, user_id=user.id,
                            before=before, after=after)
    db.session.add(revision)
    return revision


@dataclass(frozen=True)
class HistoryPage:
    rows: list[ItemRevision]
    next_cursor: str | None


def history(studio: Studio, item_types: tuple[str, ...] = (),
            item_ids: tuple[uuid.UUID, ...] = (), cursor: str | None = None,
            limit: int = PAGE_SIZE) -> HistoryPage:
    """Newest first; filtered to some kinds and items; a page of ``limit`` at a time."""
    query = (select(ItemRevision).options(joinedload(ItemRevision.user))
             .where(ItemRevision.studio_id == studio.id))
    if item_types:
        query = query.where(ItemRevision.item_type.in_(item_types))
    if item_ids:
        query = query.where(ItemRevision.item_id.in_(item_ids))
    order = keyset.Order(ItemRevision.happened_at, ItemRevision.id, descending=True)
    rows, next_cursor = keyset.page(query, order, cursor, limit)
    return HistoryPage(rows, next_cursor)

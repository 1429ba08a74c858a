"""Keyset pagination: pages that stay stable while rows are added.

A page is the rows after a cursor in a fixed order of (key, id), never an OFFSET: a row
inserted after someone read page one moves nothing on page two. The cursor is opaque to
callers (base64 of the last row's key and id) and refused with a clear message when forged.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_

from app.extensions import db
from app.services.errors import Invalid

MAX_LIMIT = 100


@dataclass(frozen=True)
class Order:
    key: Any  # a datetime column or expression
    tiebreak: Any  # the id column: makes the order total
    descending: bool = True
    # The key's value on a loaded row (an expression such as coalesce() is not an attribute).
    value: Callable[[Any], datetime] | None = None

    def of(self, row: Any) -> datetime:
        if self.value is not None:
            return self.value(row)
        return getattr(row, self.key.key)


def encode(value: datetime, ident: uuid.UUID) -> str:
    raw = json.dumps({"k": value.isoformat(), "i": ident.hex}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        return datetime.fromisoformat(data["k"]), uuid.UUID(hex=data["i"])
    except (ValueError, KeyError, TypeError):
        raise Invalid("the cursor is not one this list gave out: follow the page's 'next' link",
                      errors=[{"param": "cursor", "message": "not a valid cursor"}]) from None


def limit_of(raw: Any, default: int) -> int:
    """A page size from a query string: 1..MAX_LIMIT, or Invalid naming the parameter."""
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = 0
    if not 1 <= value <= MAX_LIMIT:
        raise Invalid(f"limit must be a whole number from 1 to {MAX_LIMIT}",
                      errors=[{"param": "limit", "message": f"1 to {MAX_LIMIT}"}])
    return value


def page(query: Any, order: Order, cursor: str | None, limit: int) -> tuple[list[Any], str | None]:
    """(at most ``limit`` rows after ``cursor``, the cursor of the next page or None)."""
    if cursor:
        value, ident = decode(cursor)
        if order.descending:
            after = or_(order.key < value, and_(order.key == value, order.tiebreak < ident))
        else:
            after = or_(order.key > value, and_(order.key == value, order.tiebreak > ident))
        query = query.where(after)
    if order.descending:
        query = query.order_by(order.key.desc(), order.tiebreak.desc())
    else:
        query = query.order_by(order.key.asc(), order.tiebreak.asc())
    rows = list(db.session.scalars(query.limit(limit + 1)).unique())
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, encode(order.of(rows[-1]), rows[-1].id)

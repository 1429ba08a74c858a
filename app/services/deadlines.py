"""Deadlines of decisions and commitments, read in the studio's time zone.

Every form the agent door accepts is accepted in HTML too: ISO 8601 (a time without an offset
is the studio's local time), a unix timestamp, a relative ``30m``/``3h``/``7d``/``1w``, or
``none`` for "closes when the creator closes it" (stored as a deadline far in the future).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from app.models import Studio
from app.models.base import utcnow
from app.models.collab import MANUAL_CLOSE, MANUAL_CLOSE_THRESHOLD
from app.services import cycles
from app.services.errors import Conflict, invalid_param
from app.services.timeparse import parse_datetime

NO_DEADLINE = {"none", "never", "no", "manual"}
_UNIX = re.compile(r"^\s*\d{9,11}(\.\d+)?\s*$")


def no_deadline(now: datetime | None = None) -> datetime:
    return (now or utcnow()) + MANUAL_CLOSE


def parse(value: object, zone: ZoneInfo, now: datetime | None = None,
          param: str = "deadline") -> datetime:
    """A future deadline in UTC from any accepted form; Invalid names ``param`` otherwise."""
    now = now or utcnow()
    if value is None or (isinstance(value, str) and value.strip().lower() in NO_DEADLINE | {""}):
        return no_deadline(now)
    try:
        moment = _local_iso(value, zone) or parse_datetime(value, now)
    except OverflowError:  # e.g. 99999999w: past the last representable date
        raise invalid_param(param, "too far in the future: use 'none' for no deadline") from None
    except ValueError as exc:
        raise invalid_param(param, str(exc)) from None
    if moment <= now:
        raise invalid_param(param, "must be in the future")
    if moment - now > MANUAL_CLOSE:
        raise invalid_param(param, "too far in the future: use 'none' for no deadline")
    return moment


def _local_iso(value: object, zone: ZoneInfo) -> datetime | None:
    """An ISO date or date-time without an offset, as the studio's local time."""
    if not isinstance(value, str) or _UNIX.match(value):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        return parsed.astimezone(UTC)
    return parsed.replace(tzinfo=zone).astimezone(UTC)


def revise(current: datetime, value: object, zone: ZoneInfo, closed: bool, what: str,
           now: datetime | None = None) -> datetime:
    """The deadline after an edit. An edit form resends the current deadline (to the minute,
    or 'none'): that keeps the current one instead of moving it by a few seconds."""
    if closed:
        raise Conflict(f"cannot change the deadline of a closed {what}")
    now = now or utcnow()
    new = parse(value, zone, now)
    if current - now > MANUAL_CLOSE_THRESHOLD and new - now > MANUAL_CLOSE_THRESHOLD:
        return current
    return current if abs(new - current) < timedelta(minutes=1) else new


# Presentation, shared by every page that shows a deadline ------------------------------------

def time_left(seconds: float) -> str:
    """Time left in its two largest units: '1 day 23 hours', '3 hours 5 minutes'."""
    parts: list[str] = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        n = int(seconds // size)
        if n or parts:
            seconds -= n * size
            if n:
                parts.append(f"{n} {unit}{'s' if n != 1 else ''}")
            if len(parts) == 2 or (parts and unit != "day" and not n):
                break
    return " ".join(parts[:2]) or "less than a minute"


def describe(item: Any, studio: Studio, now: datetime | None = None,
             zone: ZoneInfo | None = None) -> str:
    """'2026-12-01 17:00 NZDT (3 days left)', 'closed 2026-…', or 'no deadline', in ``zone``
    (the reader's; the studio's when not given)."""
    now = now or utcnow()
    deadline = getattr(item, "deadline", None)
    if deadline is None:
        return "no deadline"
    local = deadline.astimezone(zone or cycles.zone_of(studio)).strftime("%Y-%m-%d %H:%M %Z")
    if getattr(item, "manual_close", False) and deadline > now:
        # Decisions close by hand (close_decision); commitments when their limit is reached.
        if hasattr(item, "question"):
            return "no deadline (closes when its creator closes it)"
        return "no deadline"
    if deadline <= now:
        return f"closed {local}"
    return f"{local} ({time_left((deadline - now).total_seconds())} left)"

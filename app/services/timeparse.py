"""Deadlines and lifetimes as people and agents write them.

A deadline: ISO 8601, a unix timestamp, or a relative ``30m``/``3h``/``7d``/``1w``. A lifetime
(of a token or an invite): ``30d``-style, or ``never``; ``expiry`` says when it ends.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from app.services.errors import invalid_param

RELATIVE = re.compile(r"^\s*(\d+)\s*(m|h|d|w)\s*$", re.IGNORECASE)
UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_datetime(value: object, now: datetime | None = None) -> datetime:
    """Parse a deadline; raise ValueError with a readable reason when it is none of the forms."""
    now = now or datetime.now(UTC)
    if isinstance(value, bool):
        raise ValueError("expected a date-time, got a boolean")
    if isinstance(value, int | float):
        return _from_unix(float(value))
    if not isinstance(value, str):
        raise ValueError("expected a date-time string")
    text = value.strip()
    if not text:
        raise ValueError("empty date-time")
    match = RELATIVE.match(text)
    if match:
        amount, unit = int(match.group(1)), match.group(2).lower()
        return now + timedelta(**{UNITS[unit]: amount})
    if re.fullmatch(r"\d{9,11}(\.\d+)?", text):
        return _from_unix(float(text))
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            "not a date-time: use ISO 8601 (2026-12-01T17:00:00Z), a unix timestamp, "
            "or a relative time like 30m, 3h, 7d, 1w"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _from_unix(seconds: float) -> datetime:
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise ValueError("unix timestamp out of range") from None


def parse_duration(value: str) -> timedelta | None:
    """``30d``-style lifetimes for tokens; ``never`` means no expiry (None)."""
    text = (value or "").strip().lower()
    if text in ("never", "none", ""):
        return None
    match = RELATIVE.match(text) or re.match(r"^\s*(\d+)\s*(y)\s*$", text)
    if not match:
        raise ValueError("use a duration like 30d, 12h, 1w, 1y or 'never'")
    amount, unit = int(match.group(1)), match.group(2)
    if unit == "y":
        return timedelta(days=365 * amount)
    return timedelta(**{UNITS[unit]: amount})


def expiry(expires: str, start: datetime | None = None) -> datetime | None:
    """When a lifetime written as ``parse_duration`` reads it ends, counted from ``start`` (or
    now); None: never. One it cannot read is refused as the ``expires`` parameter."""
    start = start or datetime.now(UTC)
    try:
        lifetime = parse_duration(expires)
    except ValueError as exc:
        raise invalid_param("expires", str(exc)) from None
    return (start + lifetime) if lifetime else None

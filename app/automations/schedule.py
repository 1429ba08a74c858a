"""Schedules: a 5-field cron expression or a few words, read in a studio's time zone.

Accepted: ``minute hour day-of-month month day-of-week`` (``*``, numbers, ``a-b``, ``*/n``,
``a-b/n`` and lists ``a,b``; day of week 0-6 from Sunday, 7 is Sunday too), or the words
``every minute``, ``every N minutes``, ``every hour``, ``every day at HH:MM``,
``every <weekday> at HH:MM``. A schedule's *period* is the minute it is due, as UTC: a rule
fires once per period (the firing gate's key).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from app.services.errors import Invalid

DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
NAMES = ("minute", "hour", "day of month", "month", "day of week")
LOOKBACK = timedelta(minutes=10)  # a worker that was down longer skips what it missed


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day of month was *
    any_weekday: bool  # day of week was *

    def matches(self, at: datetime) -> bool:
        if at.minute not in self.minutes or at.hour not in self.hours \
                or at.month not in self.months:
            return False
        weekday = (at.weekday() + 1) % 7
        day_ok, weekday_ok = at.day in self.days, weekday in self.weekdays
        if self.any_day or self.any_weekday:  # cron: one restricted field decides
            return day_ok and weekday_ok
        return day_ok or weekday_ok  # both restricted: either matches (as cron does)


def _field(text: str, index: int) -> frozenset[int]:
    low, high = RANGES[index]
    values: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if base == "*":
                start, end = low, high
            elif "-" in base:
                a, b = base.split("-", 1)
                start, end = int(a), int(b)
            else:
                start = end = int(base)
                if step_text:
                    end = high
        except ValueError:
            raise _bad(f"the {NAMES[index]} field {text!r} is not a number, range or *") from None
        if step < 1 or start < low or end > high or start > end:
            raise _bad(f"the {NAMES[index]} field {text!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    if index == 4 and 7 in values:
        values = (values - {7}) | {0}
    return frozenset(values)


def _bad(message: str) -> Invalid:
    return Invalid(f"schedule: {message}", errors=[{"param": "schedule", "message": message}])


def _words(text: str) -> str | None:
    """The cron expression for a schedule in words, or None when it is not one."""
    t = " ".join(text.lower().split())
    if t == "every minute":
        return "* * * * *"
    if t == "every hour":
        return "0 * * * *"
    m = re.fullmatch(r"every (\d+) minutes", t)
    if m:
        return f"*/{int(m.group(1))} * * * *"
    m = re.fullmatch(r"every (day|weekday|\w+day) at (\d{1,2}):(\d{2})", t)
    if m:
        hour, minute = int(m.group(2)), int(m.group(3))
        if hour > 23 or minute > 59:
            raise _bad(f"{m.group(2)}:{m.group(3)} is not a time of day")
        days = {"day": "*", "weekday": "1-5"}.get(m.group(1))
        if days is None:
            if m.group(1) not in DAYS:
                return None
            days = str(DAYS.index(m.group(1)))
        return f"{minute} {hour} * * {days}"
    return None


def parse(text: str) -> Cron:
    """The schedule ``text`` as a Cron, or Invalid saying what is wrong."""
    expression = _words(text) or text
    fields = expression.split()
    if len(fields) != 5:
        raise _bad("write five cron fields (minute hour day month weekday) or words such as "
                   "'every day at 09:00'")
    minutes, hours, days, months, weekdays = (_field(f, i) for i, f in enumerate(fields))
    return Cron(minutes, hours, days, months, weekdays, any_day=fields[2] == "*",
                any_weekday=fields[4] == "*")


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def due(cron: Cron, tz_name: str | None, now: datetime, since: datetime) -> datetime | None:
    """The latest minute at or before ``now`` (and after ``since``, at most ``LOOKBACK`` ago)
    when ``cron`` is due in the time zone ``tz_name``, as UTC; None when none is."""
    tz = zone(tz_name)
    minute = now.astimezone(UTC).replace(second=0, microsecond=0)
    floor = max(since, now - LOOKBACK)
    while minute > floor:
        if cron.matches(minute.astimezone(tz)):
            return minute
        minute -= timedelta(minutes=1)
    return None

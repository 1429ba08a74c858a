"""The chosen time of a closed time poll as an iCalendar file (RFC 5545), for people to add to
their calendars: one event, its start and end in UTC, its summary the poll's question."""

from __future__ import annotations

import uuid
from datetime import timedelta

import icalendar
from sqlalchemy import select

from app.extensions import db
from app.models.collab import Decision, Option
from app.services import standings
from app.services.errors import Conflict

PRODUCT = "-//Harmonic//Decisions//EN"


def chosen_slot(decision: Decision) -> Option:
    """The slot a closed time poll chose; Conflict while it is open, has no winner or a tie."""
    if decision.kind != "time_poll":
        raise Conflict("only a time poll has a chosen time")
    if not decision.closed:
        raise Conflict("the time poll is still open: its time is chosen when it closes")
    winners = standings.standing(decision).tally.winners
    if len(winners) != 1:
        raise Conflict("the time poll chose no single time" + (
            f" (a tie between {len(winners)} slots)" if winners else " (nobody answered)"))
    slot = db.session.scalar(select(Option).where(Option.id == uuid.UUID(winners[0])))
    if slot is None or slot.starts_at is None or slot.minutes is None:
        raise Conflict("the chosen option is not a time slot")
    return slot


def ics(decision: Decision, url: str) -> bytes:
    """The chosen slot as a calendar with one event, linking back to the decision at ``url``."""
    slot = chosen_slot(decision)
    assert slot.starts_at is not None and slot.minutes is not None  # chosen_slot checked
    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODUCT)
    calendar.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", f"{decision.id}-{slot.id}@harmonic")
    event.add("dtstamp", decision.deadline)
    event.add("dtstart", slot.starts_at)
    event.add("dtend", slot.starts_at + timedelta(minutes=slot.minutes))
    event.add("summary", decision.question)
    event.add("description", f"Chosen by the time poll at {url}")
    event.add("url", url)
    calendar.add_component(event)
    return calendar.to_ical()

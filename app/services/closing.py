"""What follows when a decision or commitment closes, and its "closes in 24 hours" reminder:
each happens once, whoever is looking.

An item is closed from its deadline on (``models.collab.ClosesByDeadline``): nothing has to run
for that. What *follows* a close (the change event of its page, the people told, the webhooks
called) is acted on once, by whoever claims it first: ``claim`` is one conditional UPDATE
(``closed_at`` set where it is still NULL and the deadline has passed), which exactly one
transaction wins, on PostgreSQL (the loser waits for the winner's row lock, then finds the
column set) and on SQLite (one writer at a time) alike, across any number of processes and
hosts. The effects are written in the claiming transaction, so they commit with the claim or
not at all.

One code path: a person's close (``decisions.close``, a commitment reaching its limit) calls
``settle`` in the action's transaction; at the deadline the worker's ``sweep`` calls it in a
transaction of its own. Moving a deadline needs no rescheduling: the sweep reads the deadlines
as they are, and a moved deadline forgets its reminder (``move_deadline``).

The listeners (``on_close``, ``on_reminder``) are filled by the notifications feature (the change
event of the item's page, the people told, the webhooks), which this layer does not import.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm.attributes import set_committed_value

from app.db import writing
from app.extensions import db
from app.models import Studio, User
from app.models.base import utcnow
from app.models.collab import Commitment, Decision
from app.services import cycles, deadlines, items
from app.services.listeners import Listeners

KINDS: dict[str, Any] = {"decision": Decision, "commitment": Commitment}
REMIND_WITHIN = timedelta(hours=24)
BATCH = 100  # items settled per sweep and kind; the next sweep takes the rest


@dataclass(frozen=True)
class Moment:
    """An item at its close or its reminder: what it is, where, and who closed it (None: its
    deadline did, or a reminder)."""

    kind: str
    item: Any
    studio: Studio
    actor: User | None
    at: datetime

    @property
    def path(self) -> str:
        return items.path_of(self.studio, self.kind, self.item)


Listener = Callable[[Moment], None]
_ON_CLOSE: Listeners[Listener] = Listeners()
_ON_REMINDER: Listeners[Listener] = Listeners()
# Register ``listener(moment)``, called in the claiming transaction of every close (on_close)
# or of every reminder (on_reminder).
on_close, on_reminder = _ON_CLOSE.add, _ON_REMINDER.add


def claim(model: Any, ident: uuid.UUID, column: str, now: datetime, *conditions: Any) -> bool:
    """Set ``column`` to ``now`` where it is still NULL: True for the one caller that did."""
    result = db.session.execute(
        update(model).where(model.id == ident, getattr(model, column).is_(None), *conditions)
        .values({column: now}).execution_options(synchronize_session=False))
    return int(result.rowcount or 0) == 1  # type: ignore[attr-defined]


def settle(kind: str, item: Any, actor: User | None = None, now: datetime | None = None) -> bool:
    """Act on ``item``'s close once: claim it, then tell the listeners (in that transaction).
    False when it is not closed yet or someone else already did."""
    model = KINDS[kind]
    now = now or utcnow()
    with writing():  # the action's own when a person closes it (a block inside joins it)
        db.session.flush()  # a deadline just set to now must be in the row the claim reads
        if not claim(model, item.id, "closed_at", now, model.deadline <= now):
            return False
        set_committed_value(item, "closed_at", now)
        moment = Moment(kind, item, _studio(item), actor, now)
        for listener in _ON_CLOSE:
            listener(moment)
    return True


def _studio(item: Any) -> Studio:
    return db.session.get_one(Studio, item.studio_id)


def move_deadline(studio: Studio, kind: str, item: Any, given: Any) -> None:
    """Set ``item``'s deadline as an edit gives it (``deadlines.revise``); a changed deadline
    gets its own reminder."""
    revised = deadlines.revise(item.deadline, given, cycles.zone_of(studio), item.closed, kind)
    if revised != item.deadline:
        item.deadline = revised
        item.reminded_at = None


def sweep(now: datetime | None = None) -> tuple[int, int]:
    """Settle every item whose deadline has passed and send every reminder that is due, each in
    a transaction of its own; (closes, reminders) this call acted on."""
    now = now or utcnow()
    closed = reminded = 0
    for kind, model in KINDS.items():
        live = model.deleted_at.is_(None)
        for ident in db.session.scalars(select(model.id).where(
                model.closed_at.is_(None), model.deadline <= now, live)
                .order_by(model.deadline).limit(BATCH)).all():
            with writing():
                item = db.session.get(model, ident)
                closed += item is not None and settle(kind, item, None, now)
        for ident in db.session.scalars(select(model.id).where(
                model.reminded_at.is_(None), model.closed_at.is_(None), model.deadline > now,
                model.deadline <= now + REMIND_WITHIN, live)
                .order_by(model.deadline).limit(BATCH)).all():
            with writing():
                if claim(model, ident, "reminded_at", now, model.deadline > now):
                    item = db.session.get(model, ident)
                    moment = Moment(kind, item, _studio(item), None, now)
                    for listener in _ON_REMINDER:
                        listener(moment)
                    reminded += 1
    return closed, reminded

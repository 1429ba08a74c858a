"""A decision's outcome: once the decision has closed, its creator (or a studio admin) writes
what was decided (a Markdown statement), may pick one of its options, and may set a review date
on which its people are reminded to look at it again.

Rules: only a closed decision takes an outcome; who may write it is ``permissions.may_manage``
(the creator or a studio admin); the picked option is one of the decision's live options, by
title; the review date is read as deadlines are (``deadlines.parse``: the studio's time zone,
relative times), in the future unless it is the one already set. Writing again replaces the
outcome whole (what is left out is cleared) and keeps the earlier one as a revision.

Two moments follow, each in the transaction that causes it, for the listeners the
notifications feature registers (this layer does not import it): ``on_written`` when an outcome
is written, ``on_review`` when a review date has come. A review is acted on once across every
process: the workers' ``sweep`` claims it by the same conditional UPDATE closes are claimed by
(``closing.claim`` of ``outcome_reminded_at``); a moved review date is claimable again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm.attributes import set_committed_value

from app.db import writing
from app.extensions import db
from app.models import Studio, User
from app.models.base import utcnow
from app.models.collab import Decision, Option
from app.services import closing, cycles, deadlines, items, permissions, revisions
from app.services.deadlines import NO_DEADLINE
from app.services.errors import Conflict, Invalid
from app.services.listeners import Listeners
from app.services.locking import lock_row

STATEMENT_MAX = 20_000
BATCH = 100  # reviews told per sweep; the next sweep takes the rest
_FORM_MINUTE = "%Y-%m-%dT%H:%M"  # how an edit form resends a date (``review_value``)


@dataclass(frozen=True)
class _AtDecision:
    """A moment of a decision's outcome, with the page it happened on."""

    decision: Decision
    studio: Studio

    @property
    def path(self) -> str:
        return items.path_of(self.studio, "decision", self.decision)


@dataclass(frozen=True)
class Written(_AtDecision):
    """An outcome just written (``first``: there was none before) and who wrote it."""

    actor: User
    first: bool


@dataclass(frozen=True)
class Review(_AtDecision):
    """A decision whose outcome's review date has come."""

    at: datetime


_ON_WRITTEN: Listeners[Callable[[Written], None]] = Listeners()
_ON_REVIEW: Listeners[Callable[[Review], None]] = Listeners()
# Register ``listener(written)``, called in the transaction that writes an outcome (on_written),
# or ``listener(review)``, called in the transaction that claims a review (on_review).
on_written, on_review = _ON_WRITTEN.add, _ON_REVIEW.add


# Writing -------------------------------------------------------------------------------------

def not_yet(decision: Decision) -> str | None:
    """Why no outcome can be written yet (the decision is open), or None."""
    if decision.closed:
        return None
    return ("the decision is still open: an outcome is written once it has closed (at its "
            "deadline, or when its creator closes it with close_decision)")


def write(decision: Decision, studio: Studio, user: User, statement: str | None,
          option_title: str | None = None, review_at: Any = None) -> Decision:
    """Write (or replace) the outcome of a closed decision. Invalid names every bad parameter
    at once; Forbidden for anyone but its creator or a studio admin; Conflict while open."""
    permissions.require_manage(studio, user, decision.created_by_id, "decision",
                               "write the outcome of")
    decision = lock_row(Decision, decision.id)
    reason = not_yet(decision)
    if reason is not None:
        raise Conflict(reason)
    problems: list[dict[str, str]] = []
    text = _statement(statement, problems)
    option = _option(decision, option_title, problems)
    review = _review(decision, studio, review_at, problems)
    if problems:
        raise _invalid(problems)
    first = decision.outcome_statement is None
    before = snapshot(decision)
    if review != decision.outcome_review_at:
        decision.outcome_reminded_at = None  # a new date reminds when it comes
    decision.outcome_statement = text
    decision.outcome_option_id = option.id if option is not None else None
    decision.outcome_review_at = review
    decision.outcome_by_id = user.id
    decision.outcome_at = decision.updated_at = utcnow()
    revisions.record(studio, user, "decision", decision, "edit", before,
                     snapshot(decision, option))
    db.session.flush()
    for listener in _ON_WRITTEN:
        listener(Written(decision, studio, user, first))
    return decision


def _invalid(problems: list[dict[str, str]]) -> Invalid:
    return Invalid("; ".join(f"{p['param']}: {p['message']}" for p in problems),
                   errors=problems)


def _statement(value: str | None, problems: list[dict[str, str]]) -> str:
    text = (value or "").strip()
    if not text:
        problems.append({"param": "statement", "message": "is required: say what was decided"})
    elif len(text) > STATEMENT_MAX:
        problems.append({"param": "statement", "message": f"at most {STATEMENT_MAX} characters"})
    return text


def _option(decision: Decision, title: str | None, problems: list[dict[str, str]]
            ) -> Option | None:
    wanted = " ".join((title or "").split())
    if not wanted:
        return None
    live = _live_options(decision)
    found = next((o for o in live if o.title == wanted), None)
    if found is None:
        known = ", ".join(f"'{o.title}'" for o in live) or "none"
        problems.append({"param": "option_title",
                         "message": f"no option titled {wanted!r} (options: {known})"})
    return found


def _review(decision: Decision, studio: Studio, value: Any, problems: list[dict[str, str]]
            ) -> datetime | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in NO_DEADLINE | {""}):
        return None
    zone = cycles.zone_of(studio)
    current = decision.outcome_review_at
    if current is not None and isinstance(value, str) \
            and value.strip() == current.astimezone(zone).strftime(_FORM_MINUTE):
        return current  # an edit form resending the date already set, even once it has come
    try:
        return deadlines.parse(value, zone, param="review_at")
    except Invalid as exc:  # naming review_at: said together with the other problems
        problems.extend(exc.errors)
        return None


def review_value(decision: Decision, studio: Studio) -> str | None:
    """The review date as an edit form shows it (the studio's local time, to the minute)."""
    if decision.outcome_review_at is None:
        return None
    return decision.outcome_review_at.astimezone(cycles.zone_of(studio)).strftime(_FORM_MINUTE)


def snapshot(decision: Decision, option: Option | None = None) -> dict[str, Any]:
    """The outcome as its revisions keep it: the option by title, the date as ISO text."""
    title = option.title if option is not None else _title_of(decision.outcome_option_id)
    review = decision.outcome_review_at
    return {"outcome": decision.outcome_statement, "outcome_option": title,
            "outcome_review_at": review.isoformat() if review is not None else None}


def _title_of(option_id: uuid.UUID | None) -> str | None:
    if option_id is None:
        return None
    option = db.session.get(Option, option_id)
    return option.title if option is not None else None


# Reading -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shown:
    """The outcome as the decision page shows it."""

    statement: str
    option_title: str | None
    review_at: datetime | None
    reviewed: bool  # its people were told the review date came
    by: User | None
    at: datetime | None


def shown(decision: Decision, options: list[Any]) -> Shown | None:
    """The decision's outcome for its page (None before one is written); ``options`` are the
    page's own (id, title) rows, so the picked one's title costs no query."""
    if decision.outcome_statement is None:
        return None
    title = next((o.title for o in options if o.id == decision.outcome_option_id), None)
    if title is None and decision.outcome_option_id is not None:
        title = _title_of(decision.outcome_option_id)
    by = db.session.get(User, decision.outcome_by_id) if decision.outcome_by_id else None
    return Shown(decision.outcome_statement, title, decision.outcome_review_at,
                 decision.outcome_reminded_at is not None, by, decision.outcome_at)


# Review dates --------------------------------------------------------------------------------

def sweep(now: datetime | None = None) -> int:
    """Tell the listeners of every review date that has come, each claimed once across every
    process in a transaction of its own; how many this call acted on."""
    now = now or utcnow()
    told = 0
    for ident in db.session.scalars(select(Decision.id).where(
            Decision.outcome_reminded_at.is_(None), Decision.outcome_review_at <= now,
            Decision.deleted_at.is_(None))
            .order_by(Decision.outcome_review_at).limit(BATCH)).all():
        with writing():
            if not closing.claim(Decision, ident, "outcome_reminded_at", now,
                                 Decision.outcome_review_at <= now):
                continue
            decision = db.session.get_one(Decision, ident)
            set_committed_value(decision, "outcome_reminded_at", now)  # as the claim wrote it
            review = Review(decision, db.session.get_one(Studio, decision.studio_id), now)
            for listener in _ON_REVIEW:
                listener(review)
            told += 1
    return told


def option_titles(decision: Decision) -> list[str]:
    """What an outcome may pick: the decision's live options' titles, in the order they were
    added."""
    return [o.title for o in _live_options(decision)]


def _live_options(decision: Decision) -> list[Option]:
    return list(db.session.scalars(select(Option).where(
        Option.decision_id == decision.id, Option.deleted_at.is_(None))
        .order_by(Option.created_at, Option.title)))

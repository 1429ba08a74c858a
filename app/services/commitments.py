"""Commitments: "I'm in if enough of us are" — critical mass, optional limit, joining.

Rules: joining is idempotent and refused once closed; reaching the limit closes the commitment
(its deadline becomes now); critical mass can't be lowered once anyone has joined; only the
creator edits settings. Joins lock the commitment row, so concurrent joins are counted one at a
time: no duplicate participant and never more than the limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError

from app.db import Query
from app.extensions import db
from app.models import Studio, User
from app.models.base import utcnow
from app.models.collab import Commitment, CommitmentParticipant
from app.services import closing, cycles, deadlines, items, links, people, permissions, revisions
from app.services.errors import Conflict, invalid_param
from app.services.locking import lock_row

TITLE_MAX = 256
DESCRIPTION_MAX = 20_000
BAR_WIDTH = 20

items.register(items.ItemKind("commitment", "c", Commitment, lambda c: c.title))


MAX_PEOPLE = 1_000_000  # keeps counts inside a database integer


def _check_numbers(critical_mass: int, limit: int | None) -> None:
    if critical_mass < 1:
        raise invalid_param("critical_mass", "must be at least 1")
    if critical_mass > MAX_PEOPLE:
        raise invalid_param("critical_mass", f"at most {MAX_PEOPLE}")
    if limit is not None and limit > MAX_PEOPLE:
        raise invalid_param("limit", f"at most {MAX_PEOPLE}")
    if limit is not None and limit < critical_mass:
        raise invalid_param("limit", f"must be at least the critical mass ({critical_mass})")


def create_commitment(studio: Studio, user: User, title: str, critical_mass: int,
                      description: str | None = None, deadline: Any = None,
                      limit: int | None = None, base_url: str = "",
                      creator_joins: bool = False) -> Commitment:
    """A new commitment; with ``creator_joins`` its creator is its first participant."""
    _check_numbers(critical_mass, limit)
    commitment = Commitment(studio_id=studio.id, title=items.one_line(title, "title", TITLE_MAX),
                            description=items.description(description, DESCRIPTION_MAX),
                            critical_mass=critical_mass, participant_limit=limit,
                            deadline=deadlines.parse(deadline, cycles.zone_of(studio)),
                            created_by_id=user.id)
    commitment.assign_ids()
    db.session.add(commitment)
    db.session.flush()
    links.sync(studio, "commitment", commitment.id, commitment.description, base_url)
    if creator_joins:
        join(commitment, user)
    return commitment


def update_settings(commitment: Commitment, studio: Studio, user: User,
                    title: str | None = None, description: str | None = None,
                    critical_mass: int | None = None, deadline: Any = None,
                    limit: int | None = None, base_url: str = "") -> Commitment:
    permissions.require_manage(studio, user, commitment.created_by_id, "commitment")
    commitment = lock_row(Commitment, commitment.id)
    before = revisions.snapshot("commitment", commitment)
    joined = count(commitment)
    new_mass = commitment.critical_mass if critical_mass is None else critical_mass
    new_limit = commitment.participant_limit if limit is None else limit
    _check_numbers(new_mass, new_limit)
    if new_mass < commitment.critical_mass and joined > 0:
        raise Conflict("cannot lower the critical mass after participants have joined")
    if new_limit is not None and new_limit < joined:
        raise Conflict(f"cannot set the limit below the {joined} participants who joined")
    if deadline is not None:
        closing.move_deadline(studio, "commitment", commitment, deadline)
    if title is not None:
        commitment.title = items.one_line(title, "title", TITLE_MAX)
    if description is not None:
        commitment.description = items.description(description, DESCRIPTION_MAX)
        links.sync(studio, "commitment", commitment.id, commitment.description, base_url)
    commitment.critical_mass, commitment.participant_limit = new_mass, new_limit
    full = new_limit is not None and joined >= new_limit and not commitment.closed
    if full:
        commitment.deadline = utcnow()  # full already: the new limit closes it
    commitment.updated_at = utcnow()
    revisions.record(studio, user, "commitment", commitment, "edit", before,
                     revisions.snapshot("commitment", commitment))
    if full:
        closing.settle("commitment", commitment, user, commitment.deadline)
    return commitment


def participant(commitment: Commitment, user: User | None) -> CommitmentParticipant | None:
    if user is None:
        return None
    return db.session.scalars(
        select(CommitmentParticipant)
        .where(CommitmentParticipant.commitment_id == commitment.id,
               CommitmentParticipant.user_id == user.id)).one_or_none()


def join(commitment: Commitment, user: User) -> tuple[CommitmentParticipant, bool]:
    """Join; (participant, created). Joining again returns the existing participation."""
    commitment = lock_row(Commitment, commitment.id)  # one join at a time per commitment
    existing = participant(commitment, user)
    if existing is not None:
        return existing, False
    if commitment.closed:
        raise Conflict("this commitment is closed")
    joined = count(commitment)
    limit = commitment.participant_limit
    if limit is not None and joined >= limit:
        raise Conflict("this commitment is full")
    member = CommitmentParticipant(commitment_id=commitment.id, user_id=user.id)
    try:
        with db.session.begin_nested():
            db.session.add(member)
    except IntegrityError:  # only without a row lock; the other request joined us already
        found = participant(commitment, user)
        if found is None:
            raise
        return found, False
    if limit is not None and joined + 1 >= limit:
        commitment.deadline = utcnow()  # full: reaching the limit closes the commitment
        closing.settle("commitment", commitment, user, commitment.deadline)
    return member, True


def leave(commitment: Commitment, user: User) -> bool:
    """Leave an open commitment; False when the person was not in it (nothing changes)."""
    commitment = lock_row(Commitment, commitment.id)  # as join: one change at a time
    existing = participant(commitment, user)
    if existing is None:
        return False
    if commitment.closed:
        raise Conflict("this commitment is closed: its participants are final")
    db.session.delete(existing)
    db.session.flush()
    return True


def count(commitment: Commitment) -> int:
    return db.session.scalar(
        select(func.count(CommitmentParticipant.id))
        .where(CommitmentParticipant.commitment_id == commitment.id)) or 0


class Participation(NamedTuple):
    """A participant as the commitment page lists them: who, and when they joined."""
    user: people.Person
    committed_at: datetime


def participants(commitment: Commitment) -> Query[list[Participation]]:
    """Everyone who joined, in the order they joined (plain rows: a page links each)."""
    return Query(_PARTICIPANTS, {"commitment_id": commitment.id}, _participations)


def _participations(rows: Any) -> list[Participation]:
    return [Participation(people.Person(*person), at) for at, *person in rows]


# The commitment page reads it on every view: built once, bound per call.
_PARTICIPANTS = (select(CommitmentParticipant.committed_at, *people.COLUMNS)
                 .outerjoin(User, User.id == CommitmentParticipant.user_id)
                 .where(CommitmentParticipant.commitment_id == bindparam("commitment_id"))
                 .order_by(CommitmentParticipant.committed_at))


@dataclass(frozen=True)
class Progress:
    joined: int
    critical_mass: int
    limit: int | None
    closed: bool

    @property
    def achieved(self) -> bool:
        return self.joined >= self.critical_mass

    @property
    def remaining(self) -> int:
        return max(0, self.critical_mass - self.joined)

    @property
    def percent(self) -> int:
        return min(100, self.joined * 100 // self.critical_mass)

    @property
    def status(self) -> str:
        if self.achieved:
            return "critical_mass_achieved"
        return "failed" if self.closed else "pending"

    @property
    def status_message(self) -> str:
        return {"critical_mass_achieved": "Critical mass achieved.",
                "failed": "Failed to reach critical mass.",
                "pending": "Pending."}[self.status]

    @property
    def text_bar(self) -> str:
        filled = min(BAR_WIDTH, self.joined * BAR_WIDTH // self.critical_mass)
        return f"[{'#' * filled}{'_' * (BAR_WIDTH - filled)}] {self.joined}/{self.critical_mass}"


def progress(commitment: Commitment, joined: int | None = None) -> Progress:
    """``joined``: the number of participants when the caller has just read them all."""
    return Progress(count(commitment) if joined is None else joined, commitment.critical_mass,
                    commitment.participant_limit, commitment.closed)

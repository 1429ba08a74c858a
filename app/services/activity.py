"""A studio's recent activity, newest first: notes, comments, decisions, options, votes, joins."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.models import Note, Studio, User
from app.models.collab import Commitment, CommitmentParticipant, Decision, Option, Vote
from app.services import items


@dataclass(frozen=True)
class Event:
    when: datetime
    user: User
    verb: str  # "wrote", "voted on", ...
    item_type: str
    item: Any


def recent(studio: Studio, limit: int = 15) -> list[Event]:
    events: list[Event] = []
    # Eager-load the people (and an option's decision): lazy loads would be a query per line.
    notes = db.session.scalars(select(Note).options(joinedload(Note.created_by))
                               .where(Note.studio_id == studio.id, Note.deleted_at.is_(None))
                               .order_by(Note.created_at.desc()).limit(limit)).all()
    targets = items.get_many([(n.commentable_type, n.commentable_id) for n in notes
                              if n.commentable_type is not None and n.commentable_id is not None])
    for note in notes:
        if note.commentable_type is None:
            events.append(Event(note.created_at, note.created_by, "wrote", "note", note))
            continue
        target = (targets.get((note.commentable_type, note.commentable_id))
                  if note.commentable_id is not None else None)
        if target is not None:
            events.append(Event(note.created_at, note.created_by, "commented on",
                                note.commentable_type, target))
    for decision in db.session.scalars(select(Decision)
                                        .options(joinedload(Decision.created_by))
                                        .where(Decision.studio_id == studio.id,
                                               Decision.deleted_at.is_(None))
                                        .order_by(Decision.created_at.desc()).limit(limit)):
        events.append(Event(decision.created_at, decision.created_by, "asked", "decision",
                            decision))
    for option in db.session.scalars(select(Option)
                                      .options(joinedload(Option.created_by),
                                               joinedload(Option.decision))
                                      .join(Decision)
                                      .where(Decision.studio_id == studio.id,
                                             Decision.deleted_at.is_(None),
                                             Option.deleted_at.is_(None))
                                      .order_by(Option.created_at.desc()).limit(limit)):
        events.append(Event(option.created_at, option.created_by,
                            f"added the option “{option.title}” to", "decision",
                            option.decision))
    votes = db.session.execute(select(Vote, Decision).options(joinedload(Vote.user))
                                .join(Decision, Vote.decision_id == Decision.id)
                                .where(Decision.studio_id == studio.id,
                                       Decision.deleted_at.is_(None))
                                .order_by(Vote.updated_at.desc()).limit(limit)).all()
    for vote, decision in votes:
        events.append(Event(vote.updated_at, vote.user, "voted on", "decision", decision))
    for commitment in db.session.scalars(select(Commitment)
                                          .options(joinedload(Commitment.created_by))
                                          .where(Commitment.studio_id == studio.id,
                                                 Commitment.deleted_at.is_(None))
                                          .order_by(Commitment.created_at.desc()).limit(limit)):
        events.append(Event(commitment.created_at, commitment.created_by, "proposed",
                            "commitment", commitment))
    joins = db.session.execute(
        select(CommitmentParticipant, Commitment)
        .options(joinedload(CommitmentParticipant.user))
        .join(Commitment, CommitmentParticipant.commitment_id == Commitment.id)
        .where(Commitment.studio_id == studio.id, Commitment.deleted_at.is_(None))
        .order_by(CommitmentParticipant.committed_at.desc()).limit(limit)).all()
    for joined, commitment in joins:
        events.append(Event(joined.committed_at, joined.user, "joined", "commitment",
                            commitment))
    events.sort(key=lambda e: e.when, reverse=True)
    # One line per (person, verb, item): five votes on one decision read as one.
    seen: set[tuple[Any, str, Any]] = set()
    unique = []
    for event in events:
        key = (event.user.id, event.verb, event.item.id)
        if key not in seen:
            seen.add(key)
            unique.append(event)
    return unique[:limit]

"""A studio's recent activity, newest first: notes, comments, decisions, options, votes, joins.

The candidates (the newest ``limit`` of each kind of event) come in one statement as plain
columns, a UNION ALL of one branch per kind; only the events shown then load their people and
items (one query for the people, one per kind of item). Loading every candidate as ORM objects
with its person joined, as this did before, was most of the studio home's time.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    bindparam,
    case,
    cast,
    literal_column,
    null,
    select,
    union_all,
)

from app.extensions import db
from app.models import Note, Studio, User, plain_reads
from app.models.collab import Commitment, CommitmentParticipant, Decision, Option, Vote
from app.services import items


@dataclass(frozen=True)
class Event:
    when: datetime
    user: User
    verb: str  # "wrote", "voted on", ...
    item_type: str
    item: Any


# Branches in the order they are listed before sorting by time (ties keep this order).
NOTE, ASKED, OPTION, VOTE, PROPOSED, JOINED = range(6)
_KIND = {ASKED: "decision", OPTION: "decision", VOTE: "decision", PROPOSED: "commitment",
         JOINED: "commitment"}
_VERB = {ASKED: "asked", VOTE: "voted on", PROPOSED: "proposed", JOINED: "joined"}


def _branch(rank: int, when: Any, user_id: Any, item_id: Any, *, comment_type: Any = None,
            comment_id: Any = None, detail: Any = None) -> Any:
    return select(literal_column(str(rank), Integer).label("rank"), when.label("at"),
                  user_id.label("user_id"), item_id.label("item_id"),
                  (comment_type if comment_type is not None else cast(null(), String))
                  .label("ctype"),
                  (comment_id if comment_id is not None else item_id).label("cid"),
                  (detail if detail is not None else cast(null(), String)).label("detail"))


_CANDIDATES: dict[int, Any] = {}  # by limit: the statement, built once (see _candidates)
# The people of the events shown that the page has not loaded yet (see items.in_session).
_PEOPLE = select(User).where(User.id.in_(bindparam("ids", expanding=True)))


RECENT = 15  # events the studio page shows


def _candidates(limit: int) -> Any:
    """The UNION ALL of the six branches for ``:studio_id``: built once per limit, since
    building it (six subqueries) cost more than running it."""
    found = _CANDIDATES.get(limit)
    if found is None:
        found = _CANDIDATES[limit] = _build_candidates(bindparam("studio_id"), limit)
    return found


def _build_candidates(studio_id: Any, limit: int) -> Any:
    live_decision = (Decision.studio_id == studio_id, Decision.deleted_at.is_(None))
    live_commitment = (Commitment.studio_id == studio_id, Commitment.deleted_at.is_(None))
    branches = [
        _branch(NOTE, Note.created_at, Note.created_by_id, Note.id,
                comment_type=Note.commentable_type,
                comment_id=case((Note.commentable_id.is_(None), Note.id),
                                else_=Note.commentable_id))
        .where(Note.studio_id == studio_id, Note.deleted_at.is_(None))
        .order_by(Note.created_at.desc()),
        _branch(ASKED, Decision.created_at, Decision.created_by_id, Decision.id)
        .where(*live_decision).order_by(Decision.created_at.desc()),
        _branch(OPTION, Option.created_at, Option.created_by_id, Option.decision_id,
                detail=Option.title)
        .join(Decision, Option.decision_id == Decision.id)
        .where(*live_decision, Option.deleted_at.is_(None)).order_by(Option.created_at.desc()),
        _branch(VOTE, Vote.updated_at, Vote.user_id, Vote.decision_id)
        .join(Decision, Vote.decision_id == Decision.id)
        .where(*live_decision).order_by(Vote.updated_at.desc()),
        _branch(PROPOSED, Commitment.created_at, Commitment.created_by_id, Commitment.id)
        .where(*live_commitment).order_by(Commitment.created_at.desc()),
        _branch(JOINED, CommitmentParticipant.committed_at, CommitmentParticipant.user_id,
                CommitmentParticipant.commitment_id)
        .join(Commitment, CommitmentParticipant.commitment_id == Commitment.id)
        .where(*live_commitment).order_by(CommitmentParticipant.committed_at.desc()),
    ]
    # Each branch keeps its own ORDER BY ... LIMIT inside a subquery (both databases allow it).
    parts = [select(*b.limit(limit).subquery().c) for b in branches]
    return union_all(*parts)


def recent_read(studio: Studio, limit: int = RECENT) -> plain_reads.Read:
    """The first read ``recent`` makes, as ``plain_reads.together`` takes it."""
    return plain_reads.Read(_candidates(limit), {"studio_id": studio.id})


def recent(studio: Studio, limit: int = RECENT) -> list[Event]:
    # Plain tuples (rank, at, user_id, item_id, ctype, cid, detail), unpacked once each: reading
    # a Row's fields by name cost more than the rest of this loop.
    rows = sorted(plain_reads.execute(*recent_read(studio, limit)).tuples(),
                  key=itemgetter(0))  # branch order, as the lists were joined before sorting
    # A comment counts only while what it is on exists (a deleted target drops it).
    targets = items.get_many([(ctype, cid) for rank, _at, _u, _i, ctype, cid, _d in rows
                              if rank == NOTE and ctype is not None and cid is not None])
    candidates: list[tuple[datetime, uuid.UUID, str, str, uuid.UUID]] = []
    for rank, at, user_id, item_id, ctype, cid, detail in rows:
        if rank == NOTE:
            if ctype is None:
                candidates.append((at, user_id, "wrote", "note", item_id))
            elif (ctype, cid) in targets:
                candidates.append((at, user_id, "commented on", ctype, cid))
        elif rank == OPTION:
            candidates.append((at, user_id, f"added the option “{detail}” to", "decision",
                               item_id))
        else:
            candidates.append((at, user_id, _VERB[rank], _KIND[rank], item_id))
    candidates.sort(key=itemgetter(0), reverse=True)
    # One line per (person, verb, item): five votes on one decision read as one.
    seen: set[tuple[Any, str, Any]] = set()
    shown = []
    for c in candidates:
        key = (c[1], c[2], c[4])
        if key not in seen:
            seen.add(key)
            shown.append(c)
            if len(shown) == limit:
                break
    found = items.get_many([(c[3], c[4]) for c in shown])
    held, missing = items.in_session(User, {c[1] for c in shown})
    people = {u.id: u for u in held}
    if missing:
        people.update((u.id, u) for u in db.session.scalars(_PEOPLE, {"ids": missing}))
    return [Event(c[0], people[c[1]], c[2], c[3], found[(c[3], c[4])]) for c in shown
            if c[1] in people and (c[3], c[4]) in found]

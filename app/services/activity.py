"""A studio's recent activity, newest first: notes, comments, decisions, options, votes, joins.

The events come in one statement as plain columns: a UNION ALL of one branch per kind, each
from the newest ``limit`` of its kind, and of those the newest ``limit`` overall. Each branch
names every (person, what they did, item) once, as the page shows it: a person's votes on one
decision are one line, at the latest, and so are their comments on one item (only while that
item is there). So the database hands back only the lines shown (the candidates of every
branch, four times as many rows, cost the studio home more to read than the query itself),
and only those then load their people and items (one query for the people, one per kind of
item).
Loading every candidate as ORM objects with its person joined, as this did long before, was
most of the studio home's time.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    bindparam,
    cast,
    func,
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
    live_note = (Note.studio_id == studio_id, Note.deleted_at.is_(None))
    # The newest comments (on items that are there) and votes, then each person's on one item
    # made one line, at the latest: grouped among the newest only, so the read stays as short
    # however many votes the studio has.
    comments = (select(Note.created_at, Note.created_by_id, Note.commentable_type,
                       Note.commentable_id)
                .where(*live_note, Note.commentable_type.is_not(None),
                       items.names_a_live_item(Note.commentable_type, Note.commentable_id))
                .order_by(Note.created_at.desc()).limit(limit).subquery())
    votes = (select(Vote.updated_at, Vote.user_id, Vote.decision_id)
             .join(Decision, Vote.decision_id == Decision.id).where(*live_decision)
             .order_by(Vote.updated_at.desc()).limit(limit).subquery())
    branches = [
        _branch(NOTE, Note.created_at, Note.created_by_id, Note.id)
        .where(*live_note, Note.commentable_type.is_(None)).order_by(Note.created_at.desc()),
        _branch(NOTE, func.max(comments.c.created_at), comments.c.created_by_id,
                comments.c.commentable_id, comment_type=comments.c.commentable_type,
                comment_id=comments.c.commentable_id)
        .group_by(comments.c.created_by_id, comments.c.commentable_type,
                  comments.c.commentable_id),
        _branch(ASKED, Decision.created_at, Decision.created_by_id, Decision.id)
        .where(*live_decision).order_by(Decision.created_at.desc()),
        _branch(OPTION, Option.created_at, Option.created_by_id, Option.decision_id,
                detail=Option.title)
        .join(Decision, Option.decision_id == Decision.id)
        .where(*live_decision, Option.deleted_at.is_(None)).order_by(Option.created_at.desc()),
        _branch(VOTE, func.max(votes.c.updated_at), votes.c.user_id, votes.c.decision_id)
        .group_by(votes.c.user_id, votes.c.decision_id),
        _branch(PROPOSED, Commitment.created_at, Commitment.created_by_id, Commitment.id)
        .where(*live_commitment).order_by(Commitment.created_at.desc()),
        _branch(JOINED, CommitmentParticipant.committed_at, CommitmentParticipant.user_id,
                CommitmentParticipant.commitment_id)
        .join(Commitment, CommitmentParticipant.commitment_id == Commitment.id)
        .where(*live_commitment).order_by(CommitmentParticipant.committed_at.desc()),
    ]
    # Each branch keeps its own ORDER BY ... LIMIT inside a subquery (both databases allow it);
    # of them all, the newest, ties in branch order.
    every = union_all(*(select(*b.limit(limit).subquery().c) for b in branches)).subquery()
    return select(*every.c).order_by(every.c.at.desc(), every.c.rank).limit(limit)


def recent_read(studio: Studio, limit: int = RECENT) -> plain_reads.Read:
    """The first read ``recent`` makes, as ``plain_reads.together`` takes it."""
    return plain_reads.Read(_candidates(limit), {"studio_id": studio.id})


def recent(studio: Studio, limit: int = RECENT) -> list[Event]:
    # Plain tuples (rank, at, user_id, item_id, ctype, cid, detail), newest first, unpacked
    # once each: reading a Row's fields by name cost more than the rest of this loop.
    shown: list[tuple[datetime, uuid.UUID, str, str, uuid.UUID]] = []
    for rank, at, user_id, item_id, ctype, cid, detail in plain_reads.execute(
            *recent_read(studio, limit)).tuples():
        if rank == NOTE:
            shown.append((at, user_id, "wrote", "note", item_id) if ctype is None
                         else (at, user_id, "commented on", ctype, cid))
        elif rank == OPTION:
            shown.append((at, user_id, f"added the option “{detail}” to", "decision", item_id))
        else:
            shown.append((at, user_id, _VERB[rank], _KIND[rank], item_id))
    found = items.get_many([(c[3], c[4]) for c in shown])
    held, missing = items.in_session(User, {c[1] for c in shown})
    people = {u.id: u for u in held}
    if missing:
        people.update((u.id, u) for u in db.session.scalars(_PEOPLE, {"ids": missing}))
    return [Event(c[0], people[c[1]], c[2], c[3], found[(c[3], c[4])]) for c in shown
            if c[1] in people and (c[3], c[4]) in found]

"""A studio's recent activity, newest first: notes, comments, decisions, options, votes, joins.

The events come in one statement as plain columns: a UNION ALL of one branch per kind, each
from the newest ``limit`` of its kind, and of those the newest ``limit`` overall. Each branch
names every (person, what they did, item) once, as the page shows it: a person's votes on one
decision are one line, at the latest, and so are their comments on one item (only while that
item is there). So the database hands back only the lines shown. The same statement joins
each line's person (handle and name) and its item's label (what names and links it:
``items.labelled``), so the feed loads no entity and asks nothing more.
"""

from __future__ import annotations

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

from app.db import Query
from app.models import Note, Studio, User
from app.models.collab import Commitment, CommitmentParticipant, Decision, Option, Vote
from app.services import items, people


@dataclass(frozen=True)
class Event:
    when: datetime
    user: people.Person
    verb: str  # "wrote", "voted on", ...
    item_type: str
    item: Any  # the item's label: what names and links it (items.labelled)


# Branches in the order they are listed before sorting by time (ties keep this order).
NOTE, COMMENT, ASKED, OPTION, VOTE, PROPOSED, JOINED = range(7)
_VERB = {NOTE: "wrote", COMMENT: "commented on", ASKED: "asked", VOTE: "voted on",
         PROPOSED: "proposed", JOINED: "joined"}


def _branch(rank: int, when: Any, user_id: Any, kind: Any, item_id: Any,
            detail: Any = None) -> Any:
    """One branch's columns: ``kind`` is the item's type, a column (a comment's target) or
    the name of one kind (a constant of this module, never input: written into the SQL)."""
    return select(literal_column(str(rank), Integer).label("rank"), when.label("at"),
                  user_id.label("user_id"),
                  (cast(literal_column(f"'{kind}'"), String) if isinstance(kind, str) else kind)
                  .label("kind"),
                  item_id.label("item_id"),
                  (detail if detail is not None else cast(null(), String)).label("detail"))


# By (limit, registered kinds): the statement and what reads its labels back, built once
# (building it, six subqueries and a join per kind, cost more than running it).
_FEEDS: dict[tuple[Any, ...], tuple[Any, items.Labelled]] = {}


RECENT = 15  # events the studio page shows


def _feed(limit: int) -> tuple[Any, items.Labelled]:
    key = (limit, tuple(items.KINDS))
    found = _FEEDS.get(key)
    if found is None:
        top = _build_candidates(bindparam("studio_id"), limit).subquery()
        labels = items.labelled(top.c.kind, top.c.item_id, top.c.rank, top.c.at,
                                top.c.user_id, User.handle, User.name, top.c.detail)
        # The newest first again: the joins keep no order of the subquery's.
        statement = (labels.statement.join(User, User.id == top.c.user_id)
                     .order_by(top.c.at.desc(), top.c.rank))
        found = _FEEDS[key] = (statement, labels)
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
        _branch(NOTE, Note.created_at, Note.created_by_id, "note", Note.id)
        .where(*live_note, Note.commentable_type.is_(None)).order_by(Note.created_at.desc()),
        _branch(COMMENT, func.max(comments.c.created_at), comments.c.created_by_id,
                comments.c.commentable_type, comments.c.commentable_id)
        .group_by(comments.c.created_by_id, comments.c.commentable_type,
                  comments.c.commentable_id),
        _branch(ASKED, Decision.created_at, Decision.created_by_id, "decision", Decision.id)
        .where(*live_decision).order_by(Decision.created_at.desc()),
        _branch(OPTION, Option.created_at, Option.created_by_id, "decision",
                Option.decision_id, Option.title)
        .join(Decision, Option.decision_id == Decision.id)
        .where(*live_decision, Option.deleted_at.is_(None)).order_by(Option.created_at.desc()),
        _branch(VOTE, func.max(votes.c.updated_at), votes.c.user_id, "decision",
                votes.c.decision_id)
        .group_by(votes.c.user_id, votes.c.decision_id),
        _branch(PROPOSED, Commitment.created_at, Commitment.created_by_id, "commitment",
                Commitment.id)
        .where(*live_commitment).order_by(Commitment.created_at.desc()),
        _branch(JOINED, CommitmentParticipant.committed_at, CommitmentParticipant.user_id,
                "commitment", CommitmentParticipant.commitment_id)
        .join(Commitment, CommitmentParticipant.commitment_id == Commitment.id)
        .where(*live_commitment).order_by(CommitmentParticipant.committed_at.desc()),
    ]
    # Each branch keeps its own ORDER BY ... LIMIT inside a subquery (both databases allow it);
    # of them all, the newest, ties in branch order.
    every = union_all(*(select(*b.limit(limit).subquery().c) for b in branches)).subquery()
    return select(*every.c).order_by(every.c.at.desc(), every.c.rank).limit(limit)


def recent(studio: Studio, limit: int = RECENT) -> Query[list[Event]]:
    """The studio's latest events, newest first."""
    statement, labels = _feed(limit)
    return Query(statement, {"studio_id": studio.id}, lambda rows: _events(labels, rows))


def _events(labels: Any, rows: Any) -> list[Event]:
    events = []
    for row in rows:
        item = labels.label(row)
        if item is None:  # of a kind not registered here (its feature not loaded)
            continue
        kind, _item_id, rank, at, user_id, handle, name, detail = row[:8]
        verb = f"added the option “{detail}” to" if rank == OPTION else _VERB[rank]
        events.append(Event(at, people.Person(user_id, handle, name), verb, kind, item))
    return events

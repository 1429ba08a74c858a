"""Items as a list shows them: plain columns, not entities.

A list of items (the studio home's newest notes and this cycle's items, a cycle page's three
lists) shows each item's title and link, its author, when it was made and its deadline, and
nothing a caller could change. Loading them as entities (each with its author joined: identity
map, every column, instance state) was most of those pages' SQLAlchemy time; these rows are
read as plain columns (``app.db``), the author's id, handle and name among them, and read
by the templates as the entities were: ``item_title`` and ``item_path`` name and link them,
``item.created_by.name``, ``item.closed``, ``item.manual_close``, ``deadline_text(item)``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select

from app.models import Note, User
from app.models.collab import ClosesByDeadline, Commitment, Decision
from app.services import people


@dataclass(frozen=True, slots=True)
class Listed:
    id: uuid.UUID
    short_id: str
    created_at: datetime
    deadline: Any  # datetime; a note's may be None (it closes when written)
    created_by: people.Person


@dataclass(frozen=True, slots=True)
class ListedNote(Listed):
    title: str


@dataclass(frozen=True, slots=True)
class ListedDecision(ClosesByDeadline, Listed):
    question: str


@dataclass(frozen=True, slots=True)
class ListedCommitment(ClosesByDeadline, Listed):
    title: str


# Each model's row type and the column its title is in, in the rows' order after the others.
_SHAPES: dict[Any, tuple[type[Listed], Any]] = {
    Note: (ListedNote, Note.title),
    Decision: (ListedDecision, Decision.question),
    Commitment: (ListedCommitment, Commitment.title),
}


def select_listed(model: Any) -> Select[Any]:
    """``select`` of ``model``'s rows as lists show them, its author joined: add the where,
    order and limit. Read its rows back with ``rows``."""
    title = _SHAPES[model][1]
    return (select(model.id, model.short_id, model.created_at, model.deadline, title,
                   *people.COLUMNS)
            .join(User, User.id == model.created_by_id))


def rows(model: Any, found: Any) -> list[Any]:
    """``select_listed``'s rows of ``model`` as its row type."""
    shape = _SHAPES[model][0]
    return [shape(i, s, c, d, people.Person(u, h, n), t)  # type: ignore[call-arg]
            for i, s, c, d, t, u, h, n in found]


def rows_of(model: Any) -> Callable[[Any], list[Any]]:
    """``rows`` of ``model``, as a query's answer."""
    return lambda found: rows(model, found)

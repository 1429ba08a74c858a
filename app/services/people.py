"""A person as a list shows them: id, handle and name, read as plain columns.

Lists of many people (a decision's voters, a note's readers) show only a link per person.
Loading each as a ``User`` entity (identity map, every column, instance state) cost more than
the rest of their statement; these rows carry what the templates read (``u.handle``,
``u.name``) and the id, and nothing a caller could change or save by mistake.
"""

from __future__ import annotations

import uuid
from typing import Any, NamedTuple

from app.models import User


class Person(NamedTuple):
    id: uuid.UUID
    handle: str
    name: str


# The columns of a Person, in its field order, for a statement's select list.
COLUMNS: tuple[Any, ...] = (User.id, User.handle, User.name)


def from_rows(rows: Any) -> list[Person]:
    return [Person(*row) for row in rows]


class Voter(NamedTuple):
    """Someone who took part in a decision, and the representative who voted for them in a
    representation session ("Helper for Alice"), or None."""

    person: Person
    representative: Person | None = None

    @property
    def id(self) -> uuid.UUID:
        return self.person.id

    @property
    def handle(self) -> str:
        return self.person.handle

    @property
    def name(self) -> str:
        return self.person.name


def voters_from(rows: Any) -> list[Voter]:
    """Rows of a person's columns then their representative's (NULLs when none)."""
    return [Voter(Person(*row[:3]), Person(*row[3:6]) if row[3] is not None else None)
            for row in rows]

"""What each kind of item puts in the search index: its title, body, owner and address.

Builders take an ORM object or a database row (both answer attribute access), so the session
hook and the rebuild share them. Text is cleaned of the two private-use characters the
snippets use as highlight markers: stored text can never forge a highlight.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

MARK_START, MARK_END = "\ue000", "\ue001"
BODY_MAX = 100_000  # characters of one item's text that are indexed
TITLE_MAX = 500
KINDS = ("note", "comment", "decision", "option", "commitment", "floorplan", "playbook",
         "workflow")


@dataclass
class Doc:
    kind: str
    item_id: str
    title: str
    body: str
    path: str  # "/..." absolute, otherwise relative to the studio's URL
    updated_at: datetime
    studio_id: uuid.UUID | None = None
    owner_id: uuid.UUID | None = None
    public: bool = False
    author_id: uuid.UUID | None = None
    parent_kind: str | None = None
    parent_id: str | None = None
    status: str | None = None
    deadline: datetime | None = None

    def row(self) -> dict[str, Any]:
        values = asdict(self)
        values["title"] = clean(self.title)[:TITLE_MAX]
        values["body"] = clean(self.body)[:BODY_MAX]
        return values


def clean(text: Any) -> str:
    return str(text or "").replace(MARK_START, "").replace(MARK_END, "").replace("\x00", "")


def is_deleted(item: Any) -> bool:
    """Soft-deleted items (a ``deleted_at`` column, where a model has one) leave the index."""
    return getattr(item, "deleted_at", None) is not None


def _when(item: Any) -> datetime:
    value = getattr(item, "updated_at", None) or getattr(item, "created_at", None)
    return value if isinstance(value, datetime) else datetime.now(UTC)


def note(item: Any) -> Doc:
    """A note, or a comment (a note on another item: its parent)."""
    comment = item.commentable_type is not None
    return Doc(kind="comment" if comment else "note", item_id=str(item.id), title=item.title,
               body=item.text, path=f"n/{item.short_id}", updated_at=_when(item),
               studio_id=item.studio_id, author_id=item.created_by_id,
               parent_kind=item.commentable_type if comment else None,
               parent_id=str(item.commentable_id) if comment else None,
               deadline=item.deadline)


def decision(item: Any) -> Doc:
    return Doc(kind="decision", item_id=str(item.id), title=item.question,
               body=item.description, path=f"d/{item.short_id}", updated_at=_when(item),
               studio_id=item.studio_id, author_id=item.created_by_id, deadline=item.deadline)


def option(item: Any, parent: Any) -> Doc:
    """An option is found by its title and leads to its decision."""
    return Doc(kind="option", item_id=str(item.id), title=item.title,
               body=f"An option of: {parent.question}", path=f"d/{parent.short_id}",
               updated_at=_when(item), studio_id=parent.studio_id, author_id=item.created_by_id,
               parent_kind="decision", parent_id=str(parent.id), deadline=parent.deadline)


def commitment(item: Any) -> Doc:
    return Doc(kind="commitment", item_id=str(item.id), title=item.title,
               body=item.description, path=f"c/{item.short_id}", updated_at=_when(item),
               studio_id=item.studio_id, author_id=item.created_by_id, deadline=item.deadline)


def floorplan(item: Any) -> Doc:
    return Doc(kind="floorplan", item_id=str(item.id), title=item.name, body=item.dsl,
               path=f"f/{item.name}", updated_at=_when(item), studio_id=item.studio_id,
               author_id=item.created_by_id)


def _words(value: Any, out: list[str]) -> None:
    """Every key and string of a recipe, in order (its step names, methods, descriptions)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            out.append(str(key))
            _words(inner, out)
    elif isinstance(value, list):
        for inner in value:
            _words(inner, out)
    elif isinstance(value, str):
        out.append(value)
    elif value is not None and not isinstance(value, bool):
        out.append(json.dumps(value))


def playbook(item: Any, newest: Any | None) -> Doc:
    """A playbook (its owner and, once shared, its studio see it) with its newest recipe."""
    words: list[str] = []
    if newest is not None:
        _words(newest.content, words)
    return Doc(kind="playbook", item_id=str(item.id), title=item.name, body=" ".join(words),
               path=f"/playbooks/{item.short_id}",
               updated_at=newest.created_at if newest is not None else _when(item),
               studio_id=item.studio_id, owner_id=item.user_id, author_id=item.user_id,
               status=newest.state if newest is not None else None)


def workflow(name: str, description: str, text: str) -> Doc:
    """A workflow playbook of the catalog: every signed-in person sees /workflows."""
    return Doc(kind="workflow", item_id=name, title=name, body=f"{description}\n{text}",
               path=f"/workflows/{name}", updated_at=datetime.now(UTC), public=True)

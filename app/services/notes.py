"""Notes: writing, editing, read confirmations and comments (a comment is a note on an item)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import aliased, joinedload

from app.db import Query, read
from app.db.reads import first_value, known
from app.extensions import db
from app.models import Note, NoteEvent, Studio, User
from app.models.base import find_by_id
from app.services import items, links, list_rows, people, permissions, revisions
from app.services.errors import Invalid, NotFound
from app.services.timeparse import parse_datetime

TITLE_MAX = 256
TEXT_MAX = 100_000
COMMENTS_SHOWN = 500  # an item page shows at most this many comments (the oldest first)

items.register(items.ItemKind("note", "n", Note, lambda note: note.title))


def _title(title: str | None, text: str) -> str:
    title = (title or "").strip()
    if not title:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        title = first.lstrip("#").strip() or "Untitled note"
    # Titles are one line: a newline in a title must never reach a page heading or YAML.
    return " ".join(title.split())[:TITLE_MAX]


def _deadline(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return parse_datetime(value)
    except ValueError as exc:
        raise Invalid(f"deadline: {exc}", errors=[{"param": "deadline",
                                                   "message": str(exc)}]) from None


def _check_text(text: str, required: bool = True) -> str:
    if required and not (text or "").strip():
        raise Invalid("text is required", errors=[{"param": "text", "message": "is required"}])
    if len(text or "") > TEXT_MAX:
        raise Invalid("text too long", errors=[{"param": "text",
                                                "message": f"at most {TEXT_MAX} characters"}])
    return text or ""


def create_note(studio: Studio, user: User, text: str, title: str | None = None,
                deadline: Any = None, base_url: str = "",
                commentable: tuple[str, uuid.UUID] | None = None) -> Note:
    text = _check_text(text)
    note = Note(studio_id=studio.id, title=_title(title, text), text=text,
                deadline=_deadline(deadline), created_by_id=user.id, updated_by_id=user.id)
    if commentable:
        note.commentable_type, note.commentable_id = commentable
    note.assign_ids()
    db.session.add(note)
    db.session.flush()
    db.session.add(NoteEvent(note_id=note.id, user_id=user.id, event_type="create",
                             title=note.title, text=note.text))
    links.sync(studio, "note", note.id, text, base_url)
    return note


def update_note(note: Note, studio: Studio, user: User, title: str | None = None,
                text: str | None = None, deadline: Any = None, base_url: str = "") -> Note:
    kind = "comment" if note.commentable_type else "note"
    permissions.require_author(user, note.created_by_id, kind)
    before = revisions.snapshot(kind, note)
    if text is not None:
        note.text = _check_text(text)
    if kind == "comment":
        title = None  # a comment's title follows its text
    if title is not None or text is not None:
        note.title = _title(title if title is not None else note.title, note.text)
    if deadline is not None:
        note.deadline = _deadline(deadline)
    note.updated_by_id = user.id
    note.updated_at = datetime.now(UTC)
    db.session.add(NoteEvent(note_id=note.id, user_id=user.id, event_type="update",
                             title=note.title, text=note.text))
    links.sync(studio, "note", note.id, note.text, base_url)
    revisions.record(studio, user, kind, note, "edit", before, revisions.snapshot(kind, note))
    return note


def find_comment(studio: Studio, item_type: str, item_id: uuid.UUID, ident: str) -> Note:
    """A live comment on this item by its id; NotFound names the parameter."""
    comment = find_by_id(Note, ident)
    if (comment is None or comment.studio_id != studio.id or comment.deleted_at is not None
            or comment.commentable_type != item_type or comment.commentable_id != item_id):
        raise NotFound(f"no comment '{ident}' on this {item_type}",
                       errors=[{"param": "comment_id", "message": "no such comment here"}])
    return comment


def read_state(note: Note, user: User | None) -> Query[str]:
    """'unread', 'read', or 'stale' (confirmed before the note last changed)."""
    if user is None:
        return known("unread")
    updated_at = note.updated_at

    def state(rows: Any) -> str:
        # When the last confirmation happened is all it needs: a column, not the event.
        happened_at = first_value(rows)
        if happened_at is None:
            return "unread"
        return "read" if happened_at >= updated_at else "stale"

    return Query(_LAST_CONFIRMED, {"note_id": note.id, "user_id": user.id}, state)


# Every note page (and every confirm_read) reads it: built once, bound per call.
_LAST_CONFIRMED = (select(NoteEvent.happened_at)
                   .where(NoteEvent.note_id == bindparam("note_id"),
                          NoteEvent.user_id == bindparam("user_id"),
                          NoteEvent.event_type == "read_confirmation")
                   .order_by(NoteEvent.happened_at.desc()).limit(1))


def confirm_read(note: Note, user: User) -> NoteEvent | None:
    """Record a read confirmation; None when already confirmed since the last change."""
    if read(read_state(note, user)) == "read":
        return None
    event = NoteEvent(note_id=note.id, user_id=user.id, event_type="read_confirmation",
                      happened_at=datetime.now(UTC))
    db.session.add(event)
    return event


HISTORY_SHOWN = 200  # the note page shows the latest events, oldest of them first
READERS_SHOWN = 500


def history(note: Note) -> list[NoteEvent]:
    latest = list(db.session.scalars(_HISTORY, {"note_id": note.id}))
    return latest[::-1]


class HistoryLine(NamedTuple):
    """An event as the note page lists it: when, what and who."""
    happened_at: datetime
    event_type: str
    user: people.Person


def history_lines(note: Note) -> Query[list[HistoryLine]]:
    """``history`` as the note page shows it, the same events in the same order, read as
    plain rows (not up to 200 events and their people as entities)."""
    return Query(_HISTORY_LINES, {"note_id": note.id}, _history_lines)


def _history_lines(rows: Any) -> list[HistoryLine]:
    return [HistoryLine(at, kind, people.Person(*person)) for at, kind, *person in rows[::-1]]


@dataclass(frozen=True)
class Version:
    number: int  # 1 is the note as created
    event: NoteEvent
    title: str | None  # None: an edit made before versions were kept
    text: str | None


def versions(note: Note) -> list[Version]:
    """The note after its creation and after each edit, oldest first."""
    events = [e for e in history(note) if e.event_type in ("create", "update")]
    return [Version(i, e, e.title, e.text) for i, e in enumerate(events, start=1)]


def readers(note: Note) -> Query[list[people.Person]]:
    # One row per reader (not per confirmation), in the order they first confirmed; plain
    # rows, as the page only links each.
    return Query(_READERS, {"note_id": note.id}, people.from_rows)


# The note page reads these on every view: built once, bound per call. Readers are grouped over
# the note's confirmations first and joined to their people afterwards (as decision voters).
_HISTORY = (select(NoteEvent).options(joinedload(NoteEvent.user))
            .where(NoteEvent.note_id == bindparam("note_id"))
            .order_by(NoteEvent.happened_at.desc()).limit(HISTORY_SHOWN))
_HISTORY_LINES = (select(NoteEvent.happened_at, NoteEvent.event_type, *people.COLUMNS)
                  .outerjoin(User, User.id == NoteEvent.user_id)  # as _HISTORY's joinedload
                  .where(NoteEvent.note_id == bindparam("note_id"))
                  .order_by(NoteEvent.happened_at.desc()).limit(HISTORY_SHOWN))
_FIRST_READ = (select(NoteEvent.user_id, func.min(NoteEvent.happened_at).label("first"))
               .where(NoteEvent.note_id == bindparam("note_id"),
                      NoteEvent.event_type == "read_confirmation")
               .group_by(NoteEvent.user_id).subquery())
_READERS = (select(*people.COLUMNS).join(_FIRST_READ, _FIRST_READ.c.user_id == User.id)
            .order_by(_FIRST_READ.c.first, User.id).limit(READERS_SHOWN))


class Comment(NamedTuple):
    """A comment as an item page shows it, read as plain columns with its author (a
    ``people.Person``): the page never changes it, so it needs no entity."""
    id: uuid.UUID
    short_id: str
    text: str
    created_at: datetime
    updated_at: datetime
    created_by_id: uuid.UUID
    created_by: people.Person
    # Who wrote it for its author in a representation session ("Helper for Alice"), or None.
    representative: people.Person | None = None


def comments(item_type: str, item_id: uuid.UUID) -> Query[list[Comment]]:
    """The item's live comments, oldest first (at most ``COMMENTS_SHOWN``)."""
    return Query(_COMMENTS, {"item_type": item_type, "item_id": item_id}, _comments)


def _comments(rows: Any) -> list[Comment]:
    found = []
    for note_id, short_id, text, created, updated, author_id, *columns in rows:
        person, representative = columns[:3], columns[3:]
        found.append(Comment(note_id, short_id, text, created, updated, author_id,
                             people.Person(*person),
                             people.Person(*representative) if representative[0] else None))
    return found


def has_comments(item_type: str, item_id: uuid.UUID, author_id: uuid.UUID | None = None) -> bool:
    """Whether the item has a live comment (by ``author_id`` when given): one cheap query."""
    if author_id is None:
        return read(Query(_HAS_COMMENTS, {"item_type": item_type, "item_id": item_id},
                          first_value)) is not None
    return read(Query(_HAS_COMMENTS_BY, {"item_type": item_type, "item_id": item_id,
                                         "author_id": author_id}, first_value)) is not None


# Every item page reads these (offered actions ask has_comments): built once, bound per call.
_ON_ITEM = (Note.commentable_type == bindparam("item_type"),
            Note.commentable_id == bindparam("item_id"), Note.deleted_at.is_(None))
_REPRESENTATIVE = aliased(User)
_COMMENTS = (select(Note.id, Note.short_id, Note.text, Note.created_at, Note.updated_at,
                    Note.created_by_id, *people.COLUMNS, _REPRESENTATIVE.id,
                    _REPRESENTATIVE.handle, _REPRESENTATIVE.name)
             .join(User, User.id == Note.created_by_id)
             .outerjoin(_REPRESENTATIVE, _REPRESENTATIVE.id == Note.representative_id)
             .where(*_ON_ITEM)
             .order_by(Note.created_at, Note.id).limit(COMMENTS_SHOWN))
_HAS_COMMENTS = select(Note.id).where(*_ON_ITEM).limit(1)
_HAS_COMMENTS_BY = (select(Note.id).where(*_ON_ITEM, Note.created_by_id == bindparam("author_id"))
                    .limit(1))


def add_comment(studio: Studio, user: User, item_type: str, item_id: uuid.UUID, text: str,
                base_url: str = "") -> Note:
    return create_note(studio, user, text=text, base_url=base_url,
                       commentable=(item_type, item_id))


def recent(studio: Studio, limit: int = 20) -> Query[list[list_rows.ListedNote]]:
    """The studio's newest notes (not comments), newest first, as lists show them."""
    return Query(_recent(limit), {"studio_id": studio.id}, list_rows.rows_of(Note))


@cache  # built once per limit: the studio home runs it on every view
def _recent(limit: int) -> Any:
    return (list_rows.select_listed(Note)
            .where(Note.studio_id == bindparam("studio_id"), Note.commentable_type.is_(None),
                   Note.deleted_at.is_(None))
            .order_by(Note.created_at.desc()).limit(limit))

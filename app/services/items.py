"""Studio items (notes, and the kinds feature packages add) addressed by type and id.

Each kind registers once: its URL letter (``n``, ``d``, ``c``), its model and how to title it.
Links, pins, backlinks and comments read this table instead of listing kinds themselves.
"""

from __future__ import annotations

import re
import uuid
from collections import namedtuple
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import and_, exists, or_, select
from sqlalchemy.orm import aliased

from app.extensions import db
from app.models import Studio
from app.models.base import find_by_id
from app.services import restore_window
from app.services.errors import NotFound, invalid_param


@dataclass(frozen=True)
class ItemKind:
    type: str  # "note"
    letter: str  # "n" as in /studios/<h>/n/<id>
    model: Any
    title: Callable[[Any], str]
    # Kinds addressed by something other than the short id (floorplans use their name): how an
    # item names itself in its URL, and how to find it in a studio by that key.
    key: Callable[[Any], str] | None = None
    lookup: Callable[[Studio, str], Any] | None = None
    # The columns ``title`` and ``key`` (or the short id) read: a list of items that only
    # names and links them (backlinks) reads these as plain columns, not whole entities.
    label: tuple[str, ...] = ("short_id", "title")


KINDS: dict[str, ItemKind] = {}


def register(kind: ItemKind) -> None:
    KINDS[kind.type] = kind


def by_letter(letter: str) -> ItemKind | None:
    return next((k for k in KINDS.values() if k.letter == letter), None)


def path_of(studio: Studio, item_type: str, item: Any) -> str:
    kind = KINDS[item_type]
    key = kind.key(item) if kind.key else item.short_id
    return f"/studios/{studio.handle}/{kind.letter}/{key}"


def _live(model: Any) -> Any:
    """The filter that leaves out soft-deleted rows (None for kinds that are never deleted)."""
    column = getattr(model, "deleted_at", None)
    return column.is_(None) if column is not None else None


def names_a_live_item(type_column: Any, id_column: Any) -> Any:
    """SQL: the (type, id) pair in these columns names an item of a registered kind that is
    there (not deleted), one ``get`` would find."""
    found = []
    for kind in KINDS.values():
        target = aliased(kind.model)  # the columns may be its own table's (a note's comments)
        live = _live(target)
        found.append(and_(type_column == kind.type, exists().where(
            target.id == id_column, *([live] if live is not None else []))))
    return or_(*found)


def find(studio: Studio, item_type: str, ident: str, user: Any = None) -> Any:
    """The item of this kind in this studio, by short id or UUID, or NotFound.

    A deleted item is NotFound too; the message says when it was deleted, and to whoever may
    restore it, until when and where."""
    kind = KINDS[item_type]
    item = kind.lookup(studio, ident) if kind.lookup else find_by_id(kind.model, ident)
    return checked(studio, item_type, ident, item, user)


def checked(studio: Studio, item_type: str, ident: str, item: Any, user: Any = None) -> Any:
    """``item`` (found by ``ident``) if it is a live item of this studio, else NotFound (for a
    deleted one, ``restore_window.gone``'s message)."""
    if item is None or item.studio_id != studio.id:
        raise NotFound(f"no {item_type} '{ident}' in studio '{studio.handle}'")
    if getattr(item, "deleted_at", None) is not None:
        raise restore_window.gone(studio, user, item_type, item)
    return item


_ITEM_PATH = re.compile(r"^/studios/([^/]+)/([a-z])/([^/?#]+)")


def gone_paths(paths: Iterable[str]) -> set[str]:
    """Of these paths, the ones that name an item's page (``/studios/<h>/<letter>/<key>`` and
    below) whose item is no longer there: a log of past calls shows those without a link."""
    wanted: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for path in set(paths):
        match = _ITEM_PATH.match(path or "")
        if match and by_letter(match[2]) is not None:
            wanted.setdefault((match[1], match[2]), []).append((match[3], path))
    gone: set[str] = set()
    for (handle, letter), keyed in wanted.items():
        kind = by_letter(letter)
        assert kind is not None
        if kind.lookup is not None:  # named by something else than the short id: one by one
            studio = db.session.scalar(select(Studio).where(Studio.handle == handle))
            for key, path in keyed:
                found = kind.lookup(studio, key) if studio is not None else None
                if found is None or getattr(found, "deleted_at", None) is not None:
                    gone.add(path)
            continue
        live = _live(kind.model)
        found = set(db.session.scalars(
            select(kind.model.short_id).join(Studio, Studio.id == kind.model.studio_id)
            .where(Studio.handle == handle, kind.model.short_id.in_([k for k, _ in keyed]),
                   *([live] if live is not None else []))))
        gone.update(path for key, path in keyed if key not in found)
    return gone


def get(item_type: str, item_id: uuid.UUID) -> Any | None:
    kind = KINDS.get(item_type)
    item = db.session.get(kind.model, item_id) if kind else None
    return None if getattr(item, "deleted_at", None) is not None else item


def title_of(item_type: str, item: Any) -> str:
    return KINDS[item_type].title(item)


def one_line(value: str | None, param: str, limit: int) -> str:
    """A title as given, on one line (never a newline in a heading or YAML): required, at most
    ``limit`` characters."""
    text = " ".join((value or "").split())
    if not text:
        raise invalid_param(param, "is required")
    if len(text) > limit:
        raise invalid_param(param, f"at most {limit} characters")
    return text


def description(value: str | None, limit: int) -> str:
    """A description as given (none: empty), at most ``limit`` characters."""
    if len(value or "") > limit:
        raise invalid_param("description", f"at most {limit} characters")
    return value or ""


class Labelled(NamedTuple):
    """A select of rows that point at items (their type and id, ``more`` columns, then each
    kind's label columns, with the outer joins that bring them): add its where and order.
    ``label`` reads a row's item back."""
    statement: Any
    columns: list[Any]  # the label columns, each kind's id first
    kinds: dict[str, tuple[Any, int]]  # kind -> (its label's row type, its number of columns)
    at: int  # where the label columns start in a row

    def label(self, row: Any) -> Any:
        """The label of the item ``row`` points at (its type first), named by column; None
        when it is deleted or of no registered kind."""
        at = self.at
        for kind, (label, width) in self.kinds.items():
            if kind == row[0] and row[at] is not None:
                return label._make(row[at:at + width])
            at += width
        return None


def labelled(type_column: Any, id_column: Any, *more: Any) -> Labelled:
    """``select(type_column, id_column, *more, <each kind's label columns>)`` from their
    table, outer-joined to every registered kind's table (a deleted item's columns are null):
    a list of rows that point at items (a link's source or target, a pin's item), each able to
    name and link its item without loading it."""
    columns: list[Any] = []
    kinds: dict[str, tuple[Any, int]] = {}
    statement = select(type_column, id_column, *more).select_from(type_column.table)
    for kind in KINDS.values():
        table = aliased(kind.model)
        names = ("id", *kind.label)
        columns += [getattr(table, name) for name in names]
        kinds[kind.type] = (namedtuple("Label", names), len(names))
        matches = [type_column == kind.type, table.id == id_column]
        if getattr(table, "deleted_at", None) is not None:
            matches.append(table.deleted_at.is_(None))
        statement = statement.outerjoin(table, and_(*matches))
    return Labelled(statement.add_columns(*columns), columns, kinds, 2 + len(more))


def labelled_list(key: Any, finish: Callable[[Labelled], Any], type_column: Any,
                  id_column: Any, *more: Any) -> tuple[Any, Labelled]:
    """``labelled`` finished by ``finish`` (its where, order and limit added): the finished
    statement and what reads its rows' labels back. Built once per ``key`` and set of
    registered kinds (feature packages register theirs on import), since building it cost
    more than running it; the lists read it on every view, bound per call."""
    cache_key = (key, tuple(KINDS))
    built = _LISTS.get(cache_key)
    if built is None:
        found = labelled(type_column, id_column, *more)
        built = _LISTS[cache_key] = (finish(found), found)
    return built


_LISTS: dict[tuple[Any, ...], tuple[Any, Labelled]] = {}

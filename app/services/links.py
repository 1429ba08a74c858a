"""Links between items, parsed from URLs of this app inside text, and backlinks."""

from __future__ import annotations

import re
import uuid
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import bindparam, func, select

from app.db import Query
from app.extensions import db
from app.models import Link, Studio
from app.services import items

# Absolute URLs of this app or site-relative paths: /studios/<handle>/<letter>/<key>, where the
# key is a short id, a UUID or (floorplans) a name; the item kind decides whether it exists.
ITEM_URL = re.compile(
    r"(?:(?P<base>https?://[^\s/)\]>\"']+))?/studios/(?P<handle>[a-z0-9-]+)/(?P<letter>[a-z])/"
    r"(?P<ident>[A-Za-z0-9][A-Za-z0-9_-]{0,63})(?![A-Za-z0-9_-])"
)


def targets_in(text: str, base_url: str) -> list[tuple[str, str, str]]:
    """(handle, item_type, ident) for each URL of this app in ``text``; other hosts are ignored."""
    found = []
    base = base_url.rstrip("/").lower()
    for match in ITEM_URL.finditer(text or ""):
        if match.group("base") and match.group("base").lower() != base:
            continue
        kind = items.by_letter(match.group("letter"))
        if kind:
            found.append((match.group("handle"), kind.type, match.group("ident")))
    return found


def sync(studio: Studio, from_type: str, from_id: uuid.UUID, text: str, base_url: str) -> None:
    """Make the item's outgoing links match the URLs in its text (same studio only)."""
    wanted: set[tuple[str, uuid.UUID]] = set()
    for handle, item_type, ident in targets_in(text, base_url):
        if handle != studio.handle:
            continue
        try:
            target = items.find(studio, item_type, ident)
        except Exception:  # noqa: BLE001 - a dangling URL is just text, not a link
            continue
        if target.id != from_id:  # self-links mean nothing
            wanted.add((item_type, target.id))
    existing = list(db.session.scalars(select(Link).where(Link.from_type == from_type,
                                                            Link.from_id == from_id)))
    have = {(link.to_type, link.to_id): link for link in existing}
    for key, link in have.items():
        if key not in wanted:
            db.session.delete(link)
    for to_type, to_id in wanted - set(have):
        db.session.add(Link(studio_id=studio.id, from_type=from_type, from_id=from_id,
                            to_type=to_type, to_id=to_id))


class Backlink(NamedTuple):
    """An item linking to the one shown: its kind, id and, to name and link it, its ``source``
    (the columns of its kind's ``label`` as attributes), or None when it is deleted."""
    from_type: str
    from_id: uuid.UUID
    source: Any


def backlinks(item_type: str, item_id: uuid.UUID) -> Query[list[Backlink]]:
    """Who links here, oldest link first, each with what names it: one statement (the links
    joined to each kind's table) of plain columns, whatever the number of kinds and links."""
    statement, found = _backlinks()
    return Query(statement, {"item_type": item_type, "item_id": item_id},
                 lambda rows: [Backlink(row[0], row[1], found.label(row)) for row in rows])


def _backlinks() -> tuple[Any, items.Labelled]:
    # Every item page reads it.
    return items.labelled_list(
        "backlinks", lambda found: found.statement.where(
            Link.to_type == bindparam("item_type"), Link.to_id == bindparam("item_id"))
        .order_by(Link.created_at), Link.from_type, Link.from_id)


class Linked(NamedTuple):
    """An item others link to: its kind, id, how many items link to it, and to name and link
    it, its ``source`` (the columns of its kind's ``label``), or None when it is deleted."""
    to_type: str
    to_id: uuid.UUID
    links: int
    source: Any


def leaderboard(studio: Studio, limit: int = 50) -> Query[list[Linked]]:
    """Items of the studio ordered by how many items link to them, each with what names it:
    one statement of plain columns."""
    statement, board = _leaderboard(limit)
    return Query(statement, {"studio_id": studio.id},
                 lambda rows: [Linked(row[0], row[1], row[2], board.label(row)) for row in rows])


def _leaderboard(limit: int) -> tuple[Any, items.Labelled]:
    # The backlinks page reads it on every view.
    counted = _counted(limit)
    return items.labelled_list(
        ("leaderboard", limit), lambda found: found.statement.order_by(
            counted.c.links.desc(), counted.c.to_type, counted.c.to_id),
        counted.c.to_type, counted.c.to_id, counted.c.links)


@cache
def _counted(limit: int) -> Any:
    """The ``limit`` items most linked to, with their counts: the links are counted before
    anything is joined to them, so only these rows meet the kinds' tables, however many
    links the studio holds. Counted as rows (``count()``, every link has an id), the count
    reads the studio's index of targets alone (``ix_links_studio_target``)."""
    links = func.count()
    return (select(Link.to_type, Link.to_id, links.label("links"))
            .where(Link.studio_id == bindparam("studio_id")).group_by(Link.to_type, Link.to_id)
            .order_by(links.desc(), Link.to_type, Link.to_id).limit(limit).subquery("counted"))

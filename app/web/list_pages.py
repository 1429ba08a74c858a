"""A studio's lists (notes, decisions, commitments), its deleted items and its edit history.

Each list is one page per kind with filters, sorts, counts and keyset pages: the page's
``next`` link carries the cursor, in HTML and Markdown alike.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, request
from sqlalchemy import select

from app.actions import Context
from app.extensions import db
from app.models import Note
from app.models.base import find_by_id
from app.models.collab import Option
from app.services import deletion, keyset, restore_window, revisions, studio_lists
from app.services.errors import Invalid
from app.web import core_pages, loaders
from app.web.pages import Page, page

bp = Blueprint("lists", __name__)

TITLES = {"notes": "Notes", "decisions": "Decisions", "commitments": "Commitments"}


def _href(path: str, params: dict[str, str]) -> str:
    return f"{path}?{urlencode(params)}" if params else path


def _list_view(kind: str) -> Any:
    def view(ctx: Context) -> Page:
        query = studio_lists.parse(request.args)
        found = studio_lists.list_items(ctx.studio, kind, query)
        next_link = (_href(ctx.path, query.params(cursor=found.next_cursor))
                     if found.next_cursor else None)
        first_link = _href(ctx.path, query.params()) if query.cursor else None
        filters = [(label, _href(ctx.path, query.params(status=value)), query.status == value)
                   for label, value in (("all", None), ("open", "open"), ("closed", "closed"))]
        sorts = [(value, _href(ctx.path, query.params(sort=value)), query.sort == value)
                 for value in studio_lists.SORTS]
        return Page(ctx, f"{TITLES[kind]} in {ctx.studio.name}", "lists/items", {
            "kind": kind, "item_type": studio_lists.ITEM_TYPE[kind], "query": query, "found": found,
            "next_link": next_link, "first_link": first_link, "filter_links": filters,
            "sort_links": sorts,
        }, nav=core_pages.studio_nav(ctx) + [(TITLES[kind], ctx.path)])

    return view


for _kind in studio_lists.KINDS:
    page(bp, f"studio_{_kind}", f"/studios/<handle>/{_kind}",
         loaders.studio_page(f"studio_{_kind}", f"/{_kind}"))(_list_view(_kind))


@page(bp, "studio_deleted", "/studios/<handle>/deleted",
      loaders.studio_page("studio_deleted", "/deleted"))
def studio_deleted(ctx: Context) -> Page:
    return Page(ctx, f"Deleted in {ctx.studio.name}", "lists/deleted", {
        "rows": deletion.deleted_items(ctx.studio, ctx.user), "ident_of": deletion.ident_of,
        "window_days": restore_window.length().days,
    }, nav=core_pages.studio_nav(ctx) + [("Deleted", ctx.path)])


def _item_filter(ctx: Context, raw: str) -> tuple[tuple[str, ...], tuple[uuid.UUID, ...]]:
    """``item=decision:abcd1234`` → the item and what belongs to it (options, comments)."""
    kind, _, ident = raw.partition(":")
    model = deletion.MODELS.get(kind)
    found = find_by_id(model, ident) if model is not None and kind != "option" else None
    if found is None or found.studio_id != ctx.studio.id:
        raise Invalid(f"no item '{raw}' in this studio (use item=<kind>:<id>, e.g. "
                      f"item=decision:abcd1234)",
                      errors=[{"param": "item", "message": "no such item here"}])
    ids = [found.id]
    ids += db.session.scalars(select(Note.id).where(Note.commentable_type == kind,
                                                    Note.commentable_id == found.id)
                              .limit(revisions.PAGE_SIZE * 4)).all()
    if kind == "decision":
        ids += db.session.scalars(select(Option.id).where(Option.decision_id == found.id)
                                  .limit(revisions.PAGE_SIZE * 4)).all()
    return (), tuple(ids)


@page(bp, "studio_history", "/studios/<handle>/history",
      loaders.studio_page("studio_history", "/history"))
def studio_history(ctx: Context) -> Page:
    item = (request.args.get("item") or "").strip()
    kinds: tuple[str, ...] = ()
    ids: tuple[uuid.UUID, ...] = ()
    if item:
        kinds, ids = _item_filter(ctx, item)
    cursor = (request.args.get("cursor") or "").strip() or None
    limit = keyset.limit_of(request.args.get("limit"), revisions.PAGE_SIZE)
    found = revisions.history(ctx.studio, kinds, ids, cursor, limit)
    base = {"item": item} if item else {}
    next_link = (_href(ctx.path, {**base, "cursor": found.next_cursor})
                 if found.next_cursor else None)
    return Page(ctx, f"History of {ctx.studio.name}" + (f": {item}" if item else ""),
                "lists/history", {"found": found, "item": item, "next_link": next_link},
                nav=core_pages.studio_nav(ctx) + [("History", f"/studios/{ctx.studio.handle}"
                                                              "/history")])


core_pages.STUDIO_SECTIONS[0:0] = [("Notes", "notes"), ("Decisions", "decisions"),
                                   ("Commitments", "commitments")]
core_pages.STUDIO_SECTIONS += [("History", "history"), ("Deleted", "deleted")]

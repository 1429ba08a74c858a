"""Core pages: home, studios, a studio's home/join/settings/team/backlinks, notes, people."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from app.actions import Context
from app.actions.core import known_read_state
from app.actions.edit_delete import known_comments
from app.actions.effects import READ
from app.db import Query, read, read_many
from app.services import (
    activity,
    cycles,
    heartbeats,
    invites,
    items,
    links,
    notes,
    studios,
    textdiff,
)
from app.services import members as member_roles
from app.services.errors import Unauthorized
from app.web import auth, loaders
from app.web.pages import Page, page

bp = Blueprint("core", __name__)


def studio_nav(ctx: Context) -> list[tuple[str, str]]:
    return [("Studios", "/studios"),
            (f"Studio: {ctx.studio.name}", f"/studios/{ctx.studio.handle}")]


def settings_nav(ctx: Context) -> list[tuple[str, str]]:
    """The trail above a page under a person's settings (``ctx.item`` is that person)."""
    return [("You", f"/u/{ctx.item.handle}"), ("Settings", f"/u/{ctx.item.handle}/settings")]


def note_nav(ctx: Context) -> list[tuple[str, str]]:
    return studio_nav(ctx) + [(f"Note: {ctx.item.title}", items.path_of(ctx.studio, "note",
                                                                          ctx.item))]


@page(bp, "home", "/", loaders.site_page("home", "/"), public=True)
def home(ctx: Context) -> Page:
    mine = studios.studios_of(ctx.user) if ctx.user else []
    return Page(ctx, "Harmonic", "home", {"my_studios": mine})


@page(bp, "studios", "/studios", loaders.site_page("studios", "/studios"))
def studio_index(ctx: Context) -> Page:
    mine = studios.studios_of(ctx.user)
    mine_ids = {s.id for s in mine}
    others = [s for s in studios.visible(ctx.user) if s.id not in mine_ids]
    return Page(ctx, "Studios", "studios/index", {"mine": mine, "others": others},
                nav=[("Studios", "/studios")])


@page(bp, "studio_new", "/studios/new", loaders.site_page("studio_new", "/studios/new"))
def studio_new(ctx: Context) -> Page:
    return Page(ctx, "New studio", "studios/new", nav=[("Studios", "/studios")])


@bp.route("/studios/new/handle")
def studio_handle_check() -> Response:
    """Whether a new studio may have the handle ``?handle=`` (the new-studio form asks as the
    person types): ``{"handle", "ok", "message"}``, in the words the form would refuse with."""
    if g.get("user") is None:
        raise Unauthorized("sign in to create a studio")
    auth.authorize(READ)
    handle = (request.args.get("handle") or "").strip().lower()
    problem = studios.handle_problem(handle)
    return jsonify({"handle": handle, "ok": problem is None,
                    "message": problem or f"/studios/{handle} is free."})


@page(bp, "studio", "/studios/<handle>", loaders.studio_page("studio"))
def studio_home(ctx: Context) -> Page:
    window = cycles.current(ctx.studio)
    if ctx.extra.get("heartbeat_needed"):  # set by the heartbeat gate: nothing else to see yet
        return Page(ctx, ctx.studio.name, "studios/show",
                    {"heartbeat_needed": True, "cycle": window,
                     "present": heartbeats.present(ctx.studio)},
                    nav=studio_nav(ctx))
    # The lists, the pins and the feed (both named by their items' labels, their people
    # joined) need no answer before them: they are read together.
    in_cycle = cycles.items_in(ctx.studio, window, ctx.user, limit=HOME_CYCLE_ITEMS)
    recent, decisions, commitments, pins, feed = read_many(
        notes.recent(ctx.studio, limit=HOME_RECENT_NOTES), in_cycle["decision"],
        in_cycle["commitment"], studios.pins(ctx.studio), activity.recent(ctx.studio))
    # This cycle's notes are usually the newest ones just read: taken from them when so.
    cycle_notes = cycles.notes_among(recent, HOME_RECENT_NOTES, window, HOME_CYCLE_ITEMS)
    this_cycle = {"note": read(in_cycle["note"]) if cycle_notes is None else cycle_notes,
                  "decision": decisions, "commitment": commitments}
    pinned = [(pin.item_type, pin.source) for pin in pins if pin.source is not None]
    return Page(ctx, ctx.studio.name, "studios/show",
                {"pinned": pinned, "recent": recent,
                 "sections": STUDIO_SECTIONS, "heartbeat_needed": False, "cycle": window,
                 "this_cycle": this_cycle,
                 "activity": feed,
                 # Shown only by a studio that asks for heartbeats: no query for the others.
                 "present": heartbeats.present(ctx.studio) if ctx.studio.heartbeats_required
                 else []}, nav=studio_nav(ctx))


HOME_CYCLE_ITEMS = 20  # of each kind on the studio page; the lists page through all of them
HOME_RECENT_NOTES = 20

# Links to "new item" pages and other studio pages; feature packages append their own.
STUDIO_SECTIONS: list[tuple[str, str]] = [
    ("New note", "note"), ("Team", "team"), ("Backlinks", "backlinks"), ("Settings", "settings"),
]


@page(bp, "studio_join", "/studios/<handle>/join",
      loaders.studio_page("studio_join", "/join", members_only=False))
def studio_join(ctx: Context) -> Page:
    pending = invites.pending_for(ctx.user, ctx.studio) if ctx.user else []
    # A person joins with one button, or through the code form (a wrong code then keeps the
    # form on /join); join_studio(code) stays listed for agents in Markdown.
    return Page(ctx, f"Join {ctx.studio.name}", "studios/join", {"pending": pending},
                nav=studio_nav(ctx))


@page(bp, "studio_settings", "/studios/<handle>/settings",
      loaders.studio_page("studio_settings", "/settings"))
def studio_settings(ctx: Context) -> Page:
    return Page(ctx, f"Settings of {ctx.studio.name}", "studios/settings", nav=studio_nav(ctx))


@page(bp, "studio_team", "/studios/<handle>/team", loaders.studio_page("studio_team", "/team"))
def studio_team(ctx: Context) -> Page:
    # The members and every column's read are read together.
    members, *columns = read_many(studios.members(ctx.studio),
                                  *(query(ctx.studio) for _label, query, _show in TEAM_DETAILS))
    users = [m.user for m in members]
    details = [(label, show(found, users))
               for (label, _query, show), found in zip(TEAM_DETAILS, columns, strict=True)]
    return Page(ctx, f"Team of {ctx.studio.name}", "studios/team",
                {"members": members, "member_details": details,
                 "roles": member_roles.ROLE_HELP,
                 "is_admin": ctx.member is not None and ctx.member.role == "admin"},
                nav=studio_nav(ctx))


# Extra per-member columns on the team page (e.g. last heartbeat): (label, query(studio),
# show(answer, users)) where query is the column's one read for all members at once, read with
# the members' own, and show makes its answer {user id: text}. The users are studios.Teammate
# rows (id, handle, name, user_type, owner), not entities.
TEAM_DETAILS: list[tuple[str, Callable[[Any], Query[Any]],
                         Callable[[Any, list[Any]], dict[Any, str]]]] = []


@page(bp, "backlinks", "/studios/<handle>/backlinks",
      loaders.studio_page("backlinks", "/backlinks"))
def backlinks(ctx: Context) -> Page:
    rows = [(linked.to_type, linked.source, linked.links)
            for linked in read(links.leaderboard(ctx.studio)) if linked.source is not None]
    return Page(ctx, f"Backlinks in {ctx.studio.name}", "studios/backlinks", {"rows": rows},
                nav=studio_nav(ctx))


# Notes --------------------------------------------------------------------------------------

def discussion(ctx: Context) -> list[Query[Any]]:
    """The reads of the page item's comments and of the items linking to it, which every item
    page shows (``discussed`` makes them the page's data): none needs another's answer, nor
    the page's own, so a page reads them with its own."""
    kind, item = ctx.extra["item_type"], ctx.item
    return [notes.comments(kind, item.id), links.backlinks(kind, item.id)]


def discussed(ctx: Context, comments: list[notes.Comment],
              backlinks: list[links.Backlink]) -> dict[str, Any]:
    """``discussion``'s answers as the page's data: the comments, and each item linking here
    as (title, path), named here once rather than by two template calls a row ((None, None)
    for an item deleted since: its link stays while it may be restored)."""
    known_comments(ctx, comments)  # the comment actions' availability needs no more queries
    return {"comments": comments,
            "backlinks": [_named(ctx.studio, link.from_type, link.source) for link in backlinks]}


def _named(studio: Any, kind: str, item: Any) -> tuple[str | None, str | None]:
    if item is None:
        return None, None
    return items.title_of(kind, item), items.path_of(studio, kind, item)


@page(bp, "note_new", "/studios/<handle>/note", loaders.studio_page("note_new", "/note"))
def note_new(ctx: Context) -> Page:
    return Page(ctx, "New note", "notes/new", nav=studio_nav(ctx))


@page(bp, "note", "/studios/<handle>/n/<note_id>", loaders.item_page("note", "note", "note_id"))
def note_show(ctx: Context) -> Page:
    note = ctx.item
    read_state, history, readers, pinned, comments, backlinks = read_many(
        notes.read_state(note, ctx.user), notes.history_lines(note), notes.readers(note),
        studios.is_pinned(ctx.studio, "note", note.id), *discussion(ctx))
    known_read_state(ctx, read_state)  # confirm_read's availability and label: no query
    shown = {"note": note, "read_state": read_state, "history": history, "readers": readers,
             **discussed(ctx, comments, backlinks), "pinned": pinned}
    return Page(ctx, note.title, "notes/show", shown, nav=studio_nav(ctx))


@page(bp, "note_edit", "/studios/<handle>/n/<note_id>/edit",
      loaders.item_page("note_edit", "note", "note_id", "/edit"))
def note_edit(ctx: Context) -> Page:
    return Page(ctx, f"Edit: {ctx.item.title}", "notes/edit", {"note": ctx.item},
                nav=note_nav(ctx))


@page(bp, "note_settings", "/studios/<handle>/n/<note_id>/settings",
      loaders.item_page("note_settings", "note", "note_id", "/settings"))
def note_settings(ctx: Context) -> Page:
    return Page(ctx, f"Settings: {ctx.item.title}", "notes/settings",
                {"note": ctx.item,
                 "pinned": read(studios.is_pinned(ctx.studio, "note", ctx.item.id))},
                nav=note_nav(ctx))


@page(bp, "note_history", "/studios/<handle>/n/<note_id>/history",
      loaders.item_page("note_history", "note", "note_id", "/history"))
def note_history(ctx: Context) -> Page:
    """Every version of the note, newest first, each with what changed from the one before."""
    found = notes.versions(ctx.item)
    rows = []
    for version, before in zip(found, [None, *found[:-1]], strict=True):
        change = None
        if version.text is not None and before is not None and before.text is not None:
            change = textdiff.diff(before.text, version.text)
        renamed = before is not None and before.title is not None and version.title is not None \
            and before.title != version.title
        rows.append({"version": version, "diff": change, "first": before is None,
                     "old_title": before.title if renamed and before else None})
    return Page(ctx, f"History: {ctx.item.title}", "notes/history",
                {"note": ctx.item, "rows": list(reversed(rows))}, nav=note_nav(ctx))


# People -------------------------------------------------------------------------------------

@page(bp, "user", "/u/<user_handle>", loaders.user_page("user"))
def user_show(ctx: Context) -> Page:
    return Page(ctx, ctx.item.name, "users/show",
                {"subject": ctx.item, "studios": studios.shown_on_profile(ctx.item, ctx.user)})


@page(bp, "user_settings", "/u/<user_handle>/settings", loaders.user_page("user_settings",
                                                                          "/settings"))
def user_settings(ctx: Context) -> Page:
    return Page(ctx, "Your settings", "users/settings",
                {"subject": ctx.item, "invitations": invites.pending_for(ctx.item)},
                nav=[("You", f"/u/{ctx.item.handle}")])


@page(bp, "user_tokens", "/u/<user_handle>/settings/tokens",
      loaders.user_page("user_tokens", "/settings/tokens"))
def user_tokens(ctx: Context) -> Page:
    # Tokens a signed-in app holds are listed under Connected apps (app.oauth), not here.
    tokens = sorted((t for t in ctx.item.tokens if t.oauth_grant_id is None),
                    key=lambda t: t.created_at, reverse=True)
    return Page(ctx, "API tokens", "users/tokens", {"subject": ctx.item, "tokens": tokens},
                nav=settings_nav(ctx))

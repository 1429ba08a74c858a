"""Core actions: studios, membership, notes, comments, pins, profiles and API tokens."""

from __future__ import annotations

import dataclasses
from typing import Any

from app.actions import rules
from app.actions.effects import (
    CREDENTIALS,
    IDEMPOTENT_WRITE,
    REVOKE_CREDENTIALS,
    WRITE,
)
from app.actions.registry import Context, Param, Result, action
from app.db import read
from app.models.studios import JOIN_POLICIES, NEW_STUDIO_DEFAULTS, TEMPOS
from app.services import accounts, items, notes, studios, tokens

TITLE = Param("title", "string", "Title (defaults to the first line of the text)",
              max_length=256)
TEXT = Param("text", "text", "Markdown text", required=True, max_length=notes.TEXT_MAX)
DEADLINE = Param("deadline", "datetime",
                 "Optional deadline: ISO 8601, unix timestamp, or relative like 7d")
COMMENT = Param("text", "text", "The comment, in Markdown", required=True,
                max_length=notes.TEXT_MAX)

STUDIO_FIELDS = (
    Param("name", "string", "Display name", max_length=120),
    Param("description", "text", "What the studio is for", max_length=5000),
    Param("timezone", "string", "IANA time zone, e.g. Europe/Paris", max_length=64),
    Param("tempo", "string", "Cycle length", enum=TEMPOS),
    Param("join_policy", "string", "open: anyone signed in may join; invite: needs a code",
          enum=JOIN_POLICIES),
    Param("heartbeats_required", "boolean",
          "Members see the studio only after a heartbeat in the current cycle"),
)


# Only on the settings page: a new studio starts with the default policy.
STUDIO_POLICY = (
    Param("teacher_replays", "boolean",
          "A playbook's teacher may replay their own captured session for real (after a dry "
          "run) before its recipe is approved; off: only approved recipes replay for real"),
    Param("context_required", "boolean",
          "Every action an agent or an app runs here, or anyone acting for someone, must "
          "declare its context (actor, on_behalf_of, visibility, intention)"),
)


def _studio_settings(ctx: Context) -> dict[str, Any]:
    studio = ctx.studio
    return {p.name: getattr(studio, p.name) for p in STUDIO_FIELDS + STUDIO_POLICY}


# Studios ------------------------------------------------------------------------------------

@action("create_studio", "Create a studio; you become its admin", "studio_new", rules.signed_in,
        params=(dataclasses.replace(STUDIO_FIELDS[0], required=True),
                Param("handle", "string", "URL name: a-z, 0-9 and -", required=True,
                      max_length=40, pattern=r"[a-z0-9-]{2,40}"),
                # A new studio's defaults; editing has none (an absent field stays as it is).
                *(dataclasses.replace(p, default=NEW_STUDIO_DEFAULTS.get(p.name))
                  for p in STUDIO_FIELDS[1:])),
        effect=WRITE)
def create_studio(ctx: Context, p: dict[str, Any]) -> Result:
    studio = studios.create_studio(ctx.user, **p)
    return Result(f"Created studio {studio.name}.", f"/studios/{studio.handle}", created=True)


@action("join_studio", "Join this studio (invite-only studios need a code)", "studio_join",
        rules.non_member, params=(Param("code", "string", "Invite code", max_length=64),),
        effect=IDEMPOTENT_WRITE)
def join_studio(ctx: Context, p: dict[str, Any]) -> Result:
    _member, created = studios.join(ctx.studio, ctx.user, p.get("code"))
    message = "Joined the studio." if created else "You are already a member."
    return Result(message, f"/studios/{ctx.studio.handle}")


@action("update_studio_settings", "Change the studio's settings", "studio_settings",
        rules.admin, params=STUDIO_FIELDS + STUDIO_POLICY, effect=IDEMPOTENT_WRITE,
        prefill=_studio_settings)
def update_studio_settings(ctx: Context, p: dict[str, Any]) -> Result:
    studios.update_settings(ctx.studio, **p)
    return Result("Settings saved.", f"/studios/{ctx.studio.handle}/settings")


# Notes --------------------------------------------------------------------------------------

@action("create_note", "Write a note in this studio", ("note_new", "cycle"), rules.member,
        params=(TITLE, TEXT, DEADLINE), effect=WRITE)
def create_note(ctx: Context, p: dict[str, Any]) -> Result:
    note = notes.create_note(ctx.studio, ctx.user, text=p["text"], title=p.get("title"),
                             deadline=p.get("deadline"), base_url=ctx.base_url)
    return Result(f"Created note “{note.title}”.", items.path_of(ctx.studio, "note", note),
                  created=True, data={"id": note.short_id, "title": note.title})


_SHOWN_READ_STATE = "shown_read_state"


def known_read_state(ctx: Context, state: str) -> None:
    """The note page read the caller's read state itself (``notes.read_state``): the
    confirm_read action's availability and label are answered from it, not a query each."""
    ctx.extra[_SHOWN_READ_STATE] = (ctx.item.id, state)


def _read_state(ctx: Context) -> str:
    # Only a page view sets it, before any action runs: an action POST still queries.
    shown = ctx.extra.get(_SHOWN_READ_STATE)
    if shown is not None and shown[0] == ctx.item.id:
        return str(shown[1])
    return read(notes.read_state(ctx.item, ctx.user))


def _confirm_label(ctx: Context) -> str:
    return "Reconfirm read" if _read_state(ctx) == "stale" else "Confirm read"


@action("confirm_read", "Confirm that you have read this note", "note", rules.member,
        available=lambda ctx: _read_state(ctx) != "read",
        label=_confirm_label, effect=IDEMPOTENT_WRITE)
def confirm_read(ctx: Context, p: dict[str, Any]) -> Result:
    notes.confirm_read(ctx.item, ctx.user)
    return Result("Read confirmed.", ctx.path)


@action("add_comment", "Add a comment", ("note", "decision", "commitment"), rules.member,
        params=(COMMENT,), effect=WRITE)
def add_comment(ctx: Context, p: dict[str, Any]) -> Result:
    # The page's loader names the kind of item shown (note, decision, commitment, ...).
    comment = notes.add_comment(ctx.studio, ctx.user, ctx.extra["item_type"], ctx.item.id,
                                p["text"], base_url=ctx.base_url)
    return Result("Comment added.", f"{ctx.path}#comment-{comment.short_id}", created=True,
                  data={"id": comment.short_id})


@action("update_note", "Edit this note", "note_edit", rules.creator,
        params=(TITLE, Param("text", "text", "Markdown text", max_length=notes.TEXT_MAX),
                DEADLINE), effect=IDEMPOTENT_WRITE,
        prefill=lambda ctx: {"title": ctx.item.title, "text": ctx.item.text,
                             "deadline": ctx.item.deadline.isoformat()
                             if ctx.item.deadline else None})
def update_note(ctx: Context, p: dict[str, Any]) -> Result:
    notes.update_note(ctx.item, ctx.studio, ctx.user, title=p.get("title"), text=p.get("text"),
                      deadline=p.get("deadline"), base_url=ctx.base_url)
    return Result("Note updated.", items.path_of(ctx.studio, "note", ctx.item))


def pin_actions(item_type: str, page: str) -> None:
    """Register pin_<type> / unpin_<type> on a settings page: one definition for every kind."""

    def pinned(ctx: Context) -> bool:
        return read(studios.is_pinned(ctx.studio, item_type, ctx.item.id))

    @action(f"pin_{item_type}", f"Pin this {item_type} to the studio's home page", page,
            rules.member, available=lambda ctx: not pinned(ctx),
            effect=IDEMPOTENT_WRITE)
    def pin(ctx: Context, p: dict[str, Any]) -> Result:
        studios.pin(ctx.studio, ctx.user, item_type, ctx.item.id)
        return Result("Pinned.", items.path_of(ctx.studio, item_type, ctx.item))

    @action(f"unpin_{item_type}", f"Unpin this {item_type}", page, rules.member,
            available=pinned, effect=IDEMPOTENT_WRITE)
    def unpin(ctx: Context, p: dict[str, Any]) -> Result:
        studios.unpin(ctx.studio, item_type, ctx.item.id)
        return Result("Unpinned.", items.path_of(ctx.studio, item_type, ctx.item))


pin_actions("note", "note_settings")


# People and tokens --------------------------------------------------------------------------

@action("update_profile", "Change your display name", "user_settings", rules.self_user,
        params=(Param("name", "string", "Display name", required=True, max_length=120),),
        effect=IDEMPOTENT_WRITE, prefill=lambda ctx: {"name": ctx.user.name})
def update_profile(ctx: Context, p: dict[str, Any]) -> Result:
    accounts.update_profile(ctx.user, p["name"])
    return Result("Profile saved.", f"/u/{ctx.user.handle}")


@action("set_time_zone", "Choose the time zone your pages show times in", "user_settings",
        rules.self_user,
        params=(Param("timezone", "string", "IANA time zone, e.g. Europe/Paris; empty: each "
                      "studio's own zone", max_length=64),),
        effect=IDEMPOTENT_WRITE, prefill=lambda ctx: {"timezone": ctx.user.timezone})
def set_time_zone(ctx: Context, p: dict[str, Any]) -> Result:
    accounts.set_time_zone(ctx.user, p.get("timezone"))
    zone = ctx.user.timezone or "each studio's own time zone"
    return Result(f"Times now show in {zone}.", f"/u/{ctx.user.handle}/settings")


@action("create_api_token", "Create an API token for agents (shown once)", "user_tokens",
        rules.self_user,
        params=(Param("name", "string", "A label to recognise the token by", required=True,
                      max_length=120),
                Param("scopes", "string", "Comma list of read, write (default read,write)",
                      max_length=32),
                Param("expires", "string", "Lifetime like 30d, 1y or 'never' (default 90d)",
                      max_length=16)),
        effect=CREDENTIALS)
def create_api_token(ctx: Context, p: dict[str, Any]) -> Result:
    token, plaintext = tokens.create_token(ctx.user, p["name"], p.get("scopes") or "read,write",
                                           p.get("expires") or "90d")
    return Result("Token created. Copy it now: it is shown only once.",
                  f"/u/{ctx.user.handle}/settings/tokens", created=True,
                  data={"token": plaintext, "prefix": token.prefix, "scopes": token.scopes,
                        "expires_at": token.expires_at.isoformat() if token.expires_at else None})


@action("revoke_api_token", "Revoke one of your API tokens", "user_tokens", rules.self_user,
        params=(Param("token_id", "string", "The token's id or prefix", required=True,
                      max_length=64),),
        effect=REVOKE_CREDENTIALS)
def revoke_api_token(ctx: Context, p: dict[str, Any]) -> Result:
    tokens.revoke(ctx.user, p["token_id"])
    return Result("Token revoked.", f"/u/{ctx.user.handle}/settings/tokens")

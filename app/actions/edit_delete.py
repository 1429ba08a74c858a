"""Editing and deleting: comments, options, notes, decisions, commitments and studios, and
restoring what was deleted.

Deletion is soft (``app.services.deletion``): the item leaves every list and page at once and
its deleter or a studio admin may restore it within the restore window. Who may do what is
decided by ``app.services.permissions`` (creator or admin) and checked again by the services.
"""

from __future__ import annotations

from typing import Any

from app.actions import rules
from app.actions.collab import decision_has_options, option_choices, unvoted_options
from app.actions.effects import DESTRUCTIVE, IDEMPOTENT_WRITE, WRITE
from app.actions.registry import Context, Param, Result, action
from app.services import decisions, deletion, items, notes, permissions, restore_window

COMMENT_ID = Param("comment_id", "string", "The comment's id (the 8 characters after "
                   "#comment- in its link)", required=True, max_length=36)
OPTION_TITLE = Param("option_title", "string", "The option's title, as the decision page "
                     "lists it", required=True, max_length=decisions.OPTION_MAX)
ITEM_PAGES = ("note", "decision", "commitment")


def _deleted_page(ctx: Context) -> str:
    return f"/studios/{ctx.studio.handle}/deleted"


def _list_page(ctx: Context, kind: str) -> str:
    return f"/studios/{ctx.studio.handle}/{kind}s"


def _restore_note(ctx: Context, kind: str, item: Any) -> str:
    until = restore_window.stamp(restore_window.restorable_until(item))
    return (f"Deleted the {kind}. You or a studio admin can restore it until {until} at "
            f"{_deleted_page(ctx)} (action restore_item).")


def _deleted_data(kind: str, item: Any) -> dict[str, Any]:
    return {"item_type": kind, "id": deletion.ident_of(kind, item),
            "restorable_until": restore_window.restorable_until(item).isoformat()}


# Notes, decisions, commitments ---------------------------------------------------------------

def _delete_item(kind: str) -> None:
    """Register delete_<kind> on the item's page and its settings page."""

    @action(f"delete_{kind}", f"Delete this {kind} (its creator or a studio admin); it can be "
            f"restored for a while", (kind, f"{kind}_settings"), rules.creator_or_admin,
            effect=DESTRUCTIVE,
            touches=lambda ctx, result: [_list_page(ctx, kind), f"/studios/{ctx.studio.handle}"])
    def delete(ctx: Context, p: dict[str, Any]) -> Result:
        deletion.delete(ctx.studio, ctx.user, ctx.item)
        return Result(_restore_note(ctx, kind, ctx.item), _list_page(ctx, kind),
                      data=_deleted_data(kind, ctx.item))


for _kind in ("note", "decision", "commitment"):
    _delete_item(_kind)


# Comments ------------------------------------------------------------------------------------

_SHOWN_COMMENTS = "shown_comments"


def known_comments(ctx: Context, comments: list[Any]) -> None:
    """The page read the item's live comments itself (``notes.comments``): the comment
    actions' availability is answered from them instead of two more queries."""
    ctx.extra[_SHOWN_COMMENTS] = comments


def _my_comments(ctx: Context) -> bool:
    shown = ctx.extra.get(_SHOWN_COMMENTS)
    if shown is not None and len(shown) < notes.COMMENTS_SHOWN:  # all of them, not a page
        return any(c.created_by_id == ctx.user.id for c in shown)
    return notes.has_comments(ctx.extra["item_type"], ctx.item.id, ctx.user.id)


def _removable_comments(ctx: Context) -> bool:
    """Comments the caller could delete: their own, or any as a studio admin."""
    if permissions.is_admin(ctx.member):
        shown = ctx.extra.get(_SHOWN_COMMENTS)
        if shown is not None:
            return bool(shown)
        return notes.has_comments(ctx.extra["item_type"], ctx.item.id)
    return _my_comments(ctx)


def _no_comments(ctx: Context) -> str:
    return "there is no comment of yours on this item"


@action("update_comment", "Edit one of your comments on this item", ITEM_PAGES, rules.member,
        available=_my_comments, unavailable_reason=_no_comments,
        params=(COMMENT_ID, Param("text", "text", "The comment's new text, in Markdown",
                                  required=True, max_length=notes.TEXT_MAX)),
        effect=IDEMPOTENT_WRITE)
def update_comment(ctx: Context, p: dict[str, Any]) -> Result:
    comment = notes.find_comment(ctx.studio, ctx.extra["item_type"], ctx.item.id,
                                 p["comment_id"])
    notes.update_note(comment, ctx.studio, ctx.user, text=p["text"], base_url=ctx.base_url)
    return Result("Comment updated.", f"{ctx.path}#comment-{comment.short_id}",
                  data={"id": comment.short_id})


@action("delete_comment", "Delete a comment on this item (its author or a studio admin); it "
        "can be restored for a while", ITEM_PAGES, rules.member, params=(COMMENT_ID,),
        available=_removable_comments, unavailable_reason=_no_comments,
        effect=DESTRUCTIVE)
def delete_comment(ctx: Context, p: dict[str, Any]) -> Result:
    comment = notes.find_comment(ctx.studio, ctx.extra["item_type"], ctx.item.id,
                                 p["comment_id"])
    deletion.delete(ctx.studio, ctx.user, comment)
    return Result(_restore_note(ctx, "comment", comment), ctx.path,
                  data=_deleted_data("comment", comment))


# Options -------------------------------------------------------------------------------------

def _options_open(ctx: Context) -> bool:
    """Whether an option may still change: the decision is open and some option has no vote
    yet (an option voted on stays as it is)."""
    return not ctx.item.closed and bool(unvoted_options(ctx))


def _renamable(ctx: Context) -> bool:
    """A time slot's title is its time: slots are deleted and added, never renamed."""
    return ctx.item.kind != "time_poll" and _options_open(ctx)


def _not_renamable(ctx: Context) -> str:
    if ctx.item.kind == "time_poll":
        return "a time slot's title is its time: delete it and add the slot you mean"
    return _options_fixed(ctx)


def _options_fixed(ctx: Context) -> str:
    if ctx.item.closed:
        return "the decision is closed: its options can no longer change"
    if not decision_has_options(ctx):
        return "the decision has no options yet"
    return "someone has voted on every option, so they stay as they are"


@action("update_option", f"Rename an option ({deletion.OPTION_RULE})", "decision", rules.member,
        available=_renamable, unavailable_reason=_not_renamable, choices=option_choices,
        params=(OPTION_TITLE, Param("new_title", "string", "The option's new title",
                                    required=True, max_length=decisions.OPTION_MAX)),
        effect=IDEMPOTENT_WRITE)
def update_option(ctx: Context, p: dict[str, Any]) -> Result:
    option = deletion.find_option(ctx.item, p["option_title"])
    deletion.rename_option(ctx.studio, ctx.user, option, p["new_title"])
    return Result(f"Renamed the option to “{option.title}”.", ctx.path,
                  data={"title": option.title})


@action("delete_option", f"Delete an option ({deletion.OPTION_RULE})", "decision",
        rules.member, available=_options_open, unavailable_reason=_options_fixed,
        choices=option_choices, params=(OPTION_TITLE,), effect=DESTRUCTIVE)
def delete_option(ctx: Context, p: dict[str, Any]) -> Result:
    option = deletion.find_option(ctx.item, p["option_title"])
    deletion.delete(ctx.studio, ctx.user, option)
    return Result(f"Deleted the option “{option.title}”. It can be restored at "
                  f"{_deleted_page(ctx)} (action restore_item).", ctx.path,
                  data=_deleted_data("option", option))


# Restoring -----------------------------------------------------------------------------------

@action("restore_item", "Restore a deleted note, comment, decision, commitment or option "
        "(whoever deleted it, or a studio admin, within the restore window)", "studio_deleted",
        rules.member,
        params=(Param("item_type", "string", "What kind of item", required=True,
                      enum=tuple(deletion.MODELS)),
                Param("id", "string", "The item's id as this page lists it", required=True,
                      max_length=36)),
        effect=IDEMPOTENT_WRITE,
        touches=lambda ctx, result: [f"/studios/{ctx.studio.handle}"])
def restore_item(ctx: Context, p: dict[str, Any]) -> Result:
    item = deletion.find_deleted(ctx.studio, p["item_type"], p["id"])
    deletion.restore(ctx.studio, ctx.user, item)
    kind = p["item_type"]
    if kind in ("note", "decision", "commitment"):
        location = items.path_of(ctx.studio, kind, item)
    elif kind == "option":
        location = items.path_of(ctx.studio, "decision", item.decision)
    else:
        parent = items.get(item.commentable_type, item.commentable_id)
        location = (f"{items.path_of(ctx.studio, item.commentable_type, parent)}"
                    f"#comment-{item.short_id}" if parent is not None else ctx.path)
    return Result(f"Restored the {kind}.", location)


# Studios -------------------------------------------------------------------------------------

def _requested(ctx: Context) -> bool:
    return ctx.studio.deletion_requested_at is not None and ctx.studio.deleted_at is None


@action("request_studio_deletion", "Step 1 of deleting this studio (admins): ask for its "
        "deletion; then confirm_studio_deletion, or cancel_studio_deletion", "studio_settings",
        rules.admin,
        available=lambda ctx: (ctx.studio.deletion_requested_at is None
                               and ctx.studio.deleted_at is None),
        unavailable_reason=lambda ctx: "deletion was already requested", effect=WRITE)
def request_studio_deletion(ctx: Context, p: dict[str, Any]) -> Result:
    deletion.request_studio_deletion(ctx.studio, ctx.user)
    days = restore_window.studio_grace().days
    return Result(f"Deletion requested. Confirm it with confirm_studio_deletion (type the handle "
                  f"'{ctx.studio.handle}'); its admins can still restore the studio for "
                  f"{days} days after that.", ctx.path)


@action("cancel_studio_deletion", "Cancel the requested deletion of this studio",
        "studio_settings", rules.admin, available=_requested,
        unavailable_reason=lambda ctx: "no deletion was requested", effect=IDEMPOTENT_WRITE)
def cancel_studio_deletion(ctx: Context, p: dict[str, Any]) -> Result:
    deletion.cancel_studio_deletion(ctx.studio, ctx.user)
    return Result("Deletion cancelled.", ctx.path)


@action("confirm_studio_deletion", "Step 2: delete this studio now. It disappears for everyone; "
        "its admins can restore it during the grace period", "studio_settings", rules.admin,
        available=_requested,
        unavailable_reason=lambda ctx: "request the deletion first (request_studio_deletion)",
        params=(Param("handle", "string", "Type the studio's handle to confirm", required=True,
                      max_length=40),),
        effect=DESTRUCTIVE)
def confirm_studio_deletion(ctx: Context, p: dict[str, Any]) -> Result:
    studio = deletion.confirm_studio_deletion(ctx.studio, ctx.user, p["handle"])
    until = deletion.studio_restorable_until(studio)
    assert until is not None
    return Result(f"Deleted the studio '{studio.handle}'. Its admins can restore it until "
                  f"{restore_window.stamp(until)} at {ctx.path} (action "
                  f"restore_studio).", "/studios",
                  data={"restorable_until": until.isoformat()})


@action("restore_studio", "Restore this deleted studio (admins, during the grace period)",
        "studio_settings", rules.admin, available=lambda ctx: ctx.studio.deleted_at is not None,
        unavailable_reason=lambda ctx: "the studio is not deleted", effect=IDEMPOTENT_WRITE)
def restore_studio(ctx: Context, p: dict[str, Any]) -> Result:
    deletion.restore_studio(ctx.studio, ctx.user)
    return Result("Studio restored.", f"/studios/{ctx.studio.handle}")

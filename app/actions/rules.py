"""Authorization rules for actions. A rule returns the reason for refusing, or None to allow.

Rules read only the Context, so what a page advertises and what the handler accepts are decided
by the same function: an action the caller may not run is neither listed nor executable.
"""

from __future__ import annotations

from app.actions.registry import Context
from app.services import permissions


def signed_in(ctx: Context) -> str | None:
    return None if ctx.user is not None else "sign in first"


def member(ctx: Context) -> str | None:
    if ctx.user is None:
        return "sign in first"
    if ctx.member is None:
        return f"you are not a member of the studio '{ctx.studio.handle}'"
    return None


def admin(ctx: Context) -> str | None:
    reason = member(ctx)
    if reason:
        return reason
    return None if ctx.member.role == "admin" else "only studio admins can do this"


def creator(ctx: Context) -> str | None:
    reason = member(ctx)
    if reason:
        return reason
    owner = getattr(ctx.item, "created_by_id", None)
    return None if owner == ctx.user.id else "only the creator can do this"


def non_member(ctx: Context) -> str | None:
    if ctx.user is None:
        return "sign in first"
    return None if ctx.member is None else "you are already a member"


def self_user(ctx: Context) -> str | None:
    """The page's user (``ctx.item``) is the caller: their own settings and tokens."""
    if ctx.user is None:
        return "sign in first"
    return None if ctx.item is not None and ctx.item.id == ctx.user.id else "not your account"


def creator_or_admin(ctx: Context) -> str | None:
    """The page's item's creator, or a studio admin (``app.services.permissions``)."""
    reason = member(ctx)
    if reason:
        return reason
    if permissions.may_manage(ctx.member, ctx.user, getattr(ctx.item, "created_by_id", None)):
        return None
    return "only the creator or a studio admin can do this"

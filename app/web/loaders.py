"""Page loaders: from URL arguments and the caller to a Context (studio, membership, item).

Loaders enforce who may see a page (membership) and 404 what does not exist, so the page view,
its action index and its action POST all see the same rules.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from flask import Request, request

from app.actions import Context
from app.core import config
from app.models import User
from app.models.plain_reads import Read
from app.services import accounts, deletion, items, permissions, studios
from app.services.errors import Conflict, Forbidden
from app.web import auth

# Checks feature packages add to every studio page (e.g. the heartbeat gate): each may raise
# or adjust the Context. They run after membership is known.
STUDIO_GATES: list[Callable[[Context], None]] = []


def base_url() -> str:
    return config.base_url()


def plain(page: str, path: str) -> Callable[..., Context]:
    def load(user: User | None, **_: Any) -> Context:
        return Context(page=page, path=path, user=user, base_url=base_url())

    return load


def studio_ctx(page: str, user: User | None, handle: str, sub: str = "",
               members_only: bool = True) -> Context:
    studio, member = studios.studio_for(handle, user)
    gone = deletion.studio_gone(studio, user, page)
    if gone is not None:
        raise gone
    if studio.deleted_at is not None:  # its admins on its settings page, in the grace period
        action_name = (request.view_args or {}).get("action_name")
        if action_name not in (None, "restore_studio"):
            raise Conflict(f"the studio '{studio.handle}' is deleted: restore it first "
                           f"(restore_studio)")
    join_link = f"/studios/{studio.handle}/join"
    # Where a refused caller can fix it: the join page, or for a guest the team page (an
    # admin there makes them a member).
    fix = f"/studios/{studio.handle}/team" if getattr(member, "role", "") == "guest" else join_link
    ctx = Context(page=page, path=f"/studios/{studio.handle}{sub}", user=user, studio=studio,
                  member=member, base_url=base_url(), extra={"join_link": fix})
    if members_only:
        if not permissions.may_read(member.role if member is not None else None):
            raise Forbidden(f"you are not a member of the studio '{studio.handle}': "
                            f"join it at {join_link}", link=join_link)
        # A deleted studio shows its admins only its settings page: no gate stands in the way.
        for gate in STUDIO_GATES if studio.deleted_at is None else ():
            gate(ctx)
    return ctx


def _studio_read(req: Request, user_id: uuid.UUID) -> Read | None:
    """A studio page's first read (``studio_ctx``), sent with the person's."""
    handle = (req.view_args or {}).get("handle")
    if not isinstance(handle, str) or not req.path.startswith("/studios/"):
        return None
    return studios.studio_read(handle, user_id)


# The URL argument of each item page's id -> the item's kind (item_page fills it).
_ITEM_ARGS: dict[str, str] = {}


def _item_read(req: Request, _user_id: uuid.UUID) -> Read | None:
    """An item page's item (``items.find``), sent with the person's read."""
    args = req.view_args or {}
    if "handle" not in args:
        return None
    for id_arg, item_type in _ITEM_ARGS.items():
        ident = args.get(id_arg)
        if isinstance(ident, str):
            return items.find_read(item_type, ident)
    return None


auth.READS_WITH_PERSON += [_studio_read, _item_read]


def studio_page(page: str, sub: str = "", members_only: bool = True) -> Callable[..., Context]:
    def load(user: User | None, handle: str, **_: Any) -> Context:
        return studio_ctx(page, user, handle, sub, members_only)

    return load


def item_page(page: str, item_type: str, id_arg: str, sub: str = "") -> Callable[..., Context]:
    """Loader for /studios/<handle>/<letter>/<id><sub> pages of one item kind."""
    _ITEM_ARGS[id_arg] = item_type

    def load(user: User | None, handle: str, **args: Any) -> Context:
        ctx = studio_ctx(page, user, handle)
        ctx.item = items.find(ctx.studio, item_type, args[id_arg], user)
        ctx.path = items.path_of(ctx.studio, item_type, ctx.item) + sub
        ctx.extra["item_type"] = item_type
        return ctx

    return load


def user_page(page: str, sub: str = "") -> Callable[..., Context]:
    def load(user: User | None, user_handle: str, **_: Any) -> Context:
        subject = accounts.get_user(user_handle)
        ctx = Context(page=page, path=f"/u/{subject.handle}{sub}", user=user, item=subject,
                      base_url=base_url())
        if sub.startswith("/settings") and (user is None or user.id != subject.id):
            raise Forbidden("these are someone else's settings")
        return ctx

    return load

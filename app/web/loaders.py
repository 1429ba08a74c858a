"""Page loaders: from URL arguments and the caller to a Context (studio, membership, item).

Loaders enforce who may see a page (membership) and 404 what does not exist, so the page view,
its action index and its action POST all see the same rules.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from flask import g, request

from app.actions import Context
from app.core import config
from app.extensions import db
from app.models import User
from app.models.base import SHORT_ID
from app.services import accounts, deletion, items, permissions, studios
from app.services.errors import Conflict, Forbidden, Unauthorized

# Checks feature packages add to every studio page (e.g. the heartbeat gate): each may raise
# or adjust the Context. They run after membership is known.
STUDIO_GATES: list[Callable[[Context], None]] = []

# Who a loader serves: the person, or only their id (the page loads the person with its first
# read, ``app.web.auth``), or None for an anonymous caller.
Person = User | uuid.UUID | None


# Loaders that take the person's id (``Person``) and read the person with their first read.
_JOINING: set[Callable[..., Context]] = set()


def joining(load: Callable[..., Context]) -> Callable[..., Context]:
    """Mark a loader that reads the person itself (it calls ``studio_ctx`` with its ``user``
    as given): ``app.web.pages`` then hands it the person's id instead of reading the person
    first."""
    _JOINING.add(load)
    return load


def joins(load: Callable[..., Context]) -> bool:
    return load in _JOINING


def person(user: Person) -> User | None:
    """The person a loader serves, read now if only their id is known (and made the request's
    ``g.user``)."""
    if isinstance(user, uuid.UUID):
        return _the_request_s(db.session.get(User, user))
    return user


def _the_request_s(found: User | None) -> User:
    if found is None:
        raise Unauthorized("the account behind this identity no longer exists",
                           reason="account_gone")
    g.user = found
    return found


def site_page(page: str, path: str) -> Callable[..., Context]:
    """The loader of a page outside any studio: the person and the page, nothing else."""
    def load(user: Person, **_: Any) -> Context:
        return Context(page=page, path=path, user=person(user), base_url=config.base_url())

    return load


def studio_ctx(page: str, user: Person, handle: str, sub: str = "",
               members_only: bool = True) -> Context:
    return _studio_ctx(page, user, handle, sub, members_only)[0]


def _studio_ctx(page: str, user: Person, handle: str, sub: str = "", members_only: bool = True,
                item_model: Any = None, short_id: str | None = None) -> tuple[Context, Any]:
    """The studio page's Context, and the item of ``item_model`` with ``short_id`` in the
    studio if one is asked for: the person (when only their id is known), the studio, the
    membership and the item come in one statement (``studios.open_studio``)."""
    opened = studios.open_studio(handle, user, item_model, short_id)
    if isinstance(user, uuid.UUID):
        _the_request_s(opened.person)
    user = opened.person
    studio, member = opened.studio, opened.member
    if studio is None:
        raise studios.no_studio(handle)
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
                  member=member, base_url=config.base_url(), extra={"join_link": fix})
    if members_only:
        if not permissions.may_read(member.role if member is not None else None):
            raise Forbidden(f"you are not a member of the studio '{studio.handle}': "
                            f"join it at {join_link}", link=join_link)
        # A deleted studio shows its admins only its settings page: no gate stands in the way.
        for gate in STUDIO_GATES if studio.deleted_at is None else ():
            gate(ctx)
    return ctx, opened.item


def studio_page(page: str, sub: str = "", members_only: bool = True) -> Callable[..., Context]:
    @joining
    def load(user: Person, handle: str, **_: Any) -> Context:
        return studio_ctx(page, user, handle, sub, members_only)

    return load


def item_page(page: str, item_type: str, id_arg: str, sub: str = "") -> Callable[..., Context]:
    """Loader for /studios/<handle>/<letter>/<id><sub> pages of one item kind."""

    @joining
    def load(user: Person, handle: str, **args: Any) -> Context:
        kind, ident = items.KINDS[item_type], args[id_arg]
        short_id = (ident or "").strip().lower()
        if kind.lookup is None and SHORT_ID.match(short_id):  # read with the studio
            ctx, item = _studio_ctx(page, user, handle, item_model=kind.model,
                                    short_id=short_id)
            ctx.item = items.checked(ctx.studio, item_type, ident, item, ctx.user)
        else:
            ctx = studio_ctx(page, user, handle)
            ctx.item = items.find(ctx.studio, item_type, ident, ctx.user)
        ctx.path = items.path_of(ctx.studio, item_type, ctx.item) + sub
        ctx.extra["item_type"] = item_type
        return ctx

    return load


def user_page(page: str, sub: str = "") -> Callable[..., Context]:
    def load(user: Person, user_handle: str, **_: Any) -> Context:
        user = person(user)
        subject = accounts.get_user(user_handle)
        ctx = Context(page=page, path=f"/u/{subject.handle}{sub}", user=user, item=subject,
                      base_url=config.base_url())
        if sub.startswith("/settings") and (user is None or user.id != subject.id):
            raise Forbidden("these are someone else's settings")
        return ctx

    return load

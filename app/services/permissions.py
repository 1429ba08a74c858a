"""Who may read a studio and who may change or remove an item: the one place these rules live.

``may_read`` is the page loaders' rule (``app.web.loaders``) and the change feed's
(``app.core.audience``: subscriptions and streams carry a studio's events to its readers only).
Actions ask ``may_manage`` through ``app.actions.rules.creator_or_admin`` (so a page lists only
what the caller may run) and services ask it again before they write. Roles beyond admin and
member (a read-only guest, say) extend ``may_write`` and ``may_manage`` here and nowhere else.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import bindparam, select

from app.extensions import db
from app.models import Membership, Studio, User
from app.services.errors import Forbidden

ADMIN = "admin"
_MEMBERSHIP = select(Membership).where(Membership.studio_id == bindparam("studio_id"),
                                       Membership.user_id == bindparam("user_id"))


def membership(studio: Studio, user: User | None) -> Membership | None:
    """The person's membership of the studio (None for a visitor or a non-member): what every
    rule below is asked about."""
    if user is None:
        return None
    return db.session.scalars(
        _MEMBERSHIP, {"studio_id": studio.id, "user_id": user.id}).one_or_none()


def is_admin(member: Membership | None) -> bool:
    return member is not None and member.role == ADMIN


def may_read(role: str | None) -> bool:
    """Whether someone with this role in a studio (None: no membership) reads its pages and
    hears of their changes: every member does, whatever the role (a guest reads too); nobody
    else does, whether the studio is open to join or not."""
    return role is not None


def may_write(member: Membership | None) -> bool:
    """A member who may add and change things in the studio at all."""
    return member is not None


def may_manage(member: Membership | None, user: User | None,
               created_by_id: uuid.UUID | None) -> bool:
    """True for the item's creator (while a member who may write) and for studio admins."""
    if user is None or not may_write(member):
        return False
    return is_admin(member) or (created_by_id is not None and created_by_id == user.id)


def require_manage(studio: Studio, user: User, created_by_id: uuid.UUID | None,
                   what: str, verb: str = "change") -> Membership:
    """The caller's membership when they may manage the item; Forbidden (403) otherwise."""
    member = membership(studio, user)
    if not may_manage(member, user, created_by_id):
        raise Forbidden(f"only the {what}'s creator or a studio admin can {verb} it")
    assert member is not None
    return member


def require_author(user: User, created_by_id: Any, what: str, verb: str = "edit") -> None:
    """Only the author: a comment is edited by whoever wrote it, nobody else."""
    if created_by_id != user.id:
        raise Forbidden(f"only the {what}'s author can {verb} it")

"""A studio's people: roles (admin, member, guest), removing a member and leaving.

A studio always keeps an admin: the last one can neither leave, be demoted nor be removed
until another member is made admin (``change_role``).
"""

from __future__ import annotations

from sqlalchemy import func, select

from app.extensions import db
from app.models import Membership, Studio, User
from app.models.studios import ROLES
from app.services.errors import Conflict, invalid_param

ROLE_HELP = {
    "admin": "manages the studio: settings, invites, roles, removing members",
    "member": "reads and takes part: notes, decisions, votes, commitments, comments",
    "guest": "reads only: every action that writes is refused",
}


def find(studio: Studio, handle: str) -> Membership:
    """The membership of the person ``handle`` (with or without the @) in ``studio``."""
    handle = (handle or "").strip().lstrip("@").lower()
    found = db.session.scalar(
        select(Membership).join(User, User.id == Membership.user_id)
        .where(Membership.studio_id == studio.id, User.handle == handle).limit(1))
    if found is None:
        raise invalid_param("handle", f"@{handle} is not a member of {studio.name}")
    return found


def count(studio: Studio) -> int:
    return db.session.scalar(select(func.count()).select_from(Membership).where(
        Membership.studio_id == studio.id)) or 0


def admin_count(studio: Studio) -> int:
    return db.session.scalar(select(func.count()).select_from(Membership).where(
        Membership.studio_id == studio.id, Membership.role == "admin")) or 0


def _last_admin(studio: Studio, member: Membership) -> bool:
    return member.role == "admin" and admin_count(studio) <= 1


def change_role(studio: Studio, handle: str, role: str) -> Membership:
    if role not in ROLES:
        raise invalid_param("role", f"one of {', '.join(ROLES)}")
    member = find(studio, handle)
    if role != "admin" and _last_admin(studio, member):
        raise Conflict(f"@{member.user.handle} is the only admin of {studio.name}: make another "
                       "member admin first, so the studio keeps one")
    member.role = role
    return member


def remove(studio: Studio, by: User, handle: str) -> User:
    member = find(studio, handle)
    if member.user_id == by.id:
        raise Conflict("you cannot remove yourself: leave the studio instead (leave_studio)")
    person = member.user
    db.session.delete(member)
    db.session.flush()
    return person


def leave(studio: Studio, member: Membership) -> None:
    if _last_admin(studio, member):
        others = db.session.scalar(select(func.count()).select_from(Membership).where(
            Membership.studio_id == studio.id, Membership.id != member.id)) or 0
        if others:
            raise Conflict(f"you are the last admin of {studio.name}: hand it over first (make "
                           f"another member admin on /studios/{studio.handle}/team with "
                           "change_role), then leave")
        raise Conflict(f"you are the only member of {studio.name} and a studio needs an admin: "
                       "invite someone and make them admin first, then leave")
    db.session.delete(member)
    db.session.flush()

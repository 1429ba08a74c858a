"""Invites: shareable links (expiry, a use limit, revocable) and invitations addressed to one
person by handle, which only they may accept.

A link's code is the last part of its URL, ``/invites/<code>``; anyone who has it (signed in)
may join through it until it expires, is revoked or has been used ``max_uses`` times. An
invitation by handle is the same row with ``invitee_id`` set and one use: the person sees it in
their settings and on the studio's join page and accepts it there (nobody is added to a studio
without saying yes). Each invite grants a role, member or guest.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.models import Invite, Membership, Studio, User
from app.models.studios import INVITE_ROLES
from app.services import accounts
from app.services.errors import Conflict, Forbidden, NotFound, invalid_param
from app.services.timeparse import expiry

CODE_MAX = 32
DEFAULT_LIFETIME = "7d"
HANDLE_INVITE_LIFETIME = "14d"


def path_of(invite: Invite) -> str:
    return f"/invites/{invite.code}"


def clean_code(text: str | None) -> str:
    """The code in what a person pasted: the code itself or the whole invite link."""
    text = (text or "").strip().rstrip("/")
    if "/" in text:
        text = text.rsplit("/", 1)[1]
    return text.split("?", 1)[0].split("#", 1)[0][:CODE_MAX]


def find(code: str | None) -> Invite | None:
    code = clean_code(code)
    if not code:
        return None
    return db.session.scalar(select(Invite).options(joinedload(Invite.studio))
                             .where(Invite.code == code).limit(1))


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True)
class Problem:
    """Why an invite cannot be used: ``kind`` for programs, ``message`` for people."""

    kind: str  # unknown | deleted | revoked | expired | used_up | not_yours
    message: str


def problem(invite: Invite | None, user: User | None = None,
            now: datetime | None = None) -> Problem | None:
    """Why ``user`` cannot join through ``invite`` now, or None when they can."""
    now = now or datetime.now(UTC)
    if invite is None:
        return Problem("unknown", "No invite has this code. Check it for typos (or paste the "
                                  "whole link), or ask the studio's admin for a new one.")
    name = invite.studio.name
    # A deleted studio (soft delete: ``deleted_at``, where the model has it) takes nobody in.
    if getattr(invite.studio, "deleted_at", None) is not None:
        return Problem("deleted", f"The studio {name} was deleted, so this invite no longer "
                                  "works.")
    if invite.revoked_at is not None:
        return Problem("revoked", f"This invite to {name} was revoked by an admin. Ask them for "
                                  "a new one.")
    if invite.expires_at is not None and invite.expires_at <= now:
        return Problem("expired", f"This invite to {name} expired at {_when(invite.expires_at)}. "
                                  "Ask an admin of the studio for a new one.")
    if invite.max_uses is not None and invite.uses >= invite.max_uses:
        return Problem("used_up", f"This invite to {name} has been used {invite.uses} "
                                  f"time{'s' if invite.uses != 1 else ''}, its limit. Ask an "
                                  "admin of the studio for a new one.")
    if invite.invitee_id is not None and user is not None and invite.invitee_id != user.id:
        return Problem("not_yours", f"This invitation to {name} is for someone else. Sign in as "
                                    "the person it names, or ask an admin for an invite link.")
    return None


def state(invite: Invite, now: datetime | None = None) -> str:
    """A word for the invites list: active, revoked, expired or used up."""
    found = problem(invite, None, now)
    return "active" if found is None else found.kind.replace("_", " ")


def _role(role: str | None) -> str:
    role = role or "member"
    if role not in INVITE_ROLES:
        raise invalid_param("role", f"one of {', '.join(INVITE_ROLES)} (make admins on the team "
                                    "page with change_role)")
    return role


def create_link(studio: Studio, by: User, expires: str = DEFAULT_LIFETIME,
                max_uses: int | None = None, role: str | None = "member") -> Invite:
    if max_uses is not None and max_uses < 1:
        raise invalid_param("max_uses", "must be at least 1 (leave it out for no limit)")
    invite = Invite(studio_id=studio.id, code=secrets.token_urlsafe(9), created_by_id=by.id,
                    expires_at=expiry(expires), max_uses=max_uses, role=_role(role))
    db.session.add(invite)
    db.session.flush()
    return invite


def invite_person(studio: Studio, by: User, handle: str, role: str | None = "member",
                  expires: str = HANDLE_INVITE_LIFETIME) -> tuple[Invite, bool]:
    """A pending invitation for the person ``handle``; (invite, created). Asking again while
    one is pending returns that one."""
    role = _role(role)
    try:
        person = accounts.get_user(accounts.check_handle((handle or "").strip().lstrip("@")))
    except NotFound:
        raise invalid_param("handle", f"nobody has the handle '{handle}'") from None
    if db.session.scalar(select(Membership.id).where(Membership.studio_id == studio.id,
                                                     Membership.user_id == person.id).limit(1)):
        raise Conflict(f"@{person.handle} is already a member of {studio.name}")
    for pending in db.session.scalars(select(Invite).where(
            Invite.studio_id == studio.id, Invite.invitee_id == person.id)):
        if problem(pending, person) is None:
            return pending, False
    invite = Invite(studio_id=studio.id, code=secrets.token_urlsafe(9), created_by_id=by.id,
                    expires_at=expiry(expires), max_uses=1, role=role, invitee_id=person.id)
    db.session.add(invite)
    db.session.flush()
    return invite, True


def pending_for(user: User, studio: Studio | None = None) -> list[Invite]:
    """Invitations addressed to ``user`` that they may still accept (in ``studio``, if given)."""
    query = (select(Invite).options(joinedload(Invite.studio), joinedload(Invite.created_by))
             .where(Invite.invitee_id == user.id).order_by(Invite.created_at.desc()))
    if studio is not None:
        query = query.where(Invite.studio_id == studio.id)
    return [i for i in db.session.scalars(query) if problem(i, user) is None]


def of_studio(studio: Studio) -> list[Invite]:
    return list(db.session.scalars(
        select(Invite).options(joinedload(Invite.created_by), joinedload(Invite.invitee))
        .where(Invite.studio_id == studio.id).order_by(Invite.created_at.desc())))


def accept(invite: Invite | None, user: User) -> tuple[Membership, bool]:
    """Join the invite's studio with its role; (membership, created). A member accepting again
    changes nothing and uses nothing. Forbidden says why an invite cannot be used."""
    if invite is not None:
        existing = db.session.scalar(select(Membership).where(
            Membership.studio_id == invite.studio_id, Membership.user_id == user.id).limit(1))
        if existing is not None:
            return existing, False
    found = problem(invite, user)
    if found is not None or invite is None:
        raise Forbidden(found.message if found else "unknown invite", reason=found and found.kind)
    # Count the use and check the limit in one statement: two people racing for the last use
    # of a link cannot both get in.
    counted = db.session.execute(
        update(Invite).where(Invite.id == invite.id,
                             or_(Invite.max_uses.is_(None), Invite.uses < Invite.max_uses))
        .values(uses=Invite.uses + 1).execution_options(synchronize_session=False))
    if getattr(counted, "rowcount", 1) != 1:
        raise Forbidden(f"This invite to {invite.studio.name} has just been used up. Ask an "
                        "admin of the studio for a new one.", reason="used_up")
    db.session.refresh(invite)
    member = Membership(studio_id=invite.studio_id, user_id=user.id, role=invite.role)
    try:
        with db.session.begin_nested():
            db.session.add(member)
    except IntegrityError:  # joined at the same moment by another request: same outcome
        raise Conflict("you joined this studio a moment ago in another request") from None
    return member, True


def revoke(studio: Studio, code: str) -> Invite:
    invite = find(code)
    if invite is None or invite.studio_id != studio.id:
        raise invalid_param("code", f"no invite of {studio.name} has this code")
    if invite.revoked_at is None:
        invite.revoked_at = datetime.now(UTC)
    return invite

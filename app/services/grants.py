"""Grants and representation sessions (``app.models.grants``): a person lets a member of a
studio (a person or an agent) run some actions for them there, until a time; the member acts
for them in a representation session, one at a time and an hour at most.

Who may run what under a session is decided by the one authorization question
(``app.core.authorization``); this module keeps the rows: it gives, lists, revokes and finds.
Revoking a grant ends its sessions at once.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.models import Studio, User
from app.models.base import utcnow
from app.models.grants import Grant, Representation
from app.services import permissions
from app.services.errors import Conflict, Forbidden, NotFound, invalid_param
from app.services.timeparse import parse_datetime

SESSION_MAX = timedelta(hours=1)  # the longest a representation session lasts


def _user(handle: str, param: str) -> User:
    handle = (handle or "").strip().lstrip("@").lower()
    found = db.session.scalar(select(User).where(User.handle == handle).limit(1))
    if found is None:
        raise invalid_param(param, f"nobody is called @{handle}")
    return found


def _studio(handle: str) -> Studio:
    handle = (handle or "").strip().lower()
    found = db.session.scalar(select(Studio).where(Studio.handle == handle,
                                                   Studio.deleted_at.is_(None)).limit(1))
    if found is None:
        raise invalid_param("studio", f"no studio '{handle}'")
    return found


def give(principal: User, studio_handle: str, grantee_handle: str, actions: list[str],
         until: str) -> Grant:
    """A new grant from ``principal`` to a member of the studio (both must be members)."""
    studio = _studio(studio_handle)
    if permissions.membership(studio, principal) is None:
        raise invalid_param("studio", f"you are not a member of {studio.name}")
    grantee = _user(grantee_handle, "member")
    if grantee.id == principal.id:
        raise invalid_param("member", "you act for yourself already")
    if permissions.membership(studio, grantee) is None:
        raise invalid_param("member", f"@{grantee.handle} is not a member of {studio.name}")
    if not actions:
        raise invalid_param("actions", "name at least one action")
    try:
        expires = parse_datetime(until)
    except ValueError as exc:
        raise invalid_param("until", str(exc)) from None
    if expires <= utcnow():
        raise invalid_param("until", "must be in the future")
    grant = Grant(studio_id=studio.id, principal_id=principal.id, grantee_id=grantee.id,
                  actions=",".join(dict.fromkeys(actions)), expires_at=expires)
    db.session.add(grant)
    db.session.flush()
    return grant


def _grant(user: User, grant_id: str) -> Grant:
    try:
        found = db.session.get(Grant, uuid.UUID(str(grant_id).strip()))
    except ValueError:
        found = None
    if found is None or user.id not in (found.principal_id, found.grantee_id):
        raise NotFound(f"no grant '{grant_id}' of yours")
    return found


def revoke(principal: User, grant_id: str) -> Grant:
    """Revoke a grant at once: its sessions end now."""
    grant = _grant(principal, grant_id)
    if grant.principal_id != principal.id:
        raise Forbidden("only the person who gave a grant revokes it (end the session instead)")
    now = utcnow()
    if grant.revoked_at is None:
        grant.revoked_at = now
    for session in db.session.scalars(select(Representation).where(
            Representation.grant_id == grant.id, Representation.ended_at.is_(None))):
        session.ended_at = now
    db.session.flush()
    return grant


def given(principal: User) -> list[Grant]:
    return list(db.session.scalars(select(Grant).options(joinedload(Grant.grantee),
                                                         joinedload(Grant.studio))
                                   .where(Grant.principal_id == principal.id)
                                   .order_by(Grant.created_at.desc())))


def received(grantee: User) -> list[Grant]:
    return list(db.session.scalars(select(Grant).options(joinedload(Grant.principal),
                                                         joinedload(Grant.studio))
                                   .where(Grant.grantee_id == grantee.id)
                                   .order_by(Grant.created_at.desc())))


def sessions_for(principal: User) -> list[Representation]:
    """The sessions in which someone acts for ``principal`` now."""
    now = utcnow()
    found = db.session.scalars(
        select(Representation).options(joinedload(Representation.grant),
                                       joinedload(Representation.representative))
        .where(Representation.principal_id == principal.id,
               Representation.ended_at.is_(None), Representation.ends_at > now))
    return [r for r in found if r.is_active(now)]


def active_for(representative_id: object) -> Representation | None:
    """The representative's session now, with its grant, principal and studio, or None."""
    now = utcnow()
    found = db.session.scalars(
        select(Representation).options(
            joinedload(Representation.grant).joinedload(Grant.studio),
            joinedload(Representation.principal))
        .where(Representation.representative_id == representative_id,
               Representation.ended_at.is_(None), Representation.ends_at > now)
        .order_by(Representation.started_at.desc()).limit(1)).first()
    return found if found is not None and found.is_active(now) else None


def session(session_id: object) -> Representation | None:
    """A session by id, ended or not, with its grant, principal and studio."""
    return db.session.scalars(
        select(Representation).options(
            joinedload(Representation.grant).joinedload(Grant.studio),
            joinedload(Representation.principal))
        .where(Representation.id == session_id)).first()


def start(representative: User, principal_handle: str, studio_handle: str | None = None,
          minutes: int = 60) -> Representation:
    """Start acting for ``principal_handle`` under an active grant they gave ``representative``
    (in ``studio_handle`` when they gave more than one)."""
    principal = _user(principal_handle, "principal")
    now = utcnow()
    grants = [g for g in db.session.scalars(
        select(Grant).options(joinedload(Grant.studio))
        .where(Grant.principal_id == principal.id, Grant.grantee_id == representative.id,
               Grant.revoked_at.is_(None), Grant.expires_at > now)
        .order_by(Grant.created_at.desc()))]
    if studio_handle:
        grants = [g for g in grants if g.studio.handle == studio_handle.strip().lower()]
    if not grants:
        raise Forbidden(f"@{principal.handle} has given you no grant in force"
                        + (f" in {studio_handle}" if studio_handle else ""), reason="no_grant")
    if len({g.studio_id for g in grants}) > 1:
        raise invalid_param("studio", "you hold grants from @{} in {}: name the studio".format(
            principal.handle, ", ".join(sorted({g.studio.handle for g in grants}))))
    if active_for(representative.id) is not None:
        raise Conflict("you are already acting for someone: end that session first")
    grant = grants[0]
    length = min(timedelta(minutes=max(1, minutes)), SESSION_MAX)
    session = Representation(grant_id=grant.id, principal_id=principal.id,
                             representative_id=representative.id, started_at=now,
                             ends_at=min(now + length, grant.expires_at))
    session.grant = grant
    db.session.add(session)
    db.session.flush()
    return session


def end(user: User, representative_handle: str | None = None) -> Representation:
    """End a session: the representative's own, or (for the principal) the one in which
    ``representative_handle`` acts for them."""
    if representative_handle:
        other = _user(representative_handle, "representative")
        session = active_for(other.id)
        if session is None or session.principal_id != user.id:
            raise NotFound(f"@{other.handle} is not acting for you")
    else:
        session = active_for(user.id)
        if session is None:
            raise NotFound("you are not acting for anyone")
    session.ended_at = utcnow()
    db.session.flush()
    return session

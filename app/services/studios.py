"""Studios: creation, settings, joining and pins.

Invites live in app.services.invites, roles and leaving in app.services.members.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from functools import cache
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import ColumnElement, and_, bindparam, exists, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased

from app.db import Query, read
from app.db.reads import first_value
from app.extensions import db
from app.models import Membership, Pin, Studio, User
from app.models.studios import HANDLE_PATTERN, JOIN_POLICIES, NEW_STUDIO_DEFAULTS, TEMPOS
from app.services import invites, items, people, permissions
from app.services.errors import Conflict, Forbidden, Invalid, NotFound

HANDLE = re.compile(HANDLE_PATTERN)
# Path words under /studios/ that a studio handle would shadow.
RESERVED_HANDLES = {"new", "actions"}


# Built once with bound parameters, not per request (building a statement costs about as
# much as SQLite answering it).
_STUDIO_BY_HANDLE = select(Studio).where(Studio.handle == bindparam("handle")).limit(1)


def get_studio(handle: str, include_deleted: bool = False) -> Studio:
    """The studio by handle; a deleted one is NotFound unless ``include_deleted`` (the page
    loaders, which let its admins restore it during the grace period)."""
    studio = db.session.scalar(_STUDIO_BY_HANDLE, {"handle": (handle or "").lower()})
    if studio is None or (studio.deleted_at is not None and not include_deleted):
        raise no_studio(handle)
    return studio


def no_studio(handle: str) -> NotFound:
    return NotFound(f"no studio '{handle}'")


class Opened(NamedTuple):
    """What a studio page starts with: its person (None: anonymous, or no such account), the
    studio (None: no such handle), the person's membership and the page's item, if any."""
    person: User | None
    studio: Studio | None
    member: Membership | None
    item: Any


def open_studio(handle: str, person: User | uuid.UUID | None, item_model: Any = None,
                short_id: str | None = None) -> Opened:
    """The studio by handle (deleted ones too: the page loaders decide) with the person's
    membership, in one statement, which also loads the person when given only their id, and
    the item of ``item_model`` with this short id in the studio when one is asked for: every
    studio page starts with these, and no one of them needs another's answer first."""
    by_id = isinstance(person, uuid.UUID)
    user_id = person if isinstance(person, uuid.UUID) else getattr(person, "id", None)
    known = None if isinstance(person, uuid.UUID) else person
    row = db.session.execute(_opener(by_id, item_model), {
        "handle": (handle or "").lower(), "user_id": user_id, "short_id": short_id}).first()
    if row is None:  # no such studio (or, asked by id, no such person)
        return Opened(known, None, None, None)
    found = list(row)
    loaded = found.pop(0) if by_id else known
    studio, member = found[0], found[1]
    return Opened(loaded, studio, member, found[2] if item_model is not None else None)


@cache
def _opener(by_id: bool, item_model: Any) -> Any:
    """``open_studio``'s statement, built once per shape: from the person's row when the
    person is asked by id (a row even when the studio is missing), else from the studio's."""
    membership = and_(Membership.studio_id == Studio.id,
                      Membership.user_id == (User.id if by_id else bindparam("user_id")))
    entities: list[Any] = [Studio, Membership] + ([item_model] if item_model is not None else [])
    if by_id:
        statement = (select(User, *entities).select_from(User)
                     .outerjoin(Studio, Studio.handle == bindparam("handle"))
                     .where(User.id == bindparam("user_id")))
    else:
        statement = select(*entities).where(Studio.handle == bindparam("handle"))
    statement = statement.outerjoin(Membership, membership)
    if item_model is not None:
        statement = statement.outerjoin(item_model, and_(
            item_model.studio_id == Studio.id, item_model.short_id == bindparam("short_id")))
    return statement.limit(1)


def require_member(studio: Studio, user: User | None) -> Membership:
    member = permissions.membership(studio, user)
    if member is None:
        raise Forbidden(f"you are not a member of the studio '{studio.handle}'",
                        link=f"/studios/{studio.handle}/join")
    return member


def _check_settings(values: dict[str, Any]) -> list[dict[str, str]]:
    errors = []
    if "handle" in values and not (HANDLE.match(values["handle"] or "")
                                   and 2 <= len(values["handle"]) <= 40):
        errors.append({"param": "handle", "message": "2–40 characters of a-z, 0-9 and -"})
    elif values.get("handle") in RESERVED_HANDLES:
        errors.append({"param": "handle", "message": "this word is reserved; pick another"})
    if "name" in values and not (values["name"] or "").strip():
        errors.append({"param": "name", "message": "is required"})
    if "tempo" in values and values["tempo"] not in TEMPOS:
        errors.append({"param": "tempo", "message": f"one of {', '.join(TEMPOS)}"})
    if "join_policy" in values and values["join_policy"] not in JOIN_POLICIES:
        errors.append({"param": "join_policy", "message": f"one of {', '.join(JOIN_POLICIES)}"})
    if "timezone" in values:
        try:
            ZoneInfo(values["timezone"])
        except (ZoneInfoNotFoundError, ValueError):
            errors.append({"param": "timezone",
                           "message": "not an IANA time zone (e.g. Europe/Paris)"})
    return errors


def handle_problem(handle: str) -> str | None:
    """What stands in the way of a new studio at ``handle`` (its form, a reserved word, taken),
    in the words create_studio refuses with; None when it is free."""
    value = (handle or "").strip().lower()
    errors = _check_settings({"handle": value})
    if errors:
        return errors[0]["message"]
    if db.session.scalar(select(Studio.id).where(Studio.handle == value).limit(1)):
        return _taken(value)
    return None


def _taken(handle: str) -> str:
    return f"the handle '{handle}' is taken"


def create_studio(user: User, handle: str, name: str, description: str = "",
                  timezone: str = NEW_STUDIO_DEFAULTS["timezone"],
                  tempo: str = NEW_STUDIO_DEFAULTS["tempo"],
                  join_policy: str = NEW_STUDIO_DEFAULTS["join_policy"],
                  heartbeats_required: bool = NEW_STUDIO_DEFAULTS["heartbeats_required"]
                  ) -> Studio:
    values = {"handle": (handle or "").strip().lower(), "name": name, "timezone": timezone,
              "tempo": tempo, "join_policy": join_policy}
    errors = _check_settings(values)
    if errors:
        raise Invalid("invalid studio settings", errors=errors)
    if db.session.scalar(select(Studio.id).where(Studio.handle == values["handle"]).limit(1)):
        raise Conflict(_taken(values["handle"]))
    studio = Studio(handle=values["handle"], name=name.strip(), description=description or "",
                    timezone=timezone, tempo=tempo, join_policy=join_policy,
                    heartbeats_required=heartbeats_required, created_by_id=user.id)
    db.session.add(studio)
    db.session.flush()
    db.session.add(Membership(studio_id=studio.id, user_id=user.id, role="admin"))
    db.session.flush()
    return studio


def update_settings(studio: Studio, **values: object) -> Studio:
    values = {k: v for k, v in values.items() if v is not None}
    errors = _check_settings(values)
    if errors:
        raise Invalid("invalid studio settings", errors=errors)
    for key, value in values.items():
        setattr(studio, key, value.strip() if isinstance(value, str) and key == "name" else value)
    return studio


def join(studio: Studio, user: User, code: str | None = None) -> tuple[Membership, bool]:
    """Join; returns (membership, created). Joining twice is harmless.

    With a code, the invite decides the role (app.services.invites); without one, an open
    studio takes anyone as a member and an invite-only one the person it has invited by handle.
    """
    existing = permissions.membership(studio, user)
    if existing is not None:
        return existing, False
    if code:
        invite = invites.find(code)
        if invite is not None and invite.studio_id != studio.id:
            raise Forbidden(f"this invite code is for another studio: open /invites/"
                            f"{invite.code} to see which")
        return invites.accept(invite, user)
    pending = invites.pending_for(user, studio)
    if pending:
        return invites.accept(pending[0], user)
    if studio.join_policy != "open":
        raise Forbidden("this studio needs an invite: open the invite link an admin sent you, "
                        "or enter its code at /join")
    member = Membership(studio_id=studio.id, user_id=user.id, role="member")
    db.session.add(member)
    try:
        db.session.flush()
    except IntegrityError:
        # Two joins raced; the other one won, which is the same outcome.
        db.session.rollback()
        return require_member(studio, user), False
    return member, True


class Teammate(NamedTuple):
    """A member's person as the team page shows them; ``owner``: an agent's owner."""
    id: uuid.UUID
    handle: str
    name: str
    user_type: str
    owner: people.Person | None


class Member(NamedTuple):
    """A membership as the team page lists it."""
    user: Teammate
    role: str
    joined_at: datetime

    @property
    def user_id(self) -> uuid.UUID:
        return self.user.id


def members(studio: Studio) -> Query[list[Member]]:
    """Everyone in the studio, in the order they joined: plain rows (the team page shows
    fifty or more, and their entities cost more than the rest of the page's reads)."""
    return Query(_MEMBERS, {"studio_id": studio.id}, _members)


def _members(rows: Any) -> list[Member]:
    return [Member(Teammate(uid, handle, name, kind,
                            people.Person(oid, ohandle, oname) if oid is not None else None),
                   role, joined_at)
            for role, joined_at, uid, handle, name, kind, oid, ohandle, oname in rows]


_OWNER = aliased(User)
_MEMBERS = (select(Membership.role, Membership.joined_at, User.id, User.handle, User.name,
                   User.user_type, _OWNER.id, _OWNER.handle, _OWNER.name)
            .outerjoin(User, User.id == Membership.user_id)
            .outerjoin(_OWNER, _OWNER.id == User.owner_id)
            .where(Membership.studio_id == bindparam("studio_id"))
            .order_by(Membership.joined_at))


def studios_of(user: User) -> list[Studio]:
    return list(db.session.scalars(
        select(Studio).join(Membership, Membership.studio_id == Studio.id)
        .where(Membership.user_id == user.id, Studio.deleted_at.is_(None))
        .order_by(Studio.name)))


STUDIOS_SHOWN = 200  # the studio index lists at most this many studios besides one's own
PINS_SHOWN = 50


def _seen_by(viewer: User | None) -> ColumnElement[bool]:
    """The studios ``viewer`` may see named in a list (the index, a profile, completions): the
    open ones, and those they belong to. An invite-only studio is nobody else's business; the
    pages of any studio are its members' (``permissions.may_read``)."""
    shown: ColumnElement[bool] = Studio.join_policy == "open"
    if viewer is None:
        return shown
    theirs = aliased(Membership)  # (a list of someone's studios joins their memberships)
    return or_(shown, exists().where(theirs.studio_id == Studio.id,
                                     theirs.user_id == viewer.id).correlate(Studio))


def visible(viewer: User | None, limit: int = STUDIOS_SHOWN) -> list[Studio]:
    """The studios ``viewer`` may see (``_seen_by``), by name."""
    return list(db.session.scalars(select(Studio).where(Studio.deleted_at.is_(None),
                                                        _seen_by(viewer))
                                   .order_by(Studio.name).limit(limit)))


def shown_on_profile(subject: User, viewer: User | None) -> list[Studio]:
    """The studios ``subject`` belongs to that ``viewer`` may see (``_seen_by``): what a
    profile page lists."""
    return list(db.session.scalars(
        select(Studio).join(Membership, Membership.studio_id == Studio.id)
        .where(Membership.user_id == subject.id, Studio.deleted_at.is_(None), _seen_by(viewer))
        .order_by(Studio.name)))


# Pins -------------------------------------------------------------------------------------

def is_pinned(studio: Studio, item_type: str, item_id: uuid.UUID) -> Query[bool]:
    return Query(_IS_PINNED, {"studio_id": studio.id, "item_type": item_type,
                              "item_id": item_id}, _found)


def _found(rows: Any) -> bool:
    return first_value(rows) is not None


# Read by every item page and the studio home: built once (see _STUDIO_BY_HANDLE).
_IS_PINNED = select(Pin.id).where(Pin.studio_id == bindparam("studio_id"),
                                  Pin.item_type == bindparam("item_type"),
                                  Pin.item_id == bindparam("item_id")).limit(1)


def pin(studio: Studio, user: User, item_type: str, item_id: uuid.UUID) -> None:
    if read(is_pinned(studio, item_type, item_id)):
        raise Conflict("already pinned")
    db.session.add(Pin(studio_id=studio.id, item_type=item_type, item_id=item_id,
                       pinned_by_id=user.id))
    try:
        db.session.flush()
    except IntegrityError:
        db.session.rollback()
        raise Conflict("already pinned") from None


def unpin(studio: Studio, item_type: str, item_id: uuid.UUID) -> None:
    found = db.session.scalar(select(Pin).where(
        Pin.studio_id == studio.id, Pin.item_type == item_type, Pin.item_id == item_id).limit(1))
    if found is None:
        raise Conflict("not pinned")
    db.session.delete(found)


class Pinned(NamedTuple):
    """A pin as the studio home reads it: which item and, to name and link it, its
    ``source`` (the columns of its kind's label), or None when it is deleted."""
    item_type: str
    item_id: uuid.UUID
    source: Any


def pins(studio: Studio) -> Query[list[Pinned]]:
    """The studio's pins, newest first, each with what names its item: one statement of
    plain columns (the pins joined to each kind's table)."""
    statement, found = _pins()
    return Query(statement, {"studio_id": studio.id},
                 lambda rows: [Pinned(row[0], row[1], found.label(row)) for row in rows])


def _pins() -> tuple[Any, items.Labelled]:
    return items.labelled_list(
        "pins", lambda found: found.statement.where(Pin.studio_id == bindparam("studio_id"))
        .order_by(Pin.pinned_at.desc()).limit(PINS_SHOWN), Pin.item_type, Pin.item_id)

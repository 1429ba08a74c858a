"""Soft deletion and restoration of studio items, and a studio's two-step deletion.

A deleted item keeps its row with ``deleted_at`` and ``deleted_by_id`` set: it leaves every list,
page, cycle, pin, backlink and search index at once (readers filter on ``deleted_at``), and its
deleter or a studio admin may restore it within the restore window (``HARMONIC_RESTORE_DAYS``,
default 30). Each deletion and restoration writes an ``item_revisions`` row (the audit event).

A studio is deleted in two steps by an admin: ``request_studio_deletion``, then
``confirm_studio_deletion`` (typing the handle). From the confirmation the studio is gone for
everyone, except that its admins may restore it from its settings page during the grace period
(``HARMONIC_STUDIO_DELETE_GRACE_DAYS``, default 7); after that it is gone for good.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.models import Note, Studio, User
from app.models.base import find_by_id, utcnow
from app.models.collab import Commitment, Decision, DecisionBallot, Option, Vote
from app.services import decisions, permissions, restore_window, revisions
from app.services.errors import Conflict, Forbidden, Invalid, NotFound

# The kinds the restore action and the "deleted" page know, with their models.
MODELS: dict[str, Any] = {"note": Note, "comment": Note, "decision": Decision,
                          "commitment": Commitment, "option": Option}
DELETED_PAGE_SIZE = 50


def kind_of(item: Any) -> str:
    if isinstance(item, Note):
        return "comment" if item.commentable_type else "note"
    for name, model in MODELS.items():
        if isinstance(item, model):
            return name
    raise ValueError(f"not a deletable item: {item!r}")


# Items -----------------------------------------------------------------------------------------

def _studio_of(item: Any) -> Any:
    if isinstance(item, Option):
        return item.decision.studio_id
    return item.studio_id


def delete(studio: Studio, user: User, item: Any) -> Any:
    """Soft-delete a note, comment, decision, commitment or option (rules checked here too)."""
    kind = kind_of(item)
    if item.deleted_at is not None:
        raise Conflict(f"this {kind} is already deleted")
    if kind == "option":
        _check_option_change(studio, user, item, "delete")
    else:
        permissions.require_manage(studio, user, item.created_by_id,
                                   "comment" if kind == "comment" else kind, "delete")
    item.deleted_at = utcnow()
    item.deleted_by_id = user.id
    revisions.record(studio, user, kind, item, "delete",
                     after={"deleted_at": item.deleted_at.isoformat()})
    return item


def find_deleted(studio: Studio, item_type: str, ident: str) -> Any:
    """A deleted item of this studio by kind and id (an option by its id); NotFound otherwise."""
    model = MODELS.get(item_type)
    if model is None:
        raise Invalid(f"item_type must be one of {', '.join(MODELS)}",
                      errors=[{"param": "item_type", "message": f"one of {', '.join(MODELS)}"}])
    if model is Option:
        try:
            item = db.session.get(Option, uuid.UUID(ident))
        except ValueError:
            item = None
    else:
        item = find_by_id(model, ident)
    if item is None or _studio_of(item) != studio.id or kind_of(item) != item_type:
        raise NotFound(f"no deleted {item_type} '{ident}' in studio '{studio.handle}'")
    if item.deleted_at is None:
        raise Conflict(f"the {item_type} '{ident}' is not deleted")
    return item


def restore(studio: Studio, user: User, item: Any) -> Any:
    kind = kind_of(item)
    member = permissions.membership(studio, user)
    if not restore_window.may_restore(member, user, item):
        raise Forbidden(f"only whoever deleted this {kind} or a studio admin can restore it")
    until = restore_window.restorable_until(item)
    if until <= utcnow():
        raise Conflict(f"the restore window of this {kind} ended at {restore_window.stamp(until)}")
    if kind == "option":
        clash = db.session.scalar(select(Option.id).where(
            Option.decision_id == item.decision_id, Option.title == item.title,
            Option.deleted_at.is_(None), Option.id != item.id).limit(1))
        if clash is not None:
            raise Conflict(f"another option is titled '{item.title}' now: rename it first")
    before = item.deleted_at.isoformat()
    item.deleted_at = None
    item.deleted_by_id = None
    revisions.record(studio, user, kind, item, "restore", before={"deleted_at": before})
    return item


@dataclass(frozen=True)
class DeletedRow:
    item_type: str
    item: Any
    title: str
    deleted_by: User | None
    until: datetime


def deleted_items(studio: Studio, user: User | None) -> list[DeletedRow]:
    """What this caller may still restore in the studio, most recently deleted first."""
    member = permissions.membership(studio, user)
    if user is None or member is None:
        return []
    now = utcnow()
    since = now - restore_window.length()
    rows: list[DeletedRow] = []
    models: tuple[Any, ...] = (Note, Decision, Commitment)
    for model in models:
        query = (select(model).where(model.studio_id == studio.id,
                                     model.deleted_at.is_not(None), model.deleted_at > since)
                 .order_by(model.deleted_at.desc()).limit(DELETED_PAGE_SIZE))
        if not permissions.is_admin(member):
            query = query.where(model.deleted_by_id == user.id)
        for item in db.session.scalars(query):
            kind = kind_of(item)
            title = item.question if kind == "decision" else item.title
            rows.append(DeletedRow(kind, item, title, None, restore_window.restorable_until(item)))
    options = (select(Option).options(joinedload(Option.decision)).join(Decision)
               .where(Decision.studio_id == studio.id, Option.deleted_at.is_not(None),
                      Option.deleted_at > since)
               .order_by(Option.deleted_at.desc()).limit(DELETED_PAGE_SIZE))
    if not permissions.is_admin(member):
        options = options.where(Option.deleted_by_id == user.id)
    for option in db.session.scalars(options):
        rows.append(DeletedRow("option", option,
                               f"{option.title} (on “{option.decision.question}”)", None,
                               restore_window.restorable_until(option)))
    deleters = {r.item.deleted_by_id for r in rows}
    people = {u.id: u for u in db.session.scalars(select(User).where(User.id.in_(deleters)))}
    rows = [DeletedRow(r.item_type, r.item, r.title, people.get(r.item.deleted_by_id), r.until)
            for r in rows]
    rows.sort(key=lambda r: r.item.deleted_at, reverse=True)
    return rows[:DELETED_PAGE_SIZE]


def ident_of(item_type: str, item: Any) -> str:
    """How the restore action names an item: its short id (an option: its UUID)."""
    return str(item.id) if item_type == "option" else str(item.short_id)


# Options ---------------------------------------------------------------------------------------

OPTION_RULE = ("an option can be renamed or deleted by whoever proposed it, the decision's "
               "creator or a studio admin, only while the decision is open and before anyone "
               "has voted on it")


def option_has_votes(option: Option) -> bool:
    """Whether someone voted on it: an acceptance vote on it, or (a ballot names options by
    id, anonymously too) any ballot on its decision."""
    if db.session.scalar(select(Vote.id).where(Vote.option_id == option.id).limit(1)):
        return True
    return db.session.scalar(select(DecisionBallot.id).where(
        DecisionBallot.decision_id == option.decision_id).limit(1)) is not None


def _check_option_change(studio: Studio, user: User, option: Option, verb: str) -> None:
    decision = option.decision
    member = permissions.membership(studio, user)
    allowed = (permissions.may_manage(member, user, option.created_by_id)
               or permissions.may_manage(member, user, decision.created_by_id))
    if not allowed:
        raise Forbidden(f"only the option's proposer, the decision's creator or a studio admin "
                        f"can {verb} it ({OPTION_RULE})")
    if decision.closed:
        raise Conflict(f"the decision is closed: its options can no longer change "
                       f"({OPTION_RULE})")
    if option_has_votes(option):
        raise Conflict(f"someone has voted on the option “{option.title}”, so it stays as it is "
                       f"({OPTION_RULE})")


def find_option(decision: Decision, title: str) -> Option:
    option = db.session.scalar(select(Option).where(
        Option.decision_id == decision.id, Option.title == (title or "").strip(),
        Option.deleted_at.is_(None)).limit(1))
    if option is None:
        raise NotFound(f"no option titled '{title}' on this decision",
                       errors=[{"param": "option_title", "message": "no such option"}])
    return option


def rename_option(studio: Studio, user: User, option: Option, new_title: str) -> Option:
    _check_option_change(studio, user, option, "rename")
    if option.starts_at is not None:
        raise Conflict("a time slot's title is its time: delete it and add the slot you mean "
                       "with add_slot")
    title = decisions.option_titles([new_title])[0] if new_title.strip() else ""
    if not title:
        raise Invalid("new_title is required", errors=[{"param": "new_title",
                                                        "message": "is required"}])
    if len(title) > decisions.OPTION_MAX:
        raise Invalid("new_title too long", errors=[{"param": "new_title",
                                                     "message": f"at most {decisions.OPTION_MAX}"}])
    before = revisions.snapshot("option", option)
    try:
        with db.session.begin_nested():
            option.title = title
            db.session.flush()
    except IntegrityError:
        option.title = before["title"]
        raise Conflict(f"an option titled '{title}' already exists on this decision") from None
    revisions.record(studio, user, "option", option, "edit", before,
                     revisions.snapshot("option", option))
    return option


# Studios ---------------------------------------------------------------------------------------

def _require_admin(studio: Studio, user: User) -> None:
    if not permissions.is_admin(permissions.membership(studio, user)):
        raise Forbidden("only studio admins can delete or restore a studio")


def request_studio_deletion(studio: Studio, user: User) -> Studio:
    _require_admin(studio, user)
    if studio.deletion_requested_at is not None:
        raise Conflict("deletion was already requested: confirm it with "
                       "confirm_studio_deletion or cancel it with cancel_studio_deletion")
    studio.deletion_requested_at = utcnow()
    studio.deletion_requested_by_id = user.id
    revisions.record(studio, user, "studio", studio, "delete_requested")
    return studio


def cancel_studio_deletion(studio: Studio, user: User) -> Studio:
    _require_admin(studio, user)
    if studio.deletion_requested_at is None:
        raise Conflict("no deletion was requested for this studio")
    studio.deletion_requested_at = None
    studio.deletion_requested_by_id = None
    revisions.record(studio, user, "studio", studio, "delete_cancelled")
    return studio


def confirm_studio_deletion(studio: Studio, user: User, handle: str) -> Studio:
    _require_admin(studio, user)
    if studio.deletion_requested_at is None:
        raise Conflict("request the deletion first (request_studio_deletion), then confirm it")
    if (handle or "").strip().lower() != studio.handle:
        raise Invalid("type the studio's handle to confirm",
                      errors=[{"param": "handle", "message": f"must be '{studio.handle}'"}])
    studio.deleted_at = utcnow()
    studio.deleted_by_id = user.id
    revisions.record(studio, user, "studio", studio, "delete",
                     after={"deleted_at": studio.deleted_at.isoformat(),
                            "restorable_until": (studio.deleted_at
                                                 + restore_window.studio_grace()).isoformat()})
    return studio


def studio_restorable_until(studio: Studio) -> datetime | None:
    if studio.deleted_at is None:
        return None
    return studio.deleted_at + restore_window.studio_grace()


def restore_studio(studio: Studio, user: User) -> Studio:
    _require_admin(studio, user)
    until = studio_restorable_until(studio)
    if until is None:
        raise Conflict("this studio is not deleted")
    if until <= utcnow():
        raise NotFound(f"no studio '{studio.handle}'")
    before = studio.deleted_at.isoformat() if studio.deleted_at else None
    studio.deleted_at = None
    studio.deleted_by_id = None
    studio.deletion_requested_at = None
    studio.deletion_requested_by_id = None
    revisions.record(studio, user, "studio", studio, "restore", before={"deleted_at": before})
    return studio


def studio_gone(studio: Studio, user: User | None, page: str) -> NotFound | None:
    """None when the studio may be shown on ``page`` to this caller; else the 404 to raise.

    A deleted studio answers 404 everywhere; during the grace period its admins still reach
    its settings page, where restore_studio is offered."""
    if studio.deleted_at is None:
        return None
    until = studio_restorable_until(studio)
    assert until is not None
    admin = permissions.is_admin(permissions.membership(studio, user))
    if admin and until > utcnow():
        if page == "studio_settings":
            return None
        link = f"/studios/{studio.handle}/settings"
        deleted_at, until_at = restore_window.stamp(studio.deleted_at), restore_window.stamp(until)
        return NotFound(f"the studio '{studio.handle}' was deleted at {deleted_at}; as its admin "
                        f"you can restore it until {until_at} at {link} (action restore_studio)",
                        link=link, deleted=True)
    return NotFound(f"no studio '{studio.handle}'")

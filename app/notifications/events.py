"""What an executed action means for inboxes, email and webhooks, written in the action's own
transaction.

Design (so that no notification is lost when a process dies): the rows are created by an
observer of the action path (``app.actions.observers``), which runs after the handler and the
change record and before the commit. Notifications, emails to send and webhook deliveries therefore
commit atomically with the change that caused them, or not at all; there is no second step that
a crash could skip. Only the *sending* of a webhook or an email happens later, from the durable
rows, through the job queue (``webhooks``, ``mailing``). Each notification goes to the channels
its recipient chose (``notify``).

Which items an action created or edited is read from the session itself: a flush listener
notes new notes (and comments), decisions and commitments, and edits of their text, as the
handler flushes them. The actor is the caller of the action.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import event, inspect, select
from sqlalchemy.orm import Session

from app.actions import Action, Context, Result
from app.actions.observers import observe
from app.extensions import db
from app.models import Membership, Note, Studio, User
from app.models.collab import Commitment, Decision
from app.notifications import inbox, webhooks
from app.notifications.notify import notify
from app.services import items
from app.services.mentions import handles_in

QUIET: set[str] = set()  # actions that are nobody's news (managing one's own inbox, webhooks)
_TOUCHED = "harmonic.notifications.touched"  # Session.info: {id(obj): (obj, is_new)}
_TEXT = {Note: ("title", "text"), Decision: ("question", "description"),
         Commitment: ("title", "description")}


# Tracking what the handler wrote -------------------------------------------------------------

@event.listens_for(Session, "after_flush")
def _track(session: Session, _context: Any) -> None:
    touched: dict[int, tuple[Any, bool]] | None = None
    for obj in session.new:
        if type(obj) in _TEXT:
            touched = session.info.setdefault(_TOUCHED, {})
            touched[id(obj)] = (obj, True)
    for obj in session.dirty:
        fields = _TEXT.get(type(obj))
        if fields and any(inspect(obj).attrs[f].history.has_changes() for f in fields):
            touched = session.info.setdefault(_TOUCHED, {})
            touched.setdefault(id(obj), (obj, False))


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_soft_rollback")
def _forget(session: Session, *_: Any) -> None:
    session.info.pop(_TOUCHED, None)


# The observer --------------------------------------------------------------------------------

@observe
def on_action(ctx: Context, act: Action, result: Result) -> None:
    db.session.flush()  # whatever the handler left pending passes through ``_track`` now
    touched = list(db.session.info.pop(_TOUCHED, {}).values())
    if ctx.user is None or ctx.studio is None or not act.effect.writes or act.name in QUIET:
        return
    drafts = _drafts(ctx.studio, ctx.user, touched) if touched else []
    notify(drafts)
    webhooks.stage(ctx.studio, ctx.user, act.name, ctx.path, result.location,
                   act.changed(ctx, result), result.message)


def _drafts(studio: Studio, actor: User, touched: list[tuple[Any, bool]]) -> list[inbox.Draft]:
    members = dict(db.session.execute(
        select(User.handle, User.id).join(Membership, Membership.user_id == User.id)
        .where(Membership.studio_id == studio.id)).all())
    levels = inbox.levels_of(list(members.values()), studio.id)
    drafts: list[inbox.Draft] = []

    def add(user_id: uuid.UUID, kind: str, key: str, text: str, path: str) -> None:
        if user_id != actor.id and inbox.wants(levels.get(user_id, "none"), kind):
            drafts.append(inbox.Draft(user_id, kind, key, text, path, studio.id, actor.id))

    for obj, is_new in touched:
        item_type, path, title, parent = _describe(studio, obj)
        key = f"{item_type}:{obj.short_id}"
        fields = _TEXT[type(obj)]
        for handle in sorted(handles_in(*(getattr(obj, f) for f in fields))):
            if handle in members:  # only people who can see the studio hear of it
                add(members[handle], "mention", f"mention:{key}",
                    f"@{actor.handle} mentioned you in “{title}”", path)
        if not is_new:
            continue
        if parent is not None:
            owner = getattr(parent[1], "created_by_id", None)
            if owner is not None:
                add(owner, "reply", f"reply:{key}",
                    f"@{actor.handle} commented on your {parent[0]} "
                    f"“{items.title_of(parent[0], parent[1])}”", path)
        elif item_type in ("decision", "commitment"):
            for user_id in members.values():
                add(user_id, f"new_{item_type}", f"new:{key}",
                    f"@{actor.handle} started the {item_type} “{title}”", path)
    return drafts


def _describe(studio: Studio, obj: Any) -> tuple[str, str, str, tuple[str, Any] | None]:
    """(type, page path, title, the commented item as (type, item) when ``obj`` is a comment)."""
    if isinstance(obj, Decision):
        return "decision", items.path_of(studio, "decision", obj), obj.question, None
    if isinstance(obj, Commitment):
        return "commitment", items.path_of(studio, "commitment", obj), obj.title, None
    if obj.commentable_type and obj.commentable_id:
        parent = items.get(obj.commentable_type, obj.commentable_id)
        if parent is not None:
            # The comment itself: its entry opens at it, not at the top of the item.
            path = f"{items.path_of(studio, obj.commentable_type, parent)}#comment-{obj.short_id}"
            return "comment", path, items.title_of(obj.commentable_type, parent), \
                (obj.commentable_type, parent)
    return "note", items.path_of(studio, "note", obj), obj.title, None

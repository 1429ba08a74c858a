"""What fires rules: events (a decision closed, a note created, a mention) and schedules.

Events are heard where they happen, in the causing transaction:

- an action that writes (any door) — the observer of the action path reads the notes,
  decisions and commitments the handler flushed: a new note (not a comment) is
  ``note_created``; each ``@handle`` of a studio member in a new item's text is ``mention``;
- a close (``app.services.closing``): at its deadline the worker's sweep claims it and fires
  ``decision_closed`` at once (depth 0: nobody caused it); a close by an action (a person's,
  or an automation's) is kept until that action's observer runs, which knows who acted and so
  the depth.

Schedules: every worker calls ``due_schedules`` every few seconds; a rule's trigger key is the
minute it is due (its period), so any number of workers fire it once per period.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actions import Action, Context, Result
from app.actions.observers import observe
from app.automations import firing, schedule
from app.db import writing
from app.extensions import db
from app.models import Membership, Note, Studio, User
from app.models.automations import Automation
from app.models.base import utcnow
from app.models.collab import Commitment, Decision
from app.notifications import outcome
from app.services import closing, items
from app.services.mentions import handles_in

_NEW = "harmonic.automations.new"  # Session.info: items the handler created, by id()
_CLOSES = "harmonic.automations.closes"  # Session.info: closes by an action, for its observer
_TEXT = {Note: ("title", "text"), Decision: ("question", "description"),
         Commitment: ("title", "description")}


@sa_event.listens_for(Session, "after_flush")
def _track(session: Session, _context: Any) -> None:
    for obj in session.new:
        if type(obj) in _TEXT:
            session.info.setdefault(_NEW, {})[id(obj)] = obj


@sa_event.listens_for(Session, "after_commit")
@sa_event.listens_for(Session, "after_soft_rollback")
def _forget(session: Session, *_: Any) -> None:
    session.info.pop(_NEW, None)
    session.info.pop(_CLOSES, None)


@closing.on_close
def on_close(moment: closing.Moment) -> None:
    if moment.actor is None:  # its deadline closed it: nobody's effect caused it
        _closed(moment, 0)
    else:
        db.session.info.setdefault(_CLOSES, []).append(moment)


def _closed(moment: closing.Moment, depth: int) -> None:
    if moment.kind != "decision":
        return
    rules = firing.live_rules(moment.studio.id, "event", "decision_closed")
    if not rules:
        return
    item = moment.item
    data = {"event": "decision_closed", "studio": moment.studio.handle,
            "decision": item.short_id, "question": item.question, "path": moment.path,
            "outcome": outcome(moment),
            "closed_by": moment.actor.handle if moment.actor is not None else None,
            "at": moment.at.isoformat()}
    for rule in rules:
        firing.fire(rule, f"decision_closed:{item.short_id}",
                    f"the decision “{item.question}” closed", data, depth)


@observe
def on_action(ctx: Context, act: Action, result: Result) -> None:
    db.session.flush()  # what the handler left pending passes through ``_track`` now
    new = list(db.session.info.pop(_NEW, {}).values())
    closes = db.session.info.pop(_CLOSES, [])
    if ctx.studio is None or not act.effect.writes:
        return
    depth = firing.depth_of(ctx.identity)
    for moment in closes:
        _closed(moment, depth)
    if not new:
        return
    creating = firing.live_rules(ctx.studio.id, "event", "note_created")
    mentioning = firing.live_rules(ctx.studio.id, "event", "mention")
    if not creating and not mentioning:
        return
    by = ctx.user.handle if ctx.user is not None else None
    members = set(db.session.scalars(select(User.handle).join(
        Membership, Membership.user_id == User.id).where(Membership.studio_id == ctx.studio.id)))
    for obj in new:
        kind = _kind(obj)
        if kind is None:
            continue
        path = items.path_of(ctx.studio, kind, obj)
        title = items.title_of(kind, obj)
        if kind == "note" and not getattr(obj, "commentable_type", None):
            data = {"event": "note_created", "studio": ctx.studio.handle, "note": obj.short_id,
                    "title": obj.title, "text": obj.text, "path": path, "by": by}
            for rule in creating:
                firing.fire(rule, f"note_created:{obj.short_id}",
                            f"the note “{title}” was created", data, depth)
        for handle in sorted(handles_in(*(getattr(obj, f) or "" for f in _TEXT[type(obj)]))):
            if handle not in members:
                continue
            data = {"event": "mention", "studio": ctx.studio.handle, "handle": handle,
                    "item": obj.short_id, "title": title, "path": path, "by": by}
            for rule in mentioning:
                firing.fire(rule, f"mention:{obj.short_id}:{handle}",
                            f"@{handle} was mentioned in “{title}”", data, depth)


def _kind(obj: Any) -> str | None:
    if isinstance(obj, Decision):
        return "decision"
    if isinstance(obj, Commitment):
        return "commitment"
    if isinstance(obj, Note):
        return "note"
    return None


def due_schedules(now: datetime | None = None) -> int:
    """Fire every scheduled rule whose minute has come (once per period, however many workers
    call this); how many this call fired."""
    now = now or utcnow()
    fired = 0
    rules = db.session.execute(select(Automation.id, Automation.schedule, Automation.created_at,
                                      Studio.timezone)
                               .join(Studio, Studio.id == Automation.studio_id)
                               .where(Automation.trigger == "schedule",
                                      Automation.paused_at.is_(None))).all()
    for rule_id, text, created, tz in rules:
        try:
            cron = schedule.parse(text or "")
        except Exception:  # stored before a stricter parser: never fires, its page says why
            continue
        minute = schedule.due(cron, tz, now, created)
        if minute is None:
            continue
        with writing():
            rule = db.session.get(Automation, rule_id)
            if rule is None:
                continue
            local = minute.astimezone(schedule.zone(tz))
            fired += firing.fire(rule, f"schedule:{minute.isoformat()}",
                                 f"its schedule ({text}) at {local:%Y-%m-%d %H:%M} "
                                 f"{local.tzname()}", {"event": "schedule",
                                                       "studio": rule.studio.handle,
                                                       "at": minute.isoformat()}) is not None
    return fired

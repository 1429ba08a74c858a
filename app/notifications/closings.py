"""What a close and a "closes in 24 hours" reminder mean for inboxes and webhooks.

``app.services.closing`` decides, once across every process, that a decision or commitment has
closed (by a person, by reaching its limit, or by its deadline, which the worker's ``sweep``
acts on) or that its reminder is due, and calls these listeners in that claiming transaction:

- a close records the change of the item's page (``app.core.changes``), so its subscribers
  hear of it whoever closed it;
- a close tells the studio's members (except whoever closed it) with its outcome — a
  decision's winning option, a commitment's critical mass met or missed — and stages one
  ``decision_closed`` / ``commitment_closed`` webhook delivery per webhook that hears of the
  studio, as any action's deliveries are staged;
- a reminder tells the members who have not voted (a decision) or joined (a commitment).

Both go through ``notify``, the one call every notification takes.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from app.core import changes
from app.extensions import db
from app.models import Membership
from app.models.collab import CommitmentParticipant
from app.notifications import inbox, webhooks
from app.notifications.notify import notify, send_committed
from app.services import closing, commitments, deadlines, decisions, items


def _listening(moment: closing.Moment, leave_out: Any = None) -> list[uuid.UUID]:
    """The studio's members who hear of everything in it, less ``leave_out`` (a subquery of
    user ids)."""
    query = select(Membership.user_id).where(Membership.studio_id == moment.studio.id)
    if leave_out is not None:
        query = query.where(Membership.user_id.not_in(leave_out))
    members = list(db.session.scalars(query))
    levels = inbox.levels_of(members, moment.studio.id)
    return [uid for uid in members if inbox.wants(levels[uid], "deadline")]


def outcome(moment: closing.Moment) -> str:
    if moment.kind == "decision":
        return inbox.outcome(moment.item)
    state = commitments.progress(moment.item)
    met = "met" if state.achieved else "missed"
    return f"critical mass {met} ({state.joined} of {state.critical_mass} joined)"


@closing.on_close
def told_of_close(moment: closing.Moment) -> None:
    # The page changed (it shows the outcome now): its subscribers hear of it after the commit.
    changes.record(moment.path)
    title = items.title_of(moment.kind, moment.item)
    how = (f" (@{moment.actor.handle} closed it)" if moment.actor is not None
           else " at its deadline")
    text = f"{moment.kind.title()} “{title}” closed{how}: {outcome(moment)}"
    actor = moment.actor.id if moment.actor is not None else None
    notify([inbox.Draft(uid, f"{moment.kind}_closed", f"closed:{moment.kind}:"
                        f"{moment.item.short_id}", text, moment.path, moment.studio.id, actor)
            for uid in _listening(moment) if uid != actor])
    webhooks.stage(moment.studio, moment.actor, f"{moment.kind}_closed", moment.path,
                   moment.path, [changes.page_uri(moment.path)], text)


@closing.on_reminder
def remind(moment: closing.Moment) -> None:
    item = moment.item
    if moment.kind == "decision":  # every kind, anonymous ones too: who took part is not secret
        done: Any = decisions.took_part(item)
        todo = "vote"
    else:
        done = select(CommitmentParticipant.user_id).where(
            CommitmentParticipant.commitment_id == item.id)
        todo = "join"
    left = deadlines.time_left((item.deadline - moment.at).total_seconds())
    text = (f"{moment.kind.title()} “{items.title_of(moment.kind, item)}” closes in {left}: "
            f"you have not {'voted' if todo == 'vote' else 'joined'} yet")
    # The deadline is part of the key: a moved deadline reminds again (once per deadline).
    key = f"deadline:{moment.kind}:{item.short_id}:{int(item.deadline.timestamp())}"
    notify([inbox.Draft(uid, "deadline", key, text, moment.path, moment.studio.id)
            for uid in _listening(moment, done)])


def sweep() -> tuple[int, int]:
    """Act on the closes and reminders that are due, then enqueue the webhook deliveries and
    emails they staged (their transactions have committed). Run by every worker, every few
    seconds."""
    done = closing.sweep()
    send_committed()
    return done

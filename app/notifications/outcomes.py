"""What a decision's outcome means for inboxes, email and webhooks.

``app.services.outcomes`` calls these listeners in the transaction that causes each moment:

- an outcome written tells the decision's voters and its creator (``decision_outcome``, once
  per decision: an edit does not tell them again) and each member it @mentions (``mention``,
  once per person), never the person who wrote it;
- a review date that came (claimed once across every process by the workers' ``sweep``) tells
  its people, the decision's creator, its voters and the outcome's author
  (``decision_review``, once per review date), and stages one ``decision_review`` delivery per
  webhook that hears of the studio.

Only the studio's current members are told, at the levels they chose, through ``notify`` as
every notification is.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import select

from app.core import changes
from app.extensions import db
from app.models import Membership, User
from app.models.collab import Decision
from app.notifications import inbox, webhooks
from app.notifications.notify import notify, send_committed
from app.services import decisions, outcomes
from app.services.mentions import handles_in


def _members(studio_id: uuid.UUID, kind: str, wanted: Iterable[uuid.UUID]) -> list[uuid.UUID]:
    """Those of ``wanted`` who are members of the studio and hear of ``kind`` at their level,
    in a stable order."""
    ids = sorted(set(wanted))
    found = list(db.session.scalars(select(Membership.user_id).where(
        Membership.studio_id == studio_id, Membership.user_id.in_(ids)))) if ids else []
    levels = inbox.levels_of(found, studio_id)
    return [uid for uid in ids if uid in levels and inbox.wants(levels[uid], kind)]


def _voters(decision: Decision) -> list[uuid.UUID]:
    return list(db.session.scalars(decisions.took_part(decision)))


def _picked(decision: Decision) -> str:
    shown = outcomes.shown(decision, [])
    if shown is None or shown.option_title is None:
        return ""
    return f" (“{shown.option_title}”)"


@outcomes.on_written
def told_of_outcome(written: outcomes.Written) -> None:
    decision, actor = written.decision, written.actor
    key = f"decision:{decision.short_id}"
    drafts = []
    if written.first:
        text = (f"@{actor.handle} wrote the outcome of “{decision.question}”"
                f"{_picked(decision)}")
        drafts += [inbox.Draft(uid, "decision_outcome", f"outcome:{key}", text, written.path,
                               written.studio.id, actor.id)
                   for uid in _members(written.studio.id, "decision_outcome",
                                       [*_voters(decision), decision.created_by_id])
                   if uid != actor.id]
    handles = handles_in(decision.outcome_statement)
    if handles:
        mentioned = dict(db.session.execute(select(User.id, User.handle)
                                            .where(User.handle.in_(sorted(handles)))).all())
        text = f"@{actor.handle} mentioned you in the outcome of “{decision.question}”"
        drafts += [inbox.Draft(uid, "mention", f"mention:outcome:{key}", text, written.path,
                               written.studio.id, actor.id)
                   for uid in _members(written.studio.id, "mention", mentioned)
                   if uid != actor.id]
    notify(drafts)


@outcomes.on_review
def told_of_review(review: outcomes.Review) -> None:
    decision = review.decision
    people = [*_voters(decision), decision.created_by_id]
    if decision.outcome_by_id is not None:
        people.append(decision.outcome_by_id)
    assert decision.outcome_review_at is not None
    text = f"Time to review the outcome of “{decision.question}”{_picked(decision)}"
    # The date is part of the key: a moved review date reminds again (once per date).
    key = (f"review:decision:{decision.short_id}:"
           f"{int(decision.outcome_review_at.timestamp())}")
    notify([inbox.Draft(uid, "decision_review", key, text, review.path, review.studio.id)
            for uid in _members(review.studio.id, "decision_review", people)])
    webhooks.stage(review.studio, None, "decision_review", review.path, review.path,
                   [changes.page_uri(review.path)], text)


def sweep() -> int:
    """Tell the review dates that came, then enqueue the emails and webhook deliveries they
    staged (their transactions have committed). Run by every worker, every few seconds."""
    told = outcomes.sweep()
    send_committed()
    return told

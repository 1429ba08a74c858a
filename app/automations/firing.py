"""The one firing gate every trigger passes (an event, a schedule, an inbound webhook, a person
pressing "Run now").

``fire`` runs in the causing transaction (an action's, a close's, the worker's for a schedule,
the inbound call's) and inserts one ``AutomationFiring`` row keyed by (rule, trigger key). The
pair is unique, so a rule fires once per trigger across any number of transactions and
processes: a second insert of the same key fails in its savepoint and fires nothing. The
effect itself is carried out later by a worker from that row (``effects``), so it commits with
its cause or not at all.

Two more guards, both recorded as firings refused with the reason:

- depth: a trigger caused by an automation's own effect carries that firing's depth plus one;
  past ``AUTOMATIONS_MAX_DEPTH`` it is refused, so a rule that triggers itself stops;
- rate: a rule that has fired ``AUTOMATIONS_MAX_PER_MINUTE`` times in the last minute is paused
  (nothing fires until an admin resumes it) and its owner is told.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.automations import settings
from app.extensions import db
from app.models.automations import Automation, AutomationFiring
from app.models.base import utcnow
from app.notifications import Draft, tell


def path_of(rule: Automation) -> str:
    return f"/studios/{rule.studio.handle}/automations/{rule.short_id}"


def fire(rule: Automation, key: str, words: str, data: dict[str, Any],
         depth: int = 0) -> AutomationFiring | None:
    """Record that ``rule`` fired for the trigger ``key`` (described by ``words``, with
    ``data``), in the current transaction; None when it already fired for that key or it is
    paused. A firing past the depth bound is recorded as refused."""
    if rule.paused_at is not None:
        return None
    bound = settings.get_int("AUTOMATIONS_MAX_DEPTH")
    row = AutomationFiring(automation_id=rule.id, trigger_key=key[:200], trigger=words,
                           data=data, depth=depth, status="pending", outcome="")
    if depth > bound:
        row.status, row.finished_at = "refused", utcnow()
        row.outcome = (f"not run: caused by automations {depth} deep, past the bound of "
                       f"{bound}")
    row.assign_ids()
    try:
        with db.session.begin_nested():  # a savepoint: a taken key undoes only this insert
            db.session.add(row)
            db.session.flush()
    except IntegrityError:
        return None
    if row.status == "pending":
        _check_rate(rule, row)
    return row


def _check_rate(rule: Automation, row: AutomationFiring) -> None:
    """Pause ``rule`` when this firing is one too many for the last minute (it is refused)."""
    limit = settings.get_int("AUTOMATIONS_MAX_PER_MINUTE")
    recent = db.session.scalar(select(func.count()).select_from(AutomationFiring).where(
        AutomationFiring.automation_id == rule.id, AutomationFiring.status != "refused",
        AutomationFiring.fired_at > utcnow() - timedelta(minutes=1))) or 0
    if recent <= limit:
        return
    why = f"it fired more than {limit} times in a minute"
    row.status, row.finished_at = "refused", utcnow()
    row.outcome = f"not run: the automation was paused because {why}"
    rule.paused_at, rule.paused_why = utcnow(), why
    db.session.flush()
    tell([Draft(rule.owner_id, "automation", f"automation_paused:{rule.short_id}:"
                  f"{int(rule.paused_at.timestamp())}",
                  f"Your automation “{rule.name}” was paused: {why}. Resume it on its page "
                  "when it is fixed.", path_of(rule), rule.studio_id)])


def depth_of(identity: Any) -> int:
    """The depth a trigger caused by ``identity`` has: one more than the firing whose effect
    acts (an automation's action, or a step of a workflow run an automation started); 0 for a
    person, an agent, an app or a deadline."""
    if identity is None:
        return 0
    run_id: uuid.UUID | None = getattr(identity, "run_id", None)
    if run_id is not None:  # a step of a run (whose kind is its starter's): a run a firing
        # started has the firing's id (``effects``), known before the run's first step
        started = db.session.scalar(select(AutomationFiring.depth).where(
            AutomationFiring.id == run_id))
        return 0 if started is None else int(started) + 1
    if getattr(identity, "kind", None) == "automation":
        return int(identity.depth)
    return 0


def live_rules(studio_id: uuid.UUID, trigger: str, event: str | None = None) -> list[Automation]:
    query = select(Automation).where(Automation.studio_id == studio_id,
                                     Automation.trigger == trigger,
                                     Automation.paused_at.is_(None))
    if event is not None:
        query = query.where(Automation.event == event)
    return list(db.session.scalars(query))

"""Carrying out a firing's effect, once, from its row (every worker, every few seconds).

Each pending firing is claimed by one conditional UPDATE (pending → running) that exactly one
transaction wins, then its effect runs with the rule owner's rights:

- ``workflow``: a run of a workflow of the catalog, started for the owner, its inputs the
  event's fields the workflow declares; the run's id is the firing's, so a start retried after
  a crash is the same run, and what its steps cause is traced back here (the depth);
- ``action``: one action on one page, run through the same door as any caller
  (``app.core.dispatch``: the one authorization path, the page's rules for the owner) as an
  identity of kind ``automation`` carrying the depth; the firing records what it did;
- ``notify``: the studio's members are told (``app.notifications.notify``);
- ``webhook``: one signed delivery to one of the studio's webhooks, sent and retried as every
  delivery; its body carries the automation and the depth.

``{{ name }}`` in a text or a parameter is replaced by the event's field ``name``. The outcome
(done, or failed with the reason) is written back to the firing.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

from sqlalchemy import select, update

from app.automations import firing
from app.core.dispatch import dispatch
from app.core.identity import Identity, act_as
from app.db import writing
from app.extensions import db
from app.models import Membership
from app.models.automations import Automation, AutomationFiring
from app.models.base import utcnow
from app.notifications import Draft, send_committed, stage_to, tell
from app.services.errors import Invalid
from app.workflows import entries, start_compiled

log = logging.getLogger("harmonic.automations")
BATCH = 50
_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def fill(value: Any, data: dict[str, Any]) -> Any:
    """``value`` with ``{{ name }}`` replaced by the event's ``name`` (in every string inside)."""
    if isinstance(value, str):
        return _FIELD.sub(lambda m: "" if data.get(m.group(1)) is None
                          else str(data[m.group(1)]), value)
    if isinstance(value, dict):
        return {k: fill(v, data) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, data) for v in value]
    return value


def perform_pending() -> int:
    """Carry out every pending firing this worker claims; how many it carried out."""
    ids = list(db.session.scalars(select(AutomationFiring.id).where(
        AutomationFiring.status == "pending").order_by(AutomationFiring.fired_at).limit(BATCH)))
    done = 0
    for ident in ids:
        with writing():
            won = db.session.execute(update(AutomationFiring).where(
                AutomationFiring.id == ident, AutomationFiring.status == "pending")
                .values(status="running").execution_options(synchronize_session=False))
        if int(won.rowcount or 0) != 1:  # type: ignore[attr-defined]
            continue
        perform(ident)
        done += 1
    send_committed()
    return done


def perform(ident: uuid.UUID) -> None:
    """Run one claimed firing's effect and record its outcome."""
    row = db.session.get_one(AutomationFiring, ident)
    rule = db.session.get_one(Automation, row.automation_id)
    status, outcome, run_id = "done", "", None
    try:
        if rule.effect == "workflow":
            run_id, outcome = _workflow(rule, row)
        elif rule.effect == "action":
            outcome = _action(rule, row)
        elif rule.effect == "notify":
            outcome = _notify(rule, row)
        else:
            outcome = _webhook(rule, row)
    except Exception as exc:  # the outcome is the firing's record; the worker goes on
        status = "failed"
        outcome = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, Invalid) and not hasattr(exc, "message"):
            log.exception("automation %s failed", rule.short_id)
    finally:
        act_as(None)
    with writing():
        db.session.execute(update(AutomationFiring).where(AutomationFiring.id == ident).values(
            status=status, outcome=outcome[:2000], run_id=run_id, finished_at=utcnow())
            .execution_options(synchronize_session=False))


def acting_as(rule: Automation, row: AutomationFiring) -> Identity:
    """The owner, as an automation one step deeper than this firing."""
    return Identity(user_id=rule.owner_id, scopes=("read", "write"), via="automation",
                    kind="automation", depth=row.depth + 1)


def _workflow(rule: Automation, row: AutomationFiring) -> tuple[uuid.UUID, str]:
    name = str(rule.config.get("workflow") or "")
    entry = next((e for e in entries() if e.name == name), None)
    if entry is None or not entry.valid or entry.compiled is None:
        raise Invalid(f"there is no valid workflow named {name!r}")
    declared = set((entry.compiled.get("workload") or {}).keys())
    inputs = {k: v for k, v in row.data.items() if k in declared}
    inputs.update(fill(rule.config.get("inputs") or {}, row.data))
    run_id = start_compiled(entry.compiled, inputs, rule.owner_id, acting_as(rule, row),
                            run_id=row.id)
    return run_id, f"started run {run_id.hex[:8]} of {name}"


def _action(rule: Automation, row: AutomationFiring) -> str:
    name = str(rule.config.get("action") or "")
    path = str(rule.config.get("path") or f"/studios/{rule.studio.handle}").rstrip("/")
    params = fill(rule.config.get("params") or {}, row.data)
    answer = dispatch("POST", f"{path}/actions/{name}", acting_as(rule, row), json=params,
                      accept="application/json")
    body = answer.json if isinstance(answer.json, dict) else {}
    if answer.status >= 400:
        raise Invalid(f"{name} was refused ({answer.status}): "
                      f"{body.get('error') or body.get('message') or answer.text[:300]}")
    where = body.get("location")
    return f"ran {name} as @{rule.owner.handle}" + (f": {where}" if where else "")


def _notify(rule: Automation, row: AutomationFiring) -> str:
    text = fill(str(rule.config.get("text") or rule.name), row.data)
    with writing():
        members = list(db.session.scalars(select(Membership.user_id).where(
            Membership.studio_id == rule.studio_id)))
        path = str(row.data.get("path") or firing.path_of(rule))
        tell([Draft(uid, "automation", f"automation:{row.short_id}", text, path, rule.studio_id)
              for uid in members])
        told = len(members)
    return f"told {told} member{'s' if told != 1 else ''}"


def _webhook(rule: Automation, row: AutomationFiring) -> str:
    with writing():
        body = {"automation": {"id": rule.short_id, "name": rule.name, "depth": row.depth + 1},
                "trigger": row.trigger, "data": json.loads(json.dumps(row.data, default=str))}
        sent = stage_to(rule.studio, str(rule.config.get("webhook") or ""), "automation", body)
    return f"delivery {sent} staged"

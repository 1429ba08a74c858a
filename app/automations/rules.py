"""Writing and reading a studio's automations: creating one (each field checked, with the
parameter it belongs to), finding one, its firings, pressing "Run now", and an inbound
webhook call, verified by its signature before anything fires."""

from __future__ import annotations

import hmac
import json
import secrets
import time
import uuid
from typing import Any

from sqlalchemy import delete as sa_delete
from sqlalchemy import select

from app.actions import ballot_secrecy
from app.automations import firing, schedule, settings
from app.extensions import db
from app.models import Studio, User
from app.models.automations import EFFECTS, EVENTS, TRIGGERS, Automation, AutomationFiring
from app.models.base import utcnow
from app.notifications import digest
from app.services.errors import Forbidden, Invalid, NotFound, invalid_param

LOG_SIZE = 50
SIGNATURE_HEADER = "X-Harmonic-Signature"
TIMESTAMP_HEADER = "X-Harmonic-Timestamp"


def create(studio: Studio, owner: User, p: dict[str, Any]) -> Automation:
    """A new rule from the create_automation parameters (Invalid names the wrong one)."""
    trigger, effect = p.get("trigger"), p.get("effect")
    if trigger not in TRIGGERS:
        raise invalid_param("trigger", f"one of {', '.join(TRIGGERS)}")
    if effect not in EFFECTS:
        raise invalid_param("effect", f"one of {', '.join(EFFECTS)}")
    rule = Automation(studio_id=studio.id, owner_id=owner.id, name=p["name"].strip(),
                      trigger=trigger, effect=effect, config={}, paused_why="")
    if trigger == "event":
        if p.get("event") not in EVENTS:
            raise invalid_param("event", f"say which event: {', '.join(EVENTS)}")
        rule.event = p["event"]
    elif trigger == "schedule":
        schedule.parse(p.get("schedule") or "")  # Invalid on the schedule parameter
        rule.schedule = " ".join((p.get("schedule") or "").split())
    elif trigger == "webhook":
        rule.secret = "whsec_" + secrets.token_urlsafe(32)
    rule.config = _config(effect, p)
    rule.assign_ids()
    db.session.add(rule)
    db.session.flush()
    return rule


def _config(effect: str, p: dict[str, Any]) -> dict[str, Any]:
    if effect == "workflow":
        if not p.get("workflow"):
            raise invalid_param("workflow", "name the workflow to run")
        return {"workflow": p["workflow"].strip(), "inputs": p.get("inputs") or {}}
    if effect == "action":
        if not p.get("do"):
            raise invalid_param("do", "name the action to run")
        if ballot_secrecy.is_ballot(p["do"].strip()):
            # A rule keeps its parameters with its owner: a ballot is cast by its voter.
            raise invalid_param("do", "a ballot is cast by its voter, not by an automation")
        path = (p.get("at") or "").strip()
        if path and not path.startswith("/"):
            raise invalid_param("at", "a page path such as /studios/team/note")
        return {"action": p["do"].strip(), "path": path, "params": p.get("params") or {}}
    if effect == "notify":
        if not (p.get("text") or "").strip():
            raise invalid_param("text", "write what the members are told")
        return {"text": p["text"].strip()}
    if not p.get("webhook"):
        raise invalid_param("webhook", "name one of the studio's webhooks (its id)")
    return {"webhook": p["webhook"].strip().lower()}


def of_studio(studio: Studio) -> list[Automation]:
    return list(db.session.scalars(select(Automation).where(Automation.studio_id == studio.id)
                                   .order_by(Automation.created_at)))


def find(studio: Studio, ident: str) -> Automation:
    rule = db.session.scalar(select(Automation).where(
        Automation.studio_id == studio.id, Automation.short_id == (ident or "").strip().lower()))
    if rule is None:
        raise NotFound(f"no automation '{ident}'")
    return rule


def firings(rule: Automation, limit: int = LOG_SIZE) -> list[AutomationFiring]:
    return list(db.session.scalars(select(AutomationFiring).where(
        AutomationFiring.automation_id == rule.id)
        .order_by(AutomationFiring.fired_at.desc()).limit(limit)))


def run_now(rule: Automation, by: User, depth: int = 0) -> AutomationFiring:
    """Fire ``rule`` by hand (each press is its own trigger)."""
    if rule.paused_at is not None:
        raise Invalid("the automation is paused: resume it first")
    row = firing.fire(rule, f"manual:{uuid.uuid4().hex}", f"run by hand by @{by.handle}",
                      {"event": "manual", "studio": rule.studio.handle, "by": by.handle},
                      depth)
    if row is None:  # (cannot happen: the key is new) kept so the caller never gets None
        raise Invalid("the automation did not fire")
    return row


def pause(rule: Automation, why: str) -> None:
    rule.paused_at, rule.paused_why = utcnow(), why


def resume(rule: Automation) -> None:
    rule.paused_at, rule.paused_why = None, ""


def receive(ident: str, headers: dict[str, str], body: bytes) -> AutomationFiring | None:
    """An inbound webhook call: fire the rule when ``X-Harmonic-Signature: sha256=<hex>`` is
    the HMAC of ``<X-Harmonic-Timestamp>.<body>`` with its secret and the timestamp is recent;
    Forbidden otherwise (the same refusal whatever was wrong). None: this exact call was
    already received (the signature is the trigger key, so a replay fires nothing)."""
    rule = db.session.scalar(select(Automation).where(
        Automation.short_id == (ident or "").strip().lower(), Automation.trigger == "webhook"))
    sent = (headers.get(SIGNATURE_HEADER) or "").strip()
    try:
        timestamp = int(headers.get(TIMESTAMP_HEADER) or "")
    except ValueError:
        timestamp = 0
    tolerance = settings.get_float("AUTOMATIONS_WEBHOOK_TOLERANCE")
    expected = f"sha256={digest(rule.secret, timestamp, body)}" if rule and rule.secret else ""
    if rule is None or not expected or abs(time.time() - timestamp) > tolerance \
            or not hmac.compare_digest(expected, sent):
        raise Forbidden("the signature does not match, or the call is too old")
    try:
        data = json.loads(body.decode("utf-8")) if body else {}
    except (UnicodeDecodeError, ValueError):
        data = {"body": body.decode("utf-8", "replace")[:10000]}
    if not isinstance(data, dict):
        data = {"body": data}
    # A call made by one of our automations' webhooks carries how deep it already is.
    caused = data.get("automation")
    depth = caused.get("depth") if isinstance(caused, dict) else None
    depth = depth if isinstance(depth, int) else 0
    return firing.fire(rule, f"webhook:{sent[7:]}", "a call to its webhook",
                       {**data, "event": "webhook", "studio": rule.studio.handle}, depth)


def delete(rule: Automation) -> None:
    db.session.execute(sa_delete(AutomationFiring).where(
        AutomationFiring.automation_id == rule.id))
    db.session.delete(rule)

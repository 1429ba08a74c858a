"""Pages: a studio's automations (the list, and the form that adds one), and one automation
with its firings (when, what triggered it, what it did, how it went)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from app.actions import Context
from app.automations import rules
from app.models.automations import EFFECTS, EVENTS, TRIGGERS
from app.web import loaders
from app.web.core_pages import STUDIO_SECTIONS, studio_nav
from app.web.pages import Page, page

bp = Blueprint("automations", __name__)

STUDIO_SECTIONS.append(("Automations", "automations"))

TRIGGER_WORDS = {"event": "When something happens", "schedule": "On a schedule",
                 "webhook": "When its web address is called", "manual": "Only by hand"}
EVENT_WORDS = {"decision_closed": "A decision closes", "note_created": "A note is written",
               "mention": "Someone is mentioned"}
EFFECT_WORDS = {"workflow": "Run a workflow", "action": "Do something as you",
                "notify": "Tell the members", "webhook": "Call one of the studio's webhooks"}
assert set(TRIGGER_WORDS) == set(TRIGGERS) and set(EVENT_WORDS) == set(EVENTS) \
    and set(EFFECT_WORDS) == set(EFFECTS)


def _admin(ctx: Context) -> bool:
    return ctx.member is not None and ctx.member.role == "admin"


def _words() -> dict[str, Any]:
    return {"trigger_words": TRIGGER_WORDS, "event_words": EVENT_WORDS,
            "effect_words": EFFECT_WORDS}


@page(bp, "studio_automations", "/studios/<handle>/automations",
      loaders.studio_page("studio_automations", "/automations"))
def studio_automations(ctx: Context) -> Page:
    return Page(ctx, f"Automations of {ctx.studio.name}", "automations/index",
                {"rules": rules.of_studio(ctx.studio), "admin": _admin(ctx), **_words()},
                nav=studio_nav(ctx) + [("Automations",
                                        f"/studios/{ctx.studio.handle}/automations")])


@loaders.joining
def _automation(user: Any, handle: str, rule_id: str, **_: Any) -> Context:
    ctx = loaders.studio_ctx("automation", user, handle)
    ctx.item = rules.find(ctx.studio, rule_id)
    ctx.path = f"/studios/{ctx.studio.handle}/automations/{ctx.item.short_id}"
    return ctx


@page(bp, "automation", "/studios/<handle>/automations/<rule_id>", _automation)
def automation_page(ctx: Context) -> Page:
    rule = ctx.item
    hook_url = (f"{ctx.base_url}/hooks/automations/{rule.short_id}"
                if rule.trigger == "webhook" else None)
    return Page(ctx, f"Automation: {rule.name}", "automations/show",
                {"rule": rule, "firings": rules.firings(rule), "hook_url": hook_url,
                 "admin": _admin(ctx), **_words()},
                nav=studio_nav(ctx) + [("Automations",
                                        f"/studios/{ctx.studio.handle}/automations")])

"""The automation actions (one registry, every door): create one, run it now, pause, resume
and delete it."""

from __future__ import annotations

from typing import Any

from app.actions import rules as access
from app.actions.effects import DESTRUCTIVE, IDEMPOTENT_WRITE, WRITE
from app.actions.registry import Context, Param, Result, action
from app.automations import firing, rules
from app.models.automations import EFFECTS, EVENTS, TRIGGERS


def _answer(ctx: Context, rule: Any) -> dict[str, Any]:
    data = {"id": rule.short_id, "name": rule.name, "trigger": rule.trigger,
            "event": rule.event, "schedule": rule.schedule, "effect": rule.effect,
            "config": rule.config, "paused": rule.paused_at is not None}
    if rule.trigger == "webhook":
        data["url"] = f"{ctx.base_url}/hooks/automations/{rule.short_id}"
    return data


@action("create_automation", "Add an automation to this studio: when something happens (an "
                             "event, a schedule, a signed call to its own URL, or by hand), do "
                             "one thing as you (run a workflow, run an action, tell the "
                             "members, call a webhook). A webhook trigger's secret is shown once",
        "studio_automations", access.admin,
        params=(Param("name", "string", "What the automation is for, in a few words",
                      required=True, max_length=120),
                Param("trigger", "string", "event, schedule, webhook or manual", required=True,
                      enum=TRIGGERS),
                Param("event", "string", "For an event trigger: decision_closed, note_created "
                      "or mention", enum=EVENTS),
                Param("schedule", "string", "For a schedule: five cron fields (minute hour day "
                      "month weekday) or words such as 'every day at 09:00', in the studio's "
                      "time zone", max_length=120, example="every day at 09:00"),
                Param("effect", "string", "workflow, action, notify or webhook", required=True,
                      enum=EFFECTS),
                Param("workflow", "string", "For a workflow effect: its name; the event's "
                      "fields it declares as inputs are passed", max_length=200),
                Param("inputs", "object", "For a workflow effect: more inputs ({{ field }} is "
                      "the event's field)", schema={"type": "object"}),
                Param("do", "string", "For an action effect: the action's name",
                      max_length=80),
                Param("at", "string", "For an action effect: the page it runs on, e.g. "
                      "/studios/team/note (default: the studio's page)", max_length=300),
                Param("params", "object", "For an action effect: its parameters ({{ field }} "
                      "is the event's field)", schema={"type": "object"}),
                Param("text", "text", "For a notify effect: what the members are told "
                      "({{ field }} is the event's field)", max_length=2000),
                Param("webhook", "string", "For a webhook effect: the id of one of the "
                      "studio's webhooks", max_length=36)),
        effect=WRITE)
def create_automation(ctx: Context, p: dict[str, Any]) -> Result:
    rule = rules.create(ctx.studio, ctx.user, p)
    data = _answer(ctx, rule)
    message = f"Automation “{rule.name}” added."
    if rule.secret:
        data["secret"] = rule.secret
        message += " Keep its webhook's signing secret: it is shown only now."
    return Result(message, firing.path_of(rule), created=True, data=data)


@action("run_automation", "Run this automation now, once, as if its trigger had happened",
        "automation", access.admin, available=lambda ctx: ctx.item.paused_at is None,
        unavailable_reason=lambda ctx: "the automation is paused: resume it first",
        effect=WRITE)
def run_automation(ctx: Context, p: dict[str, Any]) -> Result:
    row = rules.run_now(ctx.item, ctx.user, firing.depth_of(ctx.identity))
    return Result("It will run in a moment: its outcome is listed below.", ctx.path,
                  data={"id": ctx.item.short_id, "firing": row.short_id, "status": row.status})


@action("pause_automation", "Stop this automation firing until it is resumed", "automation",
        access.admin, available=lambda ctx: ctx.item.paused_at is None,
        unavailable_reason=lambda ctx: "the automation is already paused",
        effect=IDEMPOTENT_WRITE)
def pause_automation(ctx: Context, p: dict[str, Any]) -> Result:
    rules.pause(ctx.item, f"@{ctx.user.handle} paused it")
    return Result("Automation paused.", ctx.path, data={"id": ctx.item.short_id,
                                                        "paused": True})


@action("resume_automation", "Let this paused automation fire again", "automation",
        access.admin, available=lambda ctx: ctx.item.paused_at is not None,
        unavailable_reason=lambda ctx: "the automation is not paused",
        effect=IDEMPOTENT_WRITE)
def resume_automation(ctx: Context, p: dict[str, Any]) -> Result:
    rules.resume(ctx.item)
    return Result("Automation resumed.", ctx.path, data={"id": ctx.item.short_id,
                                                         "paused": False})


@action("delete_automation", "Delete this automation and its record of firings", "automation",
        access.admin, effect=DESTRUCTIVE)
def delete_automation(ctx: Context, p: dict[str, Any]) -> Result:
    rules.delete(ctx.item)
    return Result("Automation deleted.", f"/studios/{ctx.studio.handle}/automations",
                  data={"id": ctx.item.short_id})

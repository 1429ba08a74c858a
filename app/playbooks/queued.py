"""Playbook replays on the durable queue: the ``queue_replay`` action on a playbook's page.

The replay runs as one queued step on any worker, as the person who asked, and shows at
``/runs/<id>`` like any workflow run. It is never retried: a replay that died half-way may have
written, and stopping with a precise report beats writing twice (the recipe's own bounds and
confirmations apply as in a direct replay). Recipe governance applies twice: when the replay is
queued (a recipe that may not run for real is refused at once, naming the rule) and again on the
worker, which is what counts (a dry run may have gone out of its window meanwhile).
"""

from __future__ import annotations

from typing import Any

from flask import g

from app.actions import Context, Result, action
from app.actions.effects import DESTRUCTIVE
from app.extensions import db
from app.playbooks import governance, service, settings
from app.playbooks import pages as playbook_pages
from app.playbooks.recipe import load
from app.playbooks.replay import preflight, replay
from app.services.errors import Conflict, Forbidden, Invalid
from app.workflows import CallContext, CallStep, StepError, callable_step, enqueue_calls

STEP = "playbooks.replay"


@callable_step(STEP)
def run_replay(ctx: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    playbook = service.get(args["playbook"], ctx.identity)
    recipe = load(service.read_recipe(playbook) or {})
    report, _run = replay(recipe, args.get("args") or {}, bool(args.get("dry_run")),
                          ctx.identity, playbook, source=service.recipe_path(playbook),
                          door="queue")
    report.pop("httpStatus", None)
    if not report.get("ok"):
        # A permanent step error fails the run with the replay's own reason, no retry.
        raise StepError(f"replay {report.get('status')}: {report.get('error')} "
                        f"(details at {report.get('run')})", permanent=True)
    return report


@action("queue_replay", "Run the replay on the background job queue (same checks as replay; "
        "follow it at the returned /runs/<id>)", "playbook", playbook_pages.reader_rule,
        params=(playbook_pages.ARGS,), available=playbook_pages.has_recipe, effect=DESTRUCTIVE)
def queue_replay(ctx: Context, params: dict[str, Any]) -> Result:
    playbook = ctx.item
    _precheck(playbook, params.get("args") or {}, ctx)
    run_id = enqueue_calls(f"replay {playbook.name}",
                           [CallStep("replay", STEP, {"playbook": playbook.short_id,
                                                       "args": params.get("args") or {}},
                                     max_attempts=1)],
                           user_id=ctx.user.id, inputs=params.get("args") or {},
                           by=ctx.identity)
    return Result("Replay queued.", f"/runs/{run_id}", created=True,
                  data={"run": str(run_id)})


def _precheck(playbook: Any, args: dict[str, Any], ctx: Context) -> None:
    """Refuse now what the replay's preflight would refuse on the worker (which asks again):
    the rules of a real run (governance, confirm, preview); bad arguments are reported by
    the replay itself, with its run."""
    recipe = load(service.read_recipe(playbook) or {})
    check = preflight(recipe, args, False, g.get("identity"), playbook,
                      service.recipe_path(playbook), settings.current(), "page")
    refusal = check.refusal
    if refusal is None or refusal.rule in ("args", "required"):
        return
    verdict = check.verdict
    # Audited like a refused direct replay (which stores its run and commits before its
    # refusal): the refusal must outlive the refused request.
    governance.audit("replay", g.get("identity"), playbook=playbook,
                     version=verdict.version if verdict is not None else None,
                     detail={"status": "refused", "door": "queue", "recipe": recipe.title,
                             "state": verdict.state if verdict is not None else "",
                             "rule": refusal.rule})
    db.session.commit()
    error = {403: Forbidden, 409: Conflict}.get(refusal.status, Invalid)
    raise error(refusal.text(), rule=refusal.rule, next=refusal.next)

"""Pages /playbooks, /playbooks/<id> and its runs, and their actions, through the registry.

Actions: ``start_teach`` and ``stop_teach`` (list page and playbook page), ``generate_recipe``,
``update_recipe``, ``dry_run`` and ``replay`` (playbook page). The same actions are what an HTTP
agent POSTs and what MCP's ``execute_action`` runs.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, g

from app.actions import rules
from app.actions.registry import Context, Param, Result, action
from app.core.identity import Identity
from app.models.playbooks import Playbook
from app.playbooks import capture, service, teach
from app.playbooks.recipe import load
from app.playbooks.replay import replay
from app.services.errors import Invalid
from app.web.loaders import base_url
from app.web.pages import Page, page

bp = Blueprint("playbooks", __name__)
NAV = [("Playbooks", "/playbooks")]


def _identity() -> Identity | None:
    return g.get("identity")


def _load_list(user: Any, **_: Any) -> Context:
    return Context(page="playbooks", path="/playbooks", user=user, base_url=base_url())


def _load_playbook(user: Any, playbook_id: str, **_: Any) -> Context:
    playbook = service.get(playbook_id, _identity())
    return Context(page="playbook", path=f"/playbooks/{playbook.short_id}", user=user,
                   item=playbook, base_url=base_url())


def _load_run(user: Any, playbook_id: str, run_id: str, **_: Any) -> Context:
    playbook = service.get(playbook_id, _identity())
    run = service.get_run(playbook, run_id, _identity())
    return Context(page="playbook_run", path=f"/playbooks/{playbook.short_id}/runs/"
                                             f"{run.short_id}", user=user, item=run,
                   extra={"playbook": playbook}, base_url=base_url())


def _load_orphan_run(user: Any, run_id: str, **_: Any) -> Context:
    run = service.get_run(None, run_id, _identity())
    return Context(page="playbook_run", path=f"/playbooks/runs/{run.short_id}", user=user,
                   item=run, extra={"playbook": None}, base_url=base_url())


def _teaching(ctx: Context) -> Playbook | None:
    return teach.active(teach.owner_key(_identity())) if _identity() is not None else None


@page(bp, "playbooks", "/playbooks", _load_list)
def playbooks_index(ctx: Context) -> Page:
    return Page(ctx, "Playbooks", "playbooks/index",
                {"playbooks": service.list_for(_identity()), "teaching": _teaching(ctx)},
                nav=NAV)


@page(bp, "playbook", "/playbooks/<playbook_id>", _load_playbook)
def playbook_show(ctx: Context) -> Page:
    playbook: Playbook = ctx.item
    entries = capture.read(teach.folder(playbook))
    raw = service.read_recipe(playbook) if service.recipe_path(playbook).exists() else None
    problems: list[dict[str, str]] = []
    variables: list[dict[str, Any]] = []
    if raw is not None:
        try:
            parsed = load(raw)
            variables = [{"name": k, "default": v,
                          "required": v is None, **parsed.inputs.get(k, {})}
                         for k, v in parsed.vars.items()]
        except Invalid as exc:
            problems = exc.errors
    return Page(ctx, f"Playbook: {playbook.name}", "playbooks/show",
                {"playbook": playbook, "entries": entries, "entry_name": capture.entry_name,
                 "recipe": raw, "recipe_text": service.recipe_text(raw), "problems": problems,
                 "variables": variables, "runs": service.runs_of(playbook),
                 "folder": str(teach.folder(playbook)), "dumps": _dumps,
                 "compact": _compact},
                nav=NAV + [(playbook.name, ctx.path)])


def _run_page(ctx: Context) -> Page:
    run = ctx.item
    playbook = ctx.extra.get("playbook")
    nav = NAV + ([(playbook.name, f"/playbooks/{playbook.short_id}")] if playbook else [])
    return Page(ctx, f"Run {run.short_id} of {run.recipe_name}", "playbooks/run",
                {"run": run, "playbook": playbook, "dumps": _dumps},
                nav=nav + [(f"Run {run.short_id}", ctx.path)])


page(bp, "playbook_run", "/playbooks/<playbook_id>/runs/<run_id>", _load_run)(_run_page)
page(bp, "playbook_orphan_run", "/playbooks/runs/<run_id>", _load_orphan_run)(_run_page)


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


# Actions --------------------------------------------------------------------------------------

def owner_rule(ctx: Context) -> str | None:
    reason = rules.signed_in(ctx)
    if reason:
        return reason
    item = ctx.item
    if item is not None and item.user_id != ctx.user.id:
        return "only the playbook's owner can do this"
    return None


@action("start_teach", "Start recording (teach mode): your calls through /rpc and your MCP "
        "tool calls are captured until stop_teach", "playbooks", rules.signed_in,
        params=(Param("name", "string", "A short name for the session (letters, digits, - _ .)",
                      max_length=60),), effect="create")
def start_teach(ctx: Context, params: dict[str, Any]) -> Result:
    identity = _identity()
    playbook, stopped = teach.start(teach.owner_key(identity), ctx.user.id, params.get("name"))
    message = f"Teaching into {playbook.session_id}"
    if stopped:
        message += f" (stopped {stopped} first)"
    return Result(message, location=f"/playbooks/{playbook.short_id}", created=True,
                  data={"sessionId": playbook.session_id, "id": playbook.short_id,
                        "dir": str(teach.folder(playbook))})


@action("stop_teach", "Stop recording and write the capture's summary", ("playbooks", "playbook"),
        owner_rule, available=lambda ctx: _teaching(ctx) is not None)
def stop_teach(ctx: Context, params: dict[str, Any]) -> Result:
    playbook, entries = teach.stop(teach.owner_key(_identity()))
    if playbook is None:
        return Result("You were not teaching")
    return Result(f"Stopped {playbook.session_id}: {entries} entries",
                  location=f"/playbooks/{playbook.short_id}",
                  data={"sessionId": playbook.session_id, "entries": entries})


@action("generate_recipe", "Build recipe.json from the capture: variables (volatile inputs "
        "required), selectors instead of element ids, proposed bounds, step wiring", "playbook",
        owner_rule, effect="write")
def generate_recipe(ctx: Context, params: dict[str, Any]) -> Result:
    raw = service.generate_recipe(ctx.item)
    required = [k for k, v in raw["vars"].items() if v is None]
    return Result(f"Recipe {raw['name']}@{raw['version']} with {len(raw['steps'])} steps"
                  + (f"; required at replay: {', '.join(required)}" if required else ""),
                  location=ctx.path, data={"recipe": raw, "required": required})


def _recipe_prefill(ctx: Context) -> dict[str, Any]:
    raw = service.read_recipe(ctx.item) if service.recipe_path(ctx.item).exists() else None
    return {"recipe": service.recipe_text(raw)} if raw else {}


@action("update_recipe", "Replace the recipe with an edited one (JSON; validated first)",
        "playbook", owner_rule,
        params=(Param("recipe", "text", "The whole recipe as JSON", required=True,
                      max_length=500_000),), prefill=_recipe_prefill)
def update_recipe(ctx: Context, params: dict[str, Any]) -> Result:
    raw = service.save_recipe(ctx.item, params["recipe"])
    return Result(f"Saved recipe {raw['name']}@{raw.get('version', '')}".rstrip("@"),
                  location=ctx.path, data={"recipe": raw})


ARGS = Param("args", "object", "Variable values by name, e.g. {\"bar_count\": 5}",
             schema={"type": "object"})


def has_recipe(ctx: Context) -> bool:
    return ctx.item is not None and service.recipe_path(ctx.item).exists()


def _run(ctx: Context, params: dict[str, Any], dry_run: bool) -> Result:
    recipe = load(service.read_recipe(ctx.item) or {})
    report, run = replay(recipe, params.get("args") or {}, dry_run, _identity(), ctx.item)
    word = "Dry run" if dry_run else "Replay"
    message = f"{word} {report['status']}: {report['steps']['succeeded']}/" \
              f"{report['steps']['total']} steps" + (f" — {report['error']}"
                                                       if report.get("error") else "")
    return Result(message, location=report["run"], created=True, data=report)


@action("dry_run", "Preview a replay: resolve selectors, show planned effects and bound checks "
        "without writing", "playbook", owner_rule, params=(ARGS,), available=has_recipe,
        effect="read")
def dry_run(ctx: Context, params: dict[str, Any]) -> Result:
    return _run(ctx, params, True)


@action("replay", "Run the recipe for real (write steps need confirm: true; caps are checked "
        "against the upstream's preview before each write)", "playbook", owner_rule,
        params=(ARGS,), available=has_recipe)
def replay_action(ctx: Context, params: dict[str, Any]) -> Result:
    return _run(ctx, params, False)

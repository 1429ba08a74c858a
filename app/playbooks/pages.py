"""Pages /playbooks, /playbooks/<id> and its runs, and their actions, through the registry.

Actions: ``start_teach`` and ``stop_teach`` (list page and playbook page), ``generate_recipe``,
``update_recipe``, ``dry_run`` and ``replay`` (playbook page), and recipe governance on the
playbook page: ``share_playbook`` (the owner names the studio whose members review and whose
admins approve), ``review_recipe``, ``approve_recipe`` and ``retire_recipe``. The same actions
are what an HTTP agent POSTs and what MCP's ``execute_action`` runs; the rules behind them live
in ``app.playbooks.governance``.

The playbook page shows what a reviewer needs: each version's state, and for the newest one its
difference from the previous version, its variables, its bounds and its write steps.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, g

from app.actions import rules
from app.actions.effects import (
    DESTRUCTIVE,
    IDEMPOTENT_DESTRUCTIVE,
    IDEMPOTENT_WRITE,
    READ,
    WRITE,
)
from app.actions.registry import Context, Param, Result, action
from app.core.config import base_url
from app.core.identity import Identity
from app.extensions import db
from app.models.playbooks import Playbook, RecipeVersion
from app.models.studios import Studio
from app.playbooks import capture, governance, service, settings, teach
from app.playbooks.recipe import load
from app.playbooks.replay import real_run_words, replay
from app.services import studios
from app.services.errors import Conflict, Forbidden, Invalid
from app.web import loaders
from app.web.pages import Page, page

bp = Blueprint("playbooks", __name__)
NAV = [("Playbooks", "/playbooks")]


def _identity() -> Identity | None:
    return g.get("identity")


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


@page(bp, "playbooks", "/playbooks", loaders.site_page("playbooks", "/playbooks"))
def playbooks_index(ctx: Context) -> Page:
    return Page(ctx, "Playbooks", "playbooks/index",
                {"playbooks": service.list_for(_identity()), "teaching": _teaching(ctx)},
                nav=NAV)


@page(bp, "playbook", "/playbooks/<playbook_id>", _load_playbook)
def playbook_show(ctx: Context) -> Page:
    playbook: Playbook = ctx.item
    if playbook.teaching:
        teach.expire_idle()  # a session idle past PLAYBOOK_TEACH_IDLE shows as stopped
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
    versions = governance.versions(playbook)
    current_state = "draft"
    if raw is not None:
        found = governance.version_by_digest(playbook, governance.digest(raw))
        current_state = found.state if found is not None else "draft (not recorded: edited "\
                                                               "on disk)"
    studio = db.session.get(Studio, playbook.studio_id) if playbook.studio_id else None
    return Page(ctx, f"Playbook: {playbook.name}", "playbooks/show",
                {"playbook": playbook, "entries": entries, "entry_name": capture.entry_name,
                 "recipe": raw, "recipe_text": service.recipe_text(raw), "problems": problems,
                 "variables": variables, "runs": service.runs_of(playbook),
                 "folder": str(teach.folder(playbook)), "dumps": _dumps,
                 "compact": _compact, "versions": versions, "current_state": current_state,
                 "review": governance.review_of(versions[0]) if versions else None,
                 "studio": studio,
                 # The studios the person may share it with (the share form's choices).
                 "my_studios": studios.studios_of(ctx.user) if ctx.user is not None else [],
                 "audit": governance.audit_of(playbook, 20)},
                nav=NAV + [(playbook.name, ctx.path)])


def _run_page(ctx: Context) -> Page:
    run = ctx.item
    playbook = ctx.extra.get("playbook")
    nav = NAV + ([(playbook.name, f"/playbooks/{playbook.short_id}")] if playbook else [])
    answer = governance.real_run_of(run) if run.dry_run else None
    return Page(ctx, f"Run {run.short_id} of {run.recipe_name}", "playbooks/run",
                {"run": run, "playbook": playbook, "dumps": _dumps, "real_run": answer,
                 "real_run_text": real_run_words(answer) if answer else ""},
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
                      max_length=60),), effect=WRITE)
def start_teach(ctx: Context, params: dict[str, Any]) -> Result:
    identity = _identity()
    playbook, stopped = teach.start(teach.owner_key(identity), ctx.user.id, params.get("name"))
    message = f"Teaching into {playbook.session_id}"
    if stopped:
        message += f" (stopped {stopped} first)"
    return Result(message, location=f"/playbooks/{playbook.short_id}", created=True,
                  data={"sessionId": playbook.session_id, "id": playbook.short_id,
                        "dir": str(teach.folder(playbook))})


def _stoppable(ctx: Context) -> bool:
    # On a playbook's page: that session, whoever recorded into it (a stdio agent that exited
    # leaves its session teaching); on the list: your own.
    if ctx.page == "playbook":
        return ctx.item is not None and bool(ctx.item.teaching)
    return _teaching(ctx) is not None


@action("stop_teach", "Stop recording, write the capture's summary and make it a draft recipe "
        "(on a playbook's page: that session, e.g. one an agent left teaching)",
        ("playbooks", "playbook"), owner_rule, available=_stoppable, effect=IDEMPOTENT_WRITE)
def stop_teach(ctx: Context, params: dict[str, Any]) -> Result:
    if ctx.page == "playbook":
        playbook: Playbook | None = ctx.item
        entries = teach.stop_playbook(ctx.item) if ctx.item.teaching else ctx.item.entries
    else:
        playbook, entries = teach.stop(teach.owner_key(_identity()))
    if playbook is None:
        return Result("You were not teaching")
    draft = service.stopped_draft(playbook, _identity())
    return Result(f"Stopped {playbook.session_id}: {entries} entries. {draft['message']}",
                  location=f"/playbooks/{playbook.short_id}",
                  data={"sessionId": playbook.session_id, "entries": entries, **draft})


@action("generate_recipe", "Build recipe.json from the capture: variables (volatile inputs "
        "required), selectors instead of element ids, proposed bounds, step wiring", "playbook",
        owner_rule, effect=IDEMPOTENT_WRITE)
def generate_recipe(ctx: Context, params: dict[str, Any]) -> Result:
    raw = service.generate_recipe(ctx.item, _identity())
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
                      max_length=500_000),), prefill=_recipe_prefill,
        effect=IDEMPOTENT_WRITE)
def update_recipe(ctx: Context, params: dict[str, Any]) -> Result:
    raw = service.save_recipe(ctx.item, params["recipe"], _identity())
    return Result(f"Saved recipe {raw['name']}@{raw.get('version', '')}".rstrip("@"),
                  location=ctx.path, data={"recipe": raw})


ARGS = Param("args", "object", "Variable values by name, e.g. {\"bar_count\": 5}",
             schema={"type": "object"})


def has_recipe(ctx: Context) -> bool:
    return ctx.item is not None and service.recipe_path(ctx.item).exists()


def reader_rule(ctx: Context) -> str | None:
    """The owner, or a member of the studio the playbook is shared with."""
    reason = rules.signed_in(ctx)
    if reason:
        return reason
    item = ctx.item
    if item is not None and item.user_id != ctx.user.id and \
            governance.membership(item, ctx.user.id) is None:
        return "only the playbook's owner or a member of its studio can do this"
    return None


def _run(ctx: Context, params: dict[str, Any], dry_run: bool) -> Result:
    recipe = load(service.read_recipe(ctx.item) or {})
    report, run = replay(recipe, params.get("args") or {}, dry_run, _identity(), ctx.item,
                         source=service.recipe_path(ctx.item), door="page")
    status = report.pop("httpStatus", 422)
    if report["status"] == "refused":  # the rule's own answer (the run is stored, refused)
        error = {403: Forbidden, 409: Conflict}.get(status, Invalid)
        raise error(report["error"], errors=report.get("errors"), rule=report.get("rule"),
                    next=report.get("next"), run=report.get("run"))
    word = "Dry run" if dry_run else "Replay"
    message = f"{word} {report['status']}: {report['steps']['succeeded']}/" \
              f"{report['steps']['total']} steps" + (f" — {report['error']}"
                                                       if report.get("error") else "")
    if report.get("realRun"):
        message += ". " + real_run_words(report["realRun"])
    return Result(message, location=report["run"], created=True, data=report)


@action("dry_run", "Preview a replay: resolve selectors, show planned effects and bound checks "
        "without writing, and say whether a real run with the same args would be allowed",
        "playbook", reader_rule, params=(ARGS,), available=has_recipe,
        effect=READ)
def dry_run(ctx: Context, params: dict[str, Any]) -> Result:
    return _run(ctx, params, True)


@action("replay", "Run the recipe for real: an approved version (or your own taught session), "
        "after a dry run with the same args (write steps need confirm: true; caps are checked "
        "against the upstream's preview before each write)", "playbook", reader_rule,
        params=(ARGS,), available=has_recipe, effect=DESTRUCTIVE)
def replay_action(ctx: Context, params: dict[str, Any]) -> Result:
    return _run(ctx, params, False)


# Governance ------------------------------------------------------------------------------------

VERSION = Param("version", "string", "The recipe version (1.2.3); the newest one if left out",
                max_length=40)


def _newest(ctx: Context, state: str) -> RecipeVersion | None:
    if ctx.item is None:
        return None
    return next((v for v in governance.versions(ctx.item) if v.state == state), None)


def _user_id(ctx: Context) -> Any:
    return ctx.user.id if ctx.user is not None else None


def review_rule(ctx: Context) -> str | None:
    return rules.signed_in(ctx) or governance.review_refusal(
        ctx.item, _newest(ctx, "draft"), _user_id(ctx))


def approve_rule(ctx: Context) -> str | None:
    return rules.signed_in(ctx) or governance.approve_refusal(
        ctx.item, _newest(ctx, "reviewed"), _user_id(ctx))


def retire_rule(ctx: Context) -> str | None:
    return rules.signed_in(ctx) or governance.retire_refusal(ctx.item, _user_id(ctx))


def _pick(ctx: Context, params: dict[str, Any], state: str) -> RecipeVersion:
    if params.get("version"):
        return governance.find_version(ctx.item, params["version"])
    version = _newest(ctx, state)
    return version if version is not None else governance.find_version(ctx.item, None)


@action("share_playbook", "Share this playbook with a studio you are a member of: its members "
        "may read it and review its recipe versions, its admins approve them", "playbook",
        owner_rule, params=(Param("studio", "string", "The studio's handle", required=True,
                                  max_length=40),), effect=IDEMPOTENT_WRITE)
def share_playbook(ctx: Context, params: dict[str, Any]) -> Result:
    studio = studios.get_studio(params["studio"])
    if studios.require_member(studio, ctx.user).role == "guest":
        raise Forbidden(f"you are a guest of the studio '{studio.handle}': guests can read but "
                        "not write, so they do not share playbooks into it")
    governance.share(ctx.item, studio.id, _identity())
    return Result(f"Shared with {studio.handle}: its members review the recipe, its admins "
                  "approve it", location=ctx.path, data={"studio": studio.handle})


@action("review_recipe", "Mark a draft recipe version reviewed (you read its diff, variables, "
        "bounds and write steps on this page); a member of the studio, not its author",
        "playbook", review_rule,
        params=(VERSION, Param("note", "text", "What you checked", max_length=2000)),
        available=lambda ctx: _newest(ctx, "draft") is not None, effect=IDEMPOTENT_WRITE)
def review_recipe(ctx: Context, params: dict[str, Any]) -> Result:
    version = _pick(ctx, params, "draft")
    governance.review(ctx.item, version, _identity(), params.get("note") or "")
    return Result(f"Reviewed version {version.version}: a studio admin approves it next",
                  location=ctx.path, data={"version": version.version, "state": version.state})


@action("approve_recipe", "Approve a reviewed recipe version: it may then replay for real (after "
        "a dry run) and is written to the reviewed/ folder; a studio admin, not its author",
        "playbook", approve_rule, params=(VERSION,),
        available=lambda ctx: _newest(ctx, "reviewed") is not None, effect=IDEMPOTENT_WRITE)
def approve_recipe(ctx: Context, params: dict[str, Any]) -> Result:
    version = _pick(ctx, params, "reviewed")
    path = governance.approve(ctx.item, version, _identity(), settings.current().data_dir)
    return Result(f"Approved version {version.version}", location=ctx.path,
                  data={"version": version.version, "state": version.state,
                        "recipePath": f"{governance.REVIEWED}/{path.name}"})


@action("retire_recipe", "Retire a recipe version: it no longer replays for real and leaves the "
        "reviewed/ folder; the playbook's owner or a studio admin", "playbook", retire_rule,
        params=(VERSION,), available=lambda ctx: ctx.item is not None and any(
            v.state != "retired" for v in governance.versions(ctx.item)),
        effect=IDEMPOTENT_DESTRUCTIVE)
def retire_recipe(ctx: Context, params: dict[str, Any]) -> Result:
    version = _pick(ctx, params, "approved")
    governance.retire(ctx.item, version, _identity(), settings.current().data_dir)
    return Result(f"Retired version {version.version}", location=ctx.path,
                  data={"version": version.version, "state": version.state})

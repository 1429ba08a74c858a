"""Workflows in the app: pages, the run_workflow action, the CLI group and the MCP resource.

Pages: ``/workflows`` (the catalog, each with its validation), ``/workflows/<name>`` (problems,
compiled steps, recent runs, and ``run_workflow``), ``/runs/<id>`` (a timeline with durations
and every event), ``/workflows/schema.json``. MCP: ``harmonic://runs/{id}/events``, with
``notifications/resources/updated`` while the run emits events.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Flask, Response, jsonify

from app.actions import Context, Param, Result, action, rules
from app.actions.effects import WRITE
from app.services.errors import Forbidden, Invalid, NotFound
from app.web.loaders import base_url
from app.web.pages import Page, page
from app.workflows import catalog, queue, runs, watch
from app.workflows.schema import SCHEMA

bp = Blueprint("workflows", __name__)
ABRIDGE_AT = 240  # characters of one value a run page shows in full


def _index_loader(user: Any, **_: Any) -> Context:
    return Context(page="workflows", path="/workflows", user=user, base_url=base_url())


def _workflow_loader(user: Any, name: str, **_: Any) -> Context:
    entry = catalog.find(name)
    if entry is None:
        raise NotFound(f"no workflow named '{name}' (see /workflows)")
    return Context(page="workflow", path=f"/workflows/{entry.name}", user=user, item=entry,
                   base_url=base_url())


def can_see(run: dict[str, Any], user: Any) -> bool:
    return user is not None and run.get("user_id") == user.id


def _run_loader(user: Any, run_id: str, **_: Any) -> Context:
    run = runs.find(run_id)
    if not can_see(run, user):
        raise Forbidden("only the person who started a run can see it")
    return Context(page="run", path=f"/runs/{run['short_id']}", user=user, item=run,
                   base_url=base_url())


@page(bp, "workflows", "/workflows", _index_loader)
def workflows_index(ctx: Context) -> Page:
    return Page(ctx, "Workflows", "workflows/index",
                {"entries": catalog.entries(), "folder": catalog.folder().name},
                nav=[("Workflows", "/workflows")])


@page(bp, "workflow", "/workflows/<name>", _workflow_loader)
def workflow_show(ctx: Context) -> Page:
    entry = ctx.item
    mine = [r for r in runs.recent(entry.name, 50) if can_see(r, ctx.user)][:10]
    return Page(ctx, f"Workflow: {entry.name}", "workflows/show",
                {"entry": entry, "runs": mine},
                nav=[("Workflows", "/workflows"), (entry.name, ctx.path)])


@page(bp, "run", "/runs/<run_id>", _run_loader)
def run_show(ctx: Context) -> Page:
    run = ctx.item
    events = queue.events_after(run["id"])
    # A step's output may be a whole page (navigate returns one): the run page shows a line of
    # it, not a page inside the page; the full values stay in harmonic://runs/{id}/events.
    shown = [{**event, "data": _abridged(event["data"])} for event in events]
    return Page(ctx, f"Run {run['short_id']} of {run['workflow']}", "runs/show",
                {"run": {**run, "inputs": _abridged(run["inputs"])}, "events": shown,
                 "timeline": runs.timeline(events),
                 "result_json": json.dumps(_abridged(run["result"]), indent=2,
                                           ensure_ascii=False, default=str)},
                nav=[("Workflows", "/workflows"),
                     (run["workflow"], f"/workflows/{run['workflow']}"),
                     (f"Run {run['short_id']}", ctx.path)])


def _abridged(value: Any, limit: int = ABRIDGE_AT) -> Any:
    """``value`` with every string longer than ``limit`` cut to its first line or so."""
    if isinstance(value, str) and len(value) > limit:
        head = value.strip().split("\n", 1)[0][:80]
        return f"{head}… ({len(value)} characters)"
    if isinstance(value, dict):
        return {key: _abridged(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_abridged(item, limit) for item in value]
    return value


@bp.get("/workflows/schema.json")
def schema_json() -> Response:
    return jsonify(SCHEMA)


@action("run_workflow", "Start a run of this workflow; inputs override its workload defaults",
        "workflow", rules.signed_in,
        params=(Param("inputs", "object", "Values for workload keys, e.g. {\"studio\": \"team\"}",
                      schema={"type": "object"}),),
        available=lambda ctx: bool(ctx.item and ctx.item.valid), effect=WRITE)
def run_workflow(ctx: Context, p: dict[str, Any]) -> Result:
    entry = ctx.item
    inputs = p.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise Invalid("inputs must be an object", errors=[{"param": "inputs",
                                                           "message": "must be an object"}])
    run_id = runs.start_compiled(entry.compiled, inputs, ctx.user.id)
    short = run_id.hex[:8]
    return Result(f"Started run {short} of {entry.name}.", f"/runs/{short}", created=True,
                  data={"run": short})


def _register_mcp() -> None:
    try:
        from app.mcp.registry import REGISTRY
    except ImportError:  # the MCP package is optional for this feature
        return
    if "harmonic://runs/{id}/events" in REGISTRY.templates:
        return

    @REGISTRY.resource_template(
        "harmonic://runs/{id}/events", "run-events",
        "The events of a workflow run as JSON lines; subscribe to be told as it progresses.",
        mime_type="application/json")
    def run_events(ctx: Any, uri: str, variables: dict[str, str]) -> str:
        from app.extensions import db
        from app.models import User

        run = runs.find(variables["id"])
        user = db.session.get(User, ctx.identity.user_id) if ctx.identity else None
        if not can_see(run, user):
            raise Forbidden("only the person who started a run can read its events")
        if run["status"] in ("queued", "running"):
            watch.follow(run["id"])  # events from other processes become notifications too
        items = queue.events_after(run["id"])
        body = {"run": run["short_id"], "workflow": run["workflow"], "status": run["status"],
                "events": [{"seq": e["seq"], "type": e["type"], "step": e["step"],
                            "time": e["time"].isoformat(), "data": e["data"]} for e in items]}
        return json.dumps(body, ensure_ascii=False, default=str)

    # Events written here reach subscribers through the change-event outbox (app.workflows.
    # queue records them); those a worker in another process writes are noticed by ``watch``
    # and told to this process's listen streams too.
    from app.core import changes

    watch.on_new(lambda run_id: changes.deliver([events_uri(run_id)]))


events_uri = queue.events_uri


def init_app(app: Flask) -> None:
    from app.workflows import cli, worker  # noqa: F401  (registers steps)

    app.register_blueprint(bp)
    app.cli.add_command(cli.group)
    _register_mcp()

    @app.before_request
    def _start_worker_thread() -> None:
        # Lazily, on the first request of each process, and only when configured.
        worker.ensure_thread(app)


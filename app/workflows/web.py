"""Workflows in the app: pages, the run_workflow action, the CLI group and the MCP resource.

Pages: ``/workflows`` (the catalog, each with its validation), ``/workflows/<name>`` (problems,
compiled steps, recent runs, and ``run_workflow``), ``/runs/<id>`` (a timeline with durations
and every event), ``/workflows/schema.json``. MCP: ``harmonic://runs/{id}/events`` (JSON
lines, one event a line), with ``notifications/resources/updated`` while the run emits
events; a listen stream is first sent the events the client has not seen, so a run that
finished before it listened is not missed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from flask import Blueprint, Flask, Response, jsonify, render_template

from app.actions import Context, Param, Result, action, rules
from app.actions.effects import WRITE
from app.core import changes
from app.core.config import base_url
from app.extensions import db
from app.mcp.registry import REGISTRY
from app.models import User
from app.services import studios
from app.services.errors import DomainError, Forbidden, Invalid, NotFound
from app.web import loaders
from app.web.auth import signed_in_reader
from app.web.pages import Page, page
from app.workflows import (
    catalog,
    cli,
    mcp_tasks,  # noqa: F401  (registers its steps)
    queue,
    runs,
    watch,
    worker,
)
from app.workflows.schema import SCHEMA, V2_VERSIONS
from app.workflows.v2.schema import SCHEMA as V2_SCHEMA

bp = Blueprint("workflows", __name__)
ABRIDGE_AT = 240  # characters of one value a run page shows in full


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


@page(bp, "workflows", "/workflows", loaders.site_page("workflows", "/workflows"))
def workflows_index(ctx: Context) -> Page:
    return Page(ctx, "Workflows", "workflows/index",
                {"entries": catalog.entries(), "folder": catalog.folder().name},
                nav=[("Workflows", "/workflows")])


@page(bp, "workflow", "/workflows/<name>", _workflow_loader)
def workflow_show(ctx: Context) -> Page:
    entry = ctx.item
    mine = [r for r in runs.recent(entry.name, 50) if can_see(r, ctx.user)][:10]
    return Page(ctx, f"Workflow: {entry.name}", "workflows/show",
                {"entry": entry, "runs": mine, "inputs": form_inputs(entry.compiled),
                 # A "studio" input is picked from the person's own studios.
                 "my_studios": studios.studios_of(ctx.user) if ctx.user is not None else []},
                nav=[("Workflows", "/workflows"), (entry.name, ctx.path)])


def form_inputs(compiled: dict[str, Any] | None) -> dict[str, Any]:
    """The run form's fields: each workload key with its default, then each key the workflow
    reads without a default (an empty field: a run needs it)."""
    if compiled is None:
        return {}
    fields = dict(compiled.get("workload") or {})
    fields.update({key: "" for key in compiled.get("inputs_required") or []})
    return fields


LIVE_STATUSES = ("queued", "running")  # a run page in these states follows the run live


def _run_data(run: dict[str, Any]) -> dict[str, Any]:
    """What the run page and its live part show of ``run``."""
    events = queue.events_after(run["id"])
    # A step's output may be a whole page (navigate returns one): the run page shows a line of
    # it, not a page inside the page; the full values stay in harmonic://runs/{id}/events.
    shown = [{**event, "data": _abridged(event["data"])} for event in events]
    return {"run": {**run, "inputs": _abridged(run["inputs"]),
                    "error": _message(run.get("error"))},
            "raw_error": run.get("error"),  # agents read it whole (the Markdown page)
            "events": shown, "timeline": runs.timeline(events),
            "live": run["status"] in LIVE_STATUSES,
            "result_json": json.dumps(_abridged(run["result"]), indent=2,
                                      ensure_ascii=False, default=str)}


@page(bp, "run", "/runs/<run_id>", _run_loader)
def run_show(ctx: Context) -> Page:
    run = ctx.item
    return Page(ctx, f"Run {run['short_id']} of {run['workflow']}", "runs/show",
                _run_data(run),
                nav=[("Workflows", "/workflows"),
                     (run["workflow"], f"/workflows/{run['workflow']}"),
                     (f"Run {run['short_id']}", ctx.path)])


@bp.get("/runs/<run_id>/live")
def run_live(run_id: str) -> Response:
    """The changing part of a run page (status, timeline, result, events) as an HTML fragment,
    for the page to poll while the run is queued or running; ``X-Run-Status`` says where it
    is, so the poller knows when to stop."""
    ctx = _run_loader(signed_in_reader(), run_id)
    data = _run_data(ctx.item)
    response = Response(render_template("runs/_live.html.j2", ctx=ctx, **data),
                        mimetype="text/html")
    response.headers["X-Run-Status"] = ctx.item["status"]
    response.headers["Cache-Control"] = "no-store"
    return response


def _message(text: str | None) -> str | None:
    """A run's error for people: one readable line, never a Markdown page or a stack."""
    if not text:
        return None
    if "\n" not in text.strip():
        return text
    body = text.lstrip()
    if body.startswith("---\n"):
        body = body[4:].split("\n---\n", 1)[-1]
    lines = [line.strip() for line in body.splitlines()
             if line.strip() and not line.startswith("nav:")]
    heading = next((line.lstrip("#").strip() for line in lines if line.startswith("#")), None)
    prose = next((line for line in lines if not line.startswith(("#", "|", "```", "*"))), "")
    if heading:
        return f"{heading}: {prose}" if prose else heading
    return lines[0] if lines else text.strip()


def _page_text(value: str) -> str | None:
    """A Markdown page (frontmatter, a heading) named by its title instead of shown whole."""
    text = value.lstrip()
    if text.startswith("---\n"):
        text = text[4:].split("\n---\n", 1)[-1]
    heading = next((line.lstrip("#").strip() for line in text.splitlines()
                    if line.startswith("#")), None)
    if heading is None:
        return None
    return f"a page, “{heading[:80]}” ({len(value)} characters)"


def _abridged(value: Any, limit: int = ABRIDGE_AT) -> Any:
    """``value`` with every string longer than ``limit`` cut to its first line or so, and a
    Markdown page named by its title: people read what happened, not a page in a page."""
    if isinstance(value, str) and len(value) > limit:
        page_text = _page_text(value)
        if page_text is not None:
            return page_text
        head = value.strip().split("\n", 1)[0][:80]
        return f"{head}… ({len(value)} characters)"
    if isinstance(value, dict):
        return {key: _abridged(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_abridged(item, limit) for item in value]
    return value


@bp.get("/workflows/schema.json")
def schema_json() -> Response:
    return jsonify(published_schema())


def published_schema() -> dict[str, Any]:
    """Both document shapes in one schema, chosen by apiVersion (for editors)."""
    def inner(schema: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in schema.items() if k != "$schema"}

    return {"$schema": SCHEMA["$schema"],
            "title": "Harmonic workflow (harmonic/v1, noetl.io/v1) or NoETL playbook "
                     "(noetl.io/v2)",
            "if": {"properties": {"apiVersion": {"enum": list(V2_VERSIONS)}},
                   "required": ["apiVersion"]},
            "then": inner(V2_SCHEMA), "else": inner(SCHEMA)}


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
    inputs = typed_inputs(entry.compiled.get("workload") or {}, inputs)
    run_id = runs.start_compiled(entry.compiled, inputs, ctx.user.id, by=ctx.identity)
    short = run_id.hex[:8]
    return Result(f"Started run {short} of {entry.name}.", f"/runs/{short}", created=True,
                  data={"run": short})


def typed_inputs(workload: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """Inputs typed like their workload defaults: a run form sends every field as text, so
    "3" for a number default becomes 3 and "true" for a boolean one True. An input with no
    default to follow, or one that already has a JSON type, is kept as it is."""
    typed: dict[str, Any] = {}
    errors: list[dict[str, str]] = []
    for key, value in inputs.items():
        default = workload.get(key)
        if not isinstance(value, str) or default is None or isinstance(default, str):
            typed[key] = value
            continue
        text = value.strip()
        try:
            if isinstance(default, bool):
                if text.lower() not in ("true", "false"):
                    raise ValueError
                typed[key] = text.lower() == "true"
            elif isinstance(default, int):
                typed[key] = int(text)
            elif isinstance(default, float):
                typed[key] = float(text)
            else:
                typed[key] = json.loads(text)
        except ValueError:
            kind = type(default).__name__.replace("bool", "boolean").replace("int", "integer")
            errors.append({"param": f"inputs.{key}",
                           "message": f"must be a {kind}, like its default {json.dumps(default)}"})
    if errors:
        raise Invalid("some inputs do not have their workload's types", errors=errors)
    return typed


def _register_mcp() -> None:
    if "harmonic://runs/{id}/events" in REGISTRY.templates:
        return

    @REGISTRY.resource_template(
        "harmonic://runs/{id}/events", "run-events",
        "The events of a workflow run as JSON lines, one event a line: seq, type, step, time, "
        "data (pages a step read are shown by size; the run's page has them). Subscribe, or "
        "listen, to be told as it progresses: a listen stream first replays the events past "
        "_meta[\"io.harmonic/after\"][uri] (all without it).",
        mime_type="application/x-ndjson", title="Workflow run events",
        complete=_complete_run)
    def run_events(ctx: Any, uri: str, variables: dict[str, str]) -> str:
        run = _visible_run(variables["id"], ctx.identity)
        if run["status"] in ("queued", "running"):
            watch.follow(run["id"])  # events from other processes become notifications too
        return "".join(json.dumps(line, ensure_ascii=False, default=str) + "\n"
                       for line in event_lines(run["id"]))

    # Events written here reach subscribers through the change-event outbox (app.workflows.
    # queue records them); those a worker in another process writes are noticed by ``watch``
    # and told to this process's listen streams too. A listen stream opened late is sent the
    # events it missed first (the backlog).
    watch.on_new(lambda run_id: changes.deliver([queue.events_uri(run_id)]))
    changes.add_backlog(_backlog)


RUNS_COMPLETED = 100  # the newest runs a completion offers: older ones are on /workflows


def _complete_run(ctx: Any, variable: str, prefix: str, known: dict[str, str]) -> list[str]:
    """The ids of the caller's own runs, newest first: only they may read a run's events."""
    user_id = ctx.identity.user_id if ctx.identity is not None else None
    if variable != "id" or user_id is None:
        return []
    return [str(run["short_id"]) for run in runs.recent(limit=RUNS_COMPLETED, user_id=user_id)
            if str(run["short_id"]).startswith(prefix)]


_EVENTS_URI = re.compile(r"^harmonic://runs/([0-9a-f]{8})/events$")
LONG_TEXT = 500  # a string this long in an event's data is shown by its size (a page read)


def _visible_run(short_id: str, identity: Any) -> dict[str, Any]:
    run = runs.find(short_id)
    user = db.session.get(User, identity.user_id) if identity else None
    if not can_see(run, user):
        raise Forbidden("only the person who started a run can read its events")
    return run


def _slim(value: Any) -> Any:
    """Event data without the pages steps read: long texts become their size."""
    if isinstance(value, dict):
        return {k: _slim(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_slim(v) for v in value]
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return f"({len(value)} characters: see the run's page)"
    return value


def event_lines(run_id: Any, after: int = 0) -> list[dict[str, Any]]:
    """The run's events past ``after`` as the resource's lines."""
    return [{"seq": e["seq"], "type": e["type"], "step": e["step"],
             "time": e["time"].isoformat(), "data": _slim(e["data"])}
            for e in queue.events_after(run_id, after)]


def _backlog(uri: str, after: int, identity: Any) -> list[dict[str, Any]] | None:
    match = _EVENTS_URI.match(uri)
    if match is None:
        return None
    try:
        run = _visible_run(match.group(1), identity)
    except DomainError:
        return []  # not found, or not theirs: nothing to replay
    return event_lines(run["id"], after)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
    app.cli.add_command(cli.group)
    _register_mcp()

    @app.before_request
    def _start_worker_thread() -> None:
        # Lazily, on the first request of each process, and only when configured; once it
        # runs, nothing more to ask (a setting read before every request).
        if not worker.running_here(app):
            worker.ensure_thread(app)


"""Playbooks over MCP: tools teach_start, teach_stop, replay, upstream_call; resources for a
playbook's capture and recipe; and capture of an MCP session's tool calls while it teaches.

An MCP session owns its own teach session (owner ``mcp:<session id>``), so two agents teaching
at once never share a capture. ``capture_tool_call`` is a call observer of the MCP
registry: every tools/call of a teaching session (navigate,
execute_action, floorplan tools, ...) becomes one capture line ``{t, tool, params, result, ms}``.
``upstream_call`` is recorded by the proxy itself as a JSON-RPC line, so it is skipped here.
A stateless (MCP 2026-07-28) client has no MCP session: its teach session belongs to its token.

Replay asks the person before its first write. In the 2025 era that is an elicitation request
sent while the replay runs; in the 2026 era a question ends the request with an
input-required result and the client's retry runs the tool again, so there the question comes
before the replay starts and nothing, not even the run's record, is written before the answer.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from app.actions import ballot_secrecy
from app.actions.effects import IDEMPOTENT_WRITE, WRITE, Effect
from app.mcp.content import ToolError, ToolResult, text
from app.mcp.context import ClientRequestFailed, ToolContext
from app.mcp.registry import call_observer, resource_template, tool
from app.playbooks import capture, catalog, service, settings, teach
from app.playbooks.recipe import method_effect
from app.playbooks.replay import Hooks, Runner, preflight, real_run_words, replay, summary
from app.services.errors import DomainError

NOT_CAPTURED = {"teach_start", "teach_stop", "replay", "upstream_call"}


def owners(ctx: ToolContext) -> list[str]:
    """The MCP session's own owner key first, then its token's and its user's."""
    session_id = None if ctx.session.stateless else ctx.session.id
    return teach.recording_keys(ctx.identity, session_id)


@call_observer
def capture_tool_call(ctx: ToolContext, name: str, args: dict[str, Any],
                      result: dict[str, Any] | None, seconds: float) -> None:
    """A call observer: record a teaching session's tool call (never raises)."""
    if name in NOT_CAPTURED or result is None or teach.nobody_teaches():
        return  # (checked first: while nobody teaches, a call costs no more than this)
    # A ballot's choices are never kept beside who cast them (app.actions.ballot_secrecy).
    secret = ballot_secrecy.casts_a_ballot(name, args)
    line: dict[str, Any] = {"t": int(time.time() * 1000), "tool": name,
                            "params": ballot_secrecy.redacted(name, args)}
    structured = result.get("structuredContent")
    texts = "\n".join(b.get("text", "") for b in result.get("content") or []
                      if isinstance(b, dict) and b.get("type") == "text")
    if secret:
        line["error" if result.get("isError") else "result"] = {"message": ballot_secrecy.WITHHELD}
    elif result.get("isError"):
        line["error"] = {"message": texts or f"{name} failed",
                         **({"data": structured} if structured is not None else {})}
    else:
        line["result"] = structured if structured is not None else {"text": texts}
    line["ms"] = round(seconds * 1000, 3)
    teach.record(owners(ctx), line)


def _user_id(ctx: ToolContext) -> uuid.UUID | None:
    return ctx.identity.user_id if ctx.identity is not None else None


@tool("teach_start",
      "Start teach mode for this MCP session (over stateless 2026-07-28 requests: for your "
      "token): your following tool calls (navigate, execute_action, floorplan tools, "
      "upstream_call) are recorded into a capture that teach_stop turns into a draft recipe. "
      "Starting again stops this session's previous teach session first; other sessions' are "
      "never touched. A session idle for PLAYBOOK_TEACH_IDLE (default 2 h) is stopped.",
      input_schema={"type": "object", "properties": {
          "name": {"type": "string", "maxLength": 60,
                   "description": "A short session name (letters, digits, - _ .)"}},
          "additionalProperties": False},
      effect=WRITE, icon="playbook", title="Start teaching")
def teach_start_tool(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    playbook, stopped = teach.start(owners(ctx)[0], _user_id(ctx), args.get("name"))
    out = {"ok": True, "sessionId": playbook.session_id, "id": playbook.short_id,
           "page": f"/playbooks/{playbook.short_id}", "dir": str(teach.folder(playbook))}
    if stopped:
        out["stopped"] = stopped
    return out


@tool("teach_stop",
      "Stop teach mode for this MCP session (or your token, when stateless), write the "
      "capture's summary and generate its recipe as a draft version (replay it with dry_run; "
      "the playbook page's review_recipe and approve_recipe let it run for real).",
      effect=IDEMPOTENT_WRITE, icon="playbook", title="Stop teaching")
def teach_stop_tool(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    playbook, entries = teach.stop(owners(ctx)[0])
    if playbook is None:
        return {"ok": True, "entries": 0, "sessionId": None,
                "message": "this session is not teaching (teach_start begins)"}
    out: dict[str, Any] = {"ok": True, "entries": entries, "sessionId": playbook.session_id,
                           "id": playbook.short_id, "page": f"/playbooks/{playbook.short_id}"}
    out.update(service.stopped_draft(playbook, ctx.identity, service.MCP_NAMES))
    return out


def _elicit(ctx: ToolContext, question: str) -> bool | None:
    if "elicitation" not in (ctx.session.client_capabilities or {}):
        return None
    try:
        answer = ctx.elicit(question, {"type": "object", "properties": {
            "confirm": {"type": "boolean", "title": "Write to the model",
                        "description": "Tick to let the replay write"}}}, key="confirm_writes")
    except ClientRequestFailed:
        return False  # could not ask after all: do not write
    if answer.get("action") != "accept":
        return False
    content = answer.get("content") or {}
    return content.get("confirm", True) is not False


def _confirmation(ctx: ToolContext, recipe: Any, playbook: Any, args: dict[str, Any],
                  dry_run: bool, source: Any = None) -> Callable[[str], bool | None]:
    """The replay's confirm_writes hook for this era (see the module docstring)."""
    if ctx.inputs is None or dry_run or not any(s.kind == "write" for s in recipe.steps):
        return lambda question: _elicit(ctx, question)
    values = args.get("args") or {}
    check = preflight(recipe, values, dry_run, ctx.identity, playbook, source,
                      settings.current(), "mcp")
    if check.refusal is not None or check.values is None:
        return lambda question: None  # refused before any write: nothing to ask about
    runner = Runner(recipe, values, dry_run, ctx.identity, playbook, door="mcp")
    answer = _elicit(ctx, runner.write_question(check.values))  # may end the request
    return lambda question: answer


def _replay_effect(args: dict[str, Any]) -> Effect | None:
    return service.replay_effect(args.get("dry_run", True) is not False)


def _upstream_effect(args: dict[str, Any]) -> Effect | None:
    method = args.get("method")
    return method_effect(method) if isinstance(method, str) else None


REPLAY_ARGS = ("session_id", "recipe_path", "args", "dry_run", "session")


@tool("replay",
      "Replay a playbook's recipe. A dry run unless dry_run is false: it resolves selectors, "
      "states the planned effects and checks bounds without writing. Give session_id (the "
      "playbook id, its session id or name) or recipe_path (inside the data directory), and "
      "args for the recipe's variables; required variables without a value are refused before "
      "any call. Only approved recipe versions (or your own taught session) run for real, and "
      "only after a dry run with the same args. Executing asks you to confirm before the first "
      "write when your client supports elicitation. The result is a summary; every step's "
      "detail is on the run's page (run). A client that declares the tasks extension gets a "
      "task instead: poll tasks/get for progress and the result, answer its questions with "
      "tasks/update, stop it with tasks/cancel.",
      input_schema={"type": "object", "properties": {
          "session_id": {"type": "string",
                         "description": "The playbook id, its session id or its name"},
          "recipe_path": {"type": "string", "description": "A recipe .json in the data dir"},
          "args": {"type": "object", "description": "Variable values by name"},
          "dry_run": {"type": "boolean", "default": True,
                      "description": "false to execute for real"},
          "session": {"type": "string", "description": "Same as session_id (older name)"}},
          "additionalProperties": False},
      # A dry run (the default) only reads (service.replay_effect).
      effect=service.REPLAY, effect_of=_replay_effect, icon="playbook",
      # A client that speaks the tasks extension gets a task to poll (app.mcp.tasks): the
      # replay runs on the job queue, reports progress there and can be cancelled.
      title="Replay a recipe", task_support="optional")
def replay_tool(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    unknown = [k for k in args if k not in REPLAY_ARGS]
    if unknown:  # (the schema refuses them first; this guards in-process callers too)
        raise ToolError(f"unknown argument {', '.join(unknown)}; known: "
                        f"{', '.join(REPLAY_ARGS[:4])}")
    session = args.get("session_id") or args.get("session")
    if not session and not args.get("recipe_path"):
        raise ToolError("give session_id (a playbook id, session id or name) or recipe_path")
    dry_run = args.get("dry_run", True) is not False
    recipe, playbook, source = service.load_for_replay(ctx.identity, session,
                                                       args.get("recipe_path"),
                                                       service.MCP_NAMES)
    hooks = Hooks(progress=lambda i, total, message: ctx.progress(i, total, message),
                  confirm_writes=_confirmation(ctx, recipe, playbook, args, dry_run, source),
                  cancelled=ctx.cancelled)
    report, _run = replay(recipe, args.get("args") or {}, dry_run, ctx.identity, playbook,
                          hooks, source=source, door="mcp")
    lines = [f"{'Dry run' if dry_run else 'Replay'} of {report['recipe']}: {report['status']} "
             f"({report['steps']['succeeded']}/{report['steps']['total']} steps). "
             f"Run: {report['run']}"]
    if report.get("error"):
        lines.append(report["error"])
    if dry_run and report.get("realRun"):
        lines.append(real_run_words(report["realRun"]))
    for detail in report["details"]:
        lines.append(f"- {detail.get('name')}: {detail.get('status')}"
                     + (f" — {detail['plan']}" if detail.get("plan") else "")
                     + (f" — {detail['error']}" if detail.get("error") else ""))
    return ToolResult(content=[text("\n".join(lines))], structured=summary(report),
                      is_error=not report["ok"])


# The schema object the registry holds: ``catalog.sync_schema`` narrows ``method`` to the
# configured upstream's catalog in place (the embedded server's names from the start).
UPSTREAM_SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "method": catalog.method_schema(),
    "params": {"type": "object",
               "description": "The method's named params. Read the catalog first: "
                              f"upstream_call method '{catalog.DISCOVER}', or the resource "
                              f"{catalog.CATALOG_URI} (OpenRPC: each method's params with "
                              "their JSON Schema, required ones, result, effect, example)"}},
    "required": ["method"], "additionalProperties": False}


@tool("upstream_call",
      "Call a JSON-RPC method of the design-model upstream (get_walls, update_wall_parameter, "
      "preview_rebar_linear, create_rebar_linear ...) through the recording proxy: recorded "
      "while this session teaches. What each method takes, returns and does is in the catalog: "
      f"call method '{catalog.DISCOVER}' or read the resource {catalog.CATALOG_URI}. An invalid "
      "call is refused with every problem listed at once.",
      input_schema=UPSTREAM_SCHEMA,
      effect=Effect("destructive", open_world=True), effect_of=_upstream_effect, icon="playbook",
      title="Call the design model")
def upstream_call_tool(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    # A remote upstream's catalog is fetched on first use, then the schema names its methods.
    catalog.sync_schema(UPSTREAM_SCHEMA, fetch=True)
    payload = {"jsonrpc": "2.0", "id": f"mcp-{ctx.request_id}", "method": args["method"],
               "params": args.get("params") or {}}
    response = teach.forward(payload, owners(ctx))
    if "error" in response:
        error = response["error"] if isinstance(response["error"], dict) else {}
        detail = ""
        data: dict[str, Any] = error["data"] if isinstance(error.get("data"), dict) else {}
        listed = data["errors"] if isinstance(data.get("errors"), list) else []
        said = [f"{e.get('param')}: {e.get('message')}" for e in listed if isinstance(e, dict)]
        if len(said) > 1 and not all(line in str(error.get("message")) for line in said):
            # Listed once: the design model's own refusal already names every problem.
            detail = " — " + "; ".join(said)
        elif isinstance(data.get("methods"), list):
            detail = f" — valid methods: {', '.join(map(str, data['methods']))}"
        raise ToolError(f"{args['method']} failed ({error.get('code')}): "
                        f"{error.get('message')}{detail}", structured={"error": error})
    result = response.get("result")
    structured = result if isinstance(result, dict) else {"result": result}

    return ToolResult(content=[text(json.dumps(result, ensure_ascii=False)[:20000])],
                      structured=structured)


def _playbook(ctx: ToolContext, variables: dict[str, str]) -> Any:
    return service.get(variables["playbook_id"], ctx.identity)


def _complete_playbook(ctx: ToolContext, variable: str, prefix: str,
                       known: dict[str, str]) -> list[str]:
    """The ids of the playbooks the caller sees (theirs, and their studios'), newest first."""
    if variable != "playbook_id":
        return []
    return [p.short_id for p in service.list_for(ctx.identity) if p.short_id.startswith(prefix)]


@resource_template("playbook://{playbook_id}/capture", "playbook-capture",
                   "A playbook's capture.jsonl: one JSON line per recorded call",
                   mime_type="application/x-ndjson", title="Playbook capture",
                   complete=_complete_playbook)
def capture_resource(ctx: ToolContext, uri: str, variables: dict[str, str]) -> str:
    playbook = _playbook(ctx, variables)
    return capture.export(teach.folder(playbook)).decode("ascii")


@resource_template("playbook://{playbook_id}/recipe", "playbook-recipe",
                   "A playbook's recipe.json (generate it with the generate_recipe action)",
                   mime_type="application/json", title="Playbook recipe",
                   complete=_complete_playbook)
def recipe_resource(ctx: ToolContext, uri: str, variables: dict[str, str]) -> str:
    playbook = _playbook(ctx, variables)
    raw = service.read_recipe(playbook)
    if raw is None:
        raise DomainError("this playbook has no recipe yet: run generate_recipe")
    return service.recipe_text(raw)

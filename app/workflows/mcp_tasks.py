"""MCP tasks (``app.mcp.tasks``) on the durable job queue, and the ``run_workflow`` tool.

A task of an ordinary tool (replay) runs as one queued call step, leased by any worker
(``bin/worker`` or a server's in-process thread), so a task outlives the server process that
created it. That step is never retried (max one attempt): a tool that died half-way may have
written, and the task reports ``failed`` rather than writing twice.

``run_workflow`` starts a run of a catalog workflow. Called plainly it answers at once with the
run's id (follow ``harmonic://runs/{id}/events``); a client that declares the tasks extension
gets a task that *is* the run (``tasks.Backing``): no extra job, the run's own jobs do the work,
any process reads the task's progress (the workflow's steps done out of its steps) and result
from the run's rows, and ``tasks/cancel`` cancels the run, so its queued jobs never run.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from flask import current_app

from app.actions.effects import Effect
from app.mcp import tasks
from app.mcp.content import ToolError, ToolResult, text
from app.mcp.context import ToolContext
from app.mcp.registry import tool
from app.workflows import catalog, queue, runs, worker
from app.workflows.calls import CallContext, CallStep, callable_step, enqueue_calls

STEP = "mcp.task"
RESULT_TEXT = 2000  # characters of a run's result shown in the text block (all of it is
# in structuredContent)


@callable_step(STEP)
def run_task(ctx: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return tasks.execute(str(args["task"]), current_app.extensions["mcp"])


def launch(task_id: str, tool_name: str, user_id: uuid.UUID | None) -> uuid.UUID:
    run_id = enqueue_calls(f"MCP task {tool_name}",
                           [CallStep("task", STEP, {"task": task_id}, max_attempts=1)],
                           user_id=user_id)
    worker.kick()  # this process's worker thread (when it has one) starts it now
    return run_id


tasks.provide(launch)


# -- run_workflow -------------------------------------------------------------------------------

RUN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "run": {"type": "string", "description": "The run's short id"},
        "workflow": {"type": "string"},
        "status": {"type": "string",
                   "description": "queued, running, succeeded, failed or cancelled"},
        "path": {"type": "string", "description": "The run's page"},
        "events": {"type": "string", "description": "The run's events resource"},
        "steps": {"type": "object", "properties": {"done": {"type": "integer"},
                                                   "total": {"type": "integer"}}},
        # A workflow may return any JSON value: an object as it is, anything else wrapped as
        # {"value": ...}, so the schema stays one type (strict clients warn about an untyped
        # property and about a union of types) and a client reads it without decoding text.
        "result": {"type": "object",
                   "description": "What the run returned once it succeeded: its object, or "
                                  "{\"value\": ...} when it returned anything else"},
        "error": {"type": "string"},
    },
    "required": ["run", "workflow", "status", "path", "events"],
}


def start(ctx: ToolContext, args: dict[str, Any]) -> uuid.UUID:
    """Check the call and start the run as the caller; ToolError says what to fix (the
    caller's right to run it was asked at ``tools/call``, from the tool's effect)."""
    if ctx.identity is None or ctx.identity.user_id is None:
        raise ToolError("sign in first: a workflow runs as the person who starts it")
    name = str(args.get("workflow") or "").strip()
    entry = catalog.find(name)
    if entry is None:
        known = ", ".join(e.name for e in catalog.entries()) or "none"
        raise ToolError(f"no workflow named {name!r} (the catalog has: {known}; see /workflows)")
    if not entry.valid or entry.compiled is None:
        problems = "; ".join(f"{p.path}: {p.message}" for p in entry.problems)
        raise ToolError(f"the workflow {entry.name} is not valid: {problems}")
    inputs = args.get("inputs") or {}
    return runs.start_compiled(entry.compiled, inputs, ctx.identity.user_id, by=ctx.identity)


def _progress(run: dict[str, Any]) -> tuple[int, int]:
    """(steps done, steps in the workflow); a finished run has done them all (a branch not
    taken counts as done)."""
    steps = {step["name"] for step in (run.get("compiled") or {}).get("steps") or []}
    if run["status"] == "succeeded":
        return len(steps), len(steps)
    done = {(job.get("payload") or {}).get("base") or job["step"]
            for job in runs.jobs(run["id"]) if job["status"] == "done"}
    return len(done & steps), len(steps)


def describe(run: dict[str, Any]) -> dict[str, Any]:
    """The structured result: where the run is, and what it returned or why it failed."""
    done, total = _progress(run)
    short = run["short_id"]
    out: dict[str, Any] = {"run": short, "workflow": run["workflow"], "status": run["status"],
                           "path": f"/runs/{short}", "events": queue.events_uri(run["id"]),
                           "steps": {"done": done, "total": total}}
    if run["status"] == "succeeded":
        value = run.get("result")
        out["result"] = value if isinstance(value, dict) else {"value": value}
    if run.get("error"):
        out["error"] = str(run["error"])
    return out


def _outcome(run: dict[str, Any]) -> ToolResult:
    info = describe(run)
    line = (f"Run {info['run']} of {info['workflow']}: {info['status']} "
            f"({info['steps']['done']}/{info['steps']['total']} steps). Page: {info['path']}")
    if run["status"] == "succeeded":
        shown = json.dumps(info.get("result"), ensure_ascii=False, default=str)
        if len(shown) > RESULT_TEXT:
            shown = shown[:RESULT_TEXT] + f"… ({len(shown)} characters; structuredContent " \
                                          f"has all of it)"
        line += f"\nResult: {shown}"
    elif info.get("error"):
        line += f"\n{info['error']}"
    return ToolResult(content=[text(line)], structured=info,
                      is_error=run["status"] == "failed")


def state(run_id: uuid.UUID) -> tasks.WorkState:
    """The task's view of its run: working until the run ends; then completed with the run's
    outcome (a failed run is a tool error, as a tool's is), or cancelled."""
    run = queue.get_run(run_id)
    if run is None:
        return tasks.WorkState("failed", error={"code": -32603,
                                                "message": "the run no longer exists"})
    done, total = _progress(run)
    if run["status"] in ("queued", "running"):
        return tasks.WorkState("working", done, total,
                               f"{run['status'].capitalize()}: {done} of {total} steps done")
    if run["status"] == "cancelled":
        return tasks.WorkState("cancelled", done, total, "Cancelled")
    return tasks.WorkState("completed", done, total,
                           "Completed" if run["status"] == "succeeded" else "Failed",
                           result=_outcome(run).to_dict())


def cancel(run_id: uuid.UUID) -> None:
    queue.cancel_run(run_id, "cancelled by the client (tasks/cancel)")


@tool("run_workflow",
      "Start a run of a workflow from the catalog (/workflows lists them, each with its "
      "workload keys); inputs override its workload defaults. The run is durable: it goes on "
      "the job queue, runs as you, and its page and events resource "
      "(harmonic://runs/{id}/events) show each step. Without the tasks extension this answers "
      "at once with the run's id; a client that declares it gets a task that is the run: poll "
      "tasks/get for the steps done and, once it ends, the run's result; tasks/cancel cancels "
      "the run (its remaining steps do not run).",
      input_schema={"type": "object", "properties": {
          "workflow": {"type": "string", "description": "The workflow's name, e.g. studio-check"},
          "inputs": {"type": "object", "description": "Values for workload keys, e.g. "
                                                      "{\"studio\": \"team\"}"}},
          "required": ["workflow"], "additionalProperties": False},
      output_schema=RUN_SCHEMA,
      # A workflow may run any step its document holds, writes and outside calls included.
      effect=Effect("destructive", open_world=True), icon="playbook",
      title="Run a workflow", task_support="optional")
def run_workflow_tool(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    run_id = start(ctx, args)
    run = queue.get_run(run_id)
    assert run is not None  # just created
    info = describe(run)
    return ToolResult(content=[text(
        f"Started run {info['run']} of {info['workflow']}. Follow it on {info['path']} or "
        f"read {info['events']}; it runs on the job queue whether or not you wait.")],
        structured=info)


tasks.back("run_workflow", tasks.Backing(start=start, state=state, cancel=cancel))

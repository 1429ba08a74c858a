"""MCP tasks (``app.mcp.tasks``) run on the durable job queue: each task's run is one queued
call step, leased by any worker (``bin/worker`` or a server's in-process thread), so a task
outlives the server process that created it.

A task's step is never retried (max one attempt): a tool that died half-way may have written,
and the task reports ``failed`` rather than writing twice.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import current_app

from app.mcp import tasks
from app.workflows import worker
from app.workflows.calls import CallContext, CallStep, callable_step, enqueue_calls

STEP = "mcp.task"


@callable_step(STEP)
def run_task(ctx: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return tasks.execute(str(args["task"]), current_app.extensions["mcp"])


def launch(task_id: str, tool: str, user_id: uuid.UUID | None) -> uuid.UUID:
    run_id = enqueue_calls(f"MCP task {tool}",
                           [CallStep("task", STEP, {"task": task_id}, max_attempts=1)],
                           user_id=user_id)
    worker.kick()  # this process's worker thread (when it has one) starts it now
    return run_id


tasks.provide(launch)

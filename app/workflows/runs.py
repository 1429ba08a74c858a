"""Starting runs and reading them back (the service layer the pages, CLI and MCP share)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from app.core.identity import Identity
from app.models.base import SHORT_ID
from app.services import revocation
from app.services.errors import Invalid, NotFound
from app.workflows import admission, queue, settings, worker
from app.workflows.compile import compile_document
from app.workflows.document import DocumentError, parse
from app.workflows.engine import reading
from app.workflows.queue import JobSpec


def start(text: str, inputs: dict[str, Any] | None = None,
          user_id: uuid.UUID | None = None, *, name: str | None = None,
          by: Identity | None = None, operator: bool = False) -> uuid.UUID:
    """Validate, compile and enqueue a workflow; Invalid lists the problems with paths.

    ``name`` names a document without metadata (its file's stem); ``operator`` says the
    machine's operator starts it (the command line), who may set every input."""
    try:
        compiled = compile_document(parse(text), name)
    except DocumentError as exc:
        raise Invalid("the workflow is not valid", errors=[
            {"param": p.path, "message": p.message} for p in exc.problems]) from None
    return start_compiled(compiled, inputs or {}, user_id, by=by, operator=operator)


def start_compiled(compiled: dict[str, Any], inputs: dict[str, Any],
                   user_id: uuid.UUID | None, by: Identity | None = None, *,
                   operator: bool = False, run_id: uuid.UUID | None = None) -> uuid.UUID:
    """Enqueue a run of a compiled workflow with ``inputs`` (checked first: Invalid names each
    input that is unknown, missing, or one the caller may not set). ``run_id``: the id to give
    it; a run with that id already there is that run (a retried start starts nothing more)."""
    admission.check_inputs(compiled, inputs, user_id, by, operator)
    limits = {s["name"]: s["retries"] + 1 for s in compiled["steps"]
              if s.get("retries") is not None}
    run_id = queue.create_run(
        kind="workflow", workflow=compiled["name"], path=compiled["path"], inputs=inputs,
        compiled=compiled, user_id=user_id, by=by,
        first=[JobSpec(compiled["entry"],
                       {"kind": admission.step_kind(compiled, compiled["entry"])},
                       max_attempts=limits.get(compiled["entry"]))],
        max_attempts=settings.get_int("WORKFLOWS_MAX_ATTEMPTS"), run_id=run_id)

    worker.kick()
    return run_id


def find(ident: str) -> dict[str, Any]:
    """A run by short id or UUID, or NotFound."""
    ident = (ident or "").strip().lower()
    column = queue.RUNS.c.short_id if SHORT_ID.match(ident) else queue.RUNS.c.id
    value: Any = ident
    if not SHORT_ID.match(ident):
        try:
            value = uuid.UUID(ident)
        except ValueError:
            raise NotFound(f"no run {ident!r}") from None

    with reading() as conn:
        row = conn.execute(select(queue.RUNS).where(column == value)).mappings().one_or_none()
    if row is None:
        raise NotFound(f"no run {ident!r}")
    return dict(row)


def recent(workflow: str | None = None, limit: int = 20,
           user_id: uuid.UUID | None = None) -> list[dict[str, Any]]:
    """The newest runs (of ``workflow``, started by ``user_id``, when given)."""
    query = select(queue.RUNS).order_by(queue.RUNS.c.created_at.desc()).limit(limit)
    if workflow:
        query = query.where(queue.RUNS.c.workflow == workflow)
    if user_id is not None:
        query = query.where(queue.RUNS.c.user_id == user_id)
    with reading() as conn:
        return [dict(r) for r in conn.execute(query).mappings().all()]


def jobs(run_id: uuid.UUID) -> list[dict[str, Any]]:
    with reading() as conn:
        return [dict(r) for r in conn.execute(
            select(queue.JOBS).where(queue.JOBS.c.run_id == run_id)
            .order_by(queue.JOBS.c.id)).mappings().all()]


def timeline(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per step instance: first start, end, duration and outcome, in order of first event."""
    rows: dict[str, dict[str, Any]] = {}
    for event in events:
        step = event["step"]
        if not step:
            continue
        row = rows.setdefault(step, {"step": step, "started": None, "finished": None,
                                     "status": "waiting", "attempts": 0, "detail": ""})
        if event["type"] == "step_started":
            row["started"] = row["started"] or event["time"]
            row["attempts"] = event["data"].get("attempt", row["attempts"])
            row["status"] = "running"
        elif event["type"] == "step_completed":
            row["finished"], row["status"] = event["time"], "done"
        elif event["type"] == "action_error":
            row["status"] = "retrying" if "retry_in" in event["data"] else "failed"
            row["detail"] = str(event["data"].get("error", ""))
            if row["status"] == "failed":
                row["finished"] = event["time"]
        elif event["type"] == "lease_reclaimed":
            row["detail"] = f"reclaimed from {event['data'].get('from_worker')}"
    for row in rows.values():
        if row["started"] and row["finished"]:
            row["seconds"] = round((row["finished"] - row["started"]).total_seconds(), 3)
        else:
            row["seconds"] = None
    return list(rows.values())


@revocation.after_commit
def cancel_made_by(ended: revocation.Ended) -> None:
    """A revoked grant's or agent's unfinished runs are cancelled, on the queue's own
    connection once the revocation has committed."""
    made = ended.made(queue.RUNS.c.made_by_token_id, queue.RUNS.c.made_by_grant_id,
                      queue.RUNS.c.user_id)
    if made is None:
        return
    for run_id in queue.unfinished_runs(made):
        queue.cancel_run(run_id, "the access that started it was revoked")

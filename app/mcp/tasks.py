"""The MCP tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``): long tool calls run
as durable tasks that any server process can report on.

A tool offers task execution by declaring ``task_support`` ("optional" or "required"; it shows
in tools/list as ``execution.taskSupport``). When the client declared the extension (in its
session's capabilities, or for one request in ``_meta["io.modelcontextprotocol/
clientCapabilities"]``), ``tools/call`` of such a tool stores a task row (``mcp_tasks``),
commits it, queues its run on the durable job queue and answers a flat ``CreateTaskResult``
(``resultType: "task"``) at once. The server decides: there is no client ``task`` hint. A client
without the extension gets the plain synchronous result from an "optional" tool and -32021
(missing required client capability) from a "required" one.

Any process then answers ``tasks/get`` (status, ``statusMessage`` and progress while it runs, the
tool's result inlined once completed, the JSON-RPC error once failed, the open ``inputRequests``
while it waits for the client), ``tasks/update`` (answers to those questions) and
``tasks/cancel``. ``tasks/result`` and ``tasks/list`` do not exist in this version of the
extension, so they are unknown methods (-32601).

The run happens on whichever worker leases the queued job (the feature that owns the queue
provides the launcher, ``provide``): the tool's handler runs with a ``ToolContext`` whose
progress goes to the task row and whose cancellation is the row's status. Questions work as in
the stateless era (``app.mcp.input_required``): a question not yet answered parks the task in
``input_required``; once ``tasks/update`` has answered every open question the handler runs
again from the start and finds its answers, so a handler asks before it writes.

What cancel guarantees: the task's status becomes ``cancelled`` at once and stays so; the run
stops at the handler's next cancellation check (a replay checks between steps and before its
first write). Writes a handler made before that check are not undone.

A tool whose work is already durable (a workflow run: its own jobs on the queue) gives a
``Backing`` instead (``back``): creating the task starts that work and keeps its id, and each
``tasks/get`` reads its state (progress, then the result); ``tasks/cancel`` cancels it, so its
remaining jobs never run. Nothing runs the tool's handler for such a task.
"""

from __future__ import annotations

import json
import logging
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, update

from app.actions import ballot_secrecy
from app.core import token_cache
from app.core.identity import Identity, act_as
from app.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from app.db import writing
from app.extensions import db
from app.mcp import negotiate
from app.mcp.content import ToolError, error_result
from app.mcp.context import ClientRequestFailed, SessionState, ToolContext
from app.mcp.info import MODERN_VERSIONS
from app.mcp.input_required import InputRequired
from app.mcp.jsonrpc import MISSING_CAPABILITY
from app.mcp.store import json_or
from app.models.base import utcnow
from app.models.mcp_tasks import McpTask
from app.services import revocation
from app.services.errors import DomainError

log = logging.getLogger("harmonic.mcp.tasks")

EXTENSION = "io.modelcontextprotocol/tasks"
TTL_MS = 24 * 3600 * 1000  # a task (and its result) can be read for a day after it was created
POLL_MS = 500  # how often a client should ask tasks/get
ACTIVE = ("working", "input_required")
TERMINAL = ("completed", "failed", "cancelled")

# launch(task_id, tool name, user id) -> the queued run's id; given by the queue's owner.
Launcher = Callable[[str, str, uuid.UUID | None], uuid.UUID]
_launcher: Launcher | None = None


def provide(launcher: Launcher) -> None:
    """The job queue's owner says how a task's run is queued (the layers keep app.mcp from
    importing it)."""
    global _launcher
    _launcher = launcher


@dataclass(frozen=True)
class WorkState:
    """Where a backing's work stands: ``status`` is a task status (working, completed, failed,
    cancelled); ``result`` the CallToolResult once completed, ``error`` the JSON-RPC error once
    failed."""

    status: str
    progress: int | None = None
    total: int | None = None
    message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class Backing:
    """Durable work a tool's task stands for: ``start(ctx, args)`` checks the call and starts
    the work (a ToolError or DomainError refuses it, answered as a tool error, no task), returning
    its id; ``state(id)`` reads it; ``cancel(id)`` stops what has not run yet."""

    start: Callable[[ToolContext, dict[str, Any]], uuid.UUID]
    state: Callable[[uuid.UUID], WorkState]
    cancel: Callable[[uuid.UUID], None]


_backings: dict[str, Backing] = {}


def back(tool_name: str, backing: Backing) -> None:
    """Tasks of ``tool_name`` stand for ``backing``'s work (given by the feature owning it)."""
    _backings[tool_name] = backing


# -- negotiation --------------------------------------------------------------------------------

def declared(ctx: ToolContext, params: dict[str, Any]) -> bool:
    """Whether this request's client speaks the extension: its session (or, in the stateless
    era, the request's own ``_meta``) declares it, or this one request opts in."""
    return negotiate.declared(ctx, params, EXTENSION) is not None


def missing() -> RpcError:
    return RpcError(MISSING_CAPABILITY,
                    f"Missing required client capability: the {EXTENSION} extension "
                    f"(declare it under capabilities.extensions)",
                    {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})


def _gate(ctx: ToolContext, params: dict[str, Any]) -> None:
    if not declared(ctx, params):
        raise missing()


# -- the wire shapes ----------------------------------------------------------------------------

def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(task: McpTask) -> dict[str, Any]:
    """The Task fields every answer about a task carries."""
    out: dict[str, Any] = {"taskId": task.id, "status": task.status,
                           "createdAt": _iso(task.created_at),
                           "lastUpdatedAt": _iso(task.updated_at),
                           "ttlMs": task.ttl_ms, "pollIntervalMs": task.poll_ms}
    if task.status_message:
        out["statusMessage"] = task.status_message
    return out


def detailed(task: McpTask) -> dict[str, Any]:
    """tasks/get's DetailedTask: the envelope, the progress so far, and by status the open
    questions, the inlined result or the error."""
    out = envelope(task)
    if task.progress is not None:
        progress: dict[str, Any] = {"progress": task.progress}
        if task.total is not None:
            progress["total"] = task.total
        out["_meta"] = {"io.harmonic/progress": progress}
    if task.status == "input_required":
        out["inputRequests"] = json_or(task.input_requests, {})
    elif task.status == "completed":
        out["result"] = json_or(task.result, {"content": []})
    elif task.status == "failed":
        out["error"] = json_or(task.error, {"code": INTERNAL_ERROR, "message": "Internal error"})
    out["resultType"] = "complete"
    return out


# -- creating a task ----------------------------------------------------------------------------

@writing()
def create(ctx: ToolContext, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Store the task (committed before we answer: an immediate tasks/get finds it), queue its
    run and answer the CreateTaskResult. A backed tool starts its own work first: refused, it
    answers the tool error and no task exists."""
    if ballot_secrecy.casts_a_ballot(tool_name, args):
        # A task keeps its arguments with its caller until it runs: a ballot is cast at once.
        return error_result("a ballot is cast at once, not as a task: call execute_action "
                            "without task").to_dict()
    backing = _backings.get(tool_name)
    work_id: uuid.UUID | None = None
    if backing is not None:
        try:
            work_id = backing.start(ctx, args)
        except ToolError as exc:
            db.session.rollback()
            return error_result(exc.message, exc.structured).to_dict()
        except DomainError as exc:
            db.session.rollback()
            return error_result(f"{exc.kind}: {exc.message}").to_dict()
    elif _launcher is None:
        raise RpcError(INTERNAL_ERROR, "tasks cannot run: no job queue is configured")
    now = utcnow()
    identity = ctx.identity
    task = McpTask(id=secrets.token_urlsafe(24), user_id=identity.user_id if identity else None,
                   scopes=",".join(identity.scopes) if identity else "", tool=tool_name,
                   caller_kind=identity.kind if identity else "person",
                   made_by_token_id=identity.token_id if identity else None,
                   made_by_grant_id=identity.grant_id if identity else None,
                   representation_id=identity.session_to_carry() if identity else None,
                   arguments=json.dumps(args), status="working",
                   input_requests="{}", input_responses=json.dumps(ctx.inputs or {}),
                   client_capabilities=json.dumps(ctx.session.client_capabilities or {}),
                   ttl_ms=TTL_MS, poll_ms=POLL_MS, created_at=now, updated_at=now,
                   expires_at=now + timedelta(milliseconds=TTL_MS), run_id=work_id)
    db.session.add(task)
    db.session.commit()
    _forget_expired(now)
    if backing is None:
        _queue(task)
    return {"resultType": "task", **envelope(task)}


@writing()
def _queue(task: McpTask) -> None:
    assert _launcher is not None
    run_id = _launcher(task.id, task.tool, task.user_id)
    db.session.execute(update(McpTask).where(McpTask.id == task.id).values(run_id=run_id))
    db.session.commit()


@writing()
def _forget_expired(now: datetime) -> None:
    """Tasks past their TTL are gone (SEP-2663 lets a server drop them then)."""
    try:
        db.session.execute(delete(McpTask).where(McpTask.expires_at < now))
        db.session.commit()
    except Exception:  # housekeeping must never fail a call
        db.session.rollback()
        log.exception("could not delete expired tasks")


# -- tasks/get, tasks/update, tasks/cancel ------------------------------------------------------

def _find(ctx: ToolContext, params: dict[str, Any], lock: bool = False) -> McpTask:
    _gate(ctx, params)
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise RpcError(INVALID_PARAMS, "Invalid params: taskId is required")
    task = db.session.get(McpTask, task_id, with_for_update=lock, populate_existing=True)
    owner = ctx.identity.user_id if ctx.identity is not None else None
    if task is None or task.user_id != owner or task.expires_at < utcnow():
        raise RpcError(INVALID_PARAMS, f"Invalid params: unknown task {task_id!r} (it never "
                                       f"existed, expired, or belongs to someone else)",
                       {"taskId": task_id})
    return task


def tasks_get(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    task = _find(ctx, params)
    backing = _backings.get(task.tool)
    if backing is None or task.run_id is None or task.status not in ACTIVE:
        return detailed(task)
    state = backing.state(task.run_id)
    if state.status in TERMINAL:  # record the outcome once: it no longer changes
        db.session.rollback()
        _settle(task.id, state.status, progress=state.progress, total=state.total,
                status_message=(state.message or "")[:2000] or None,
                result=json.dumps(state.result) if state.result is not None else None,
                error=json.dumps(state.error) if state.error is not None else None)
        return detailed(_find(ctx, params))
    out = detailed(task)  # still working: shown, not stored (the work's own rows are the truth)
    db.session.rollback()
    if state.progress is not None:
        progress: dict[str, Any] = {"progress": state.progress}
        if state.total is not None:
            progress["total"] = state.total
        out["_meta"] = {"io.harmonic/progress": progress}
    if state.message:
        out["statusMessage"] = state.message
    return out


@writing()
def tasks_update(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    """Answers to some or all open questions; once none is open the run starts again."""
    responses = params.get("inputResponses")
    if not isinstance(responses, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
    task = _find(ctx, params, lock=True)
    pending: dict[str, Any] = json_or(task.input_requests, {})
    if task.status != "input_required":
        db.session.rollback()
        return {"resultType": "complete"}  # nothing is waiting: the answers change nothing
    answered = {key: value for key, value in responses.items() if key in pending}
    for key, value in answered.items():
        if not isinstance(value, dict):
            db.session.rollback()
            raise RpcError(INVALID_PARAMS, f"Invalid params: inputResponses[{key!r}] must be "
                                           f"an object (the client's result)")
    if not answered:  # keys we never asked about are ignored
        db.session.rollback()
        return {"resultType": "complete"}
    known = {**json_or(task.input_responses, {}), **answered}
    still = {key: value for key, value in pending.items() if key not in answered}
    task.input_responses = json.dumps(known)
    task.input_requests = json.dumps(still)
    task.updated_at = utcnow()
    if not still:
        task.status, task.status_message = "working", "Resuming with the answers"
    db.session.commit()
    if not still:
        _queue(task)
    return {"resultType": "complete"}


def tasks_cancel(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    """Cancel an active task (a terminal one is left as it is: the same empty ack)."""
    task = _find(ctx, params)
    db.session.rollback()
    moved = _settle(task.id, "cancelled", status_message="Cancelled by the client")
    backing = _backings.get(task.tool)
    if moved and backing is not None and task.run_id is not None:
        backing.cancel(task.run_id)  # its remaining work never runs
    return {"resultType": "complete"}


METHODS = {"tasks/get": tasks_get, "tasks/update": tasks_update, "tasks/cancel": tasks_cancel}


@writing()
def _settle(task_id: str, status: str, **values: Any) -> bool:
    """Move an active task to ``status`` (only if still active: a cancel is never overwritten
    by a run that finishes meanwhile). True when this call moved it."""
    moved = db.session.execute(
        update(McpTask).where(McpTask.id == task_id, McpTask.status.in_(ACTIVE))
        .values(status=status, updated_at=utcnow(), **values))
    db.session.commit()
    return bool(getattr(moved, "rowcount", 0))


# -- running a task (on a worker) ---------------------------------------------------------------

class TaskSession(SessionState):
    """The client as the task remembers it; cancelled when the task's row says so."""

    stateless = True

    def __init__(self, task: McpTask) -> None:
        super().__init__(f"task:{task.id}")
        self.transport = "task"
        self.task_id = task.id
        self.initialized = True
        self.protocol_version = MODERN_VERSIONS[0]
        self.client_capabilities = json_or(task.client_capabilities, {})
        self.log_level = None  # type: ignore[assignment]  # no one listens to log messages

    def is_cancelled(self, request_id: Any) -> bool:
        with db.engine.connect() as conn:  # its own snapshot, beside the handler's session
            status = conn.execute(db.select(McpTask.status)
                                  .where(McpTask.id == self.task_id)).scalar_one_or_none()
        return status != "working"


class TaskChannel:
    """Where a task's notifications go: progress to its row; nothing else has a listener, and
    a task cannot send requests (its questions are inputRequests)."""

    closed = None

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id

    def notify(self, message: dict[str, Any]) -> None:
        if message.get("method") != "notifications/progress":
            return
        params = message.get("params") or {}
        values = {"progress": params.get("progress"), "total": params.get("total"),
                  "updated_at": utcnow()}
        if params.get("message"):
            values["status_message"] = str(params["message"])[:2000]
        try:  # best effort, in its own transaction: progress must never stop the run
            with db.engine.begin() as conn:
                conn.execute(update(McpTask).where(McpTask.id == self.task_id,
                                                   McpTask.status == "working").values(**values))
        except Exception:
            log.warning("could not record the progress of task %s", self.task_id,
                        exc_info=True)

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]:
        raise ClientRequestFailed("a task cannot send requests to the client")


def _identity(task: McpTask) -> Identity | None:
    if task.user_id is None:
        return None
    scopes = tuple(s for s in task.scopes.split(",") if s) or ("read",)
    # Its creator's kind, token and grant, and the representation session it was asked for in:
    # a task never acts as more than who asked for it.
    return Identity(user_id=task.user_id, scopes=scopes, via="task", kind=task.caller_kind,
                    token_id=task.made_by_token_id, grant_id=task.made_by_grant_id,
                    representing=token_cache.representing_in(task.representation_id)
                    if task.representation_id is not None else None)


def execute(task_id: str, server: Any) -> dict[str, Any]:
    """Run the task's tool once, as its creator, and record what became of it. ``server`` is
    the McpServer whose registry names the tool."""
    task = db.session.get(McpTask, task_id, populate_existing=True)
    if task is None or task.status != "working":
        return {"task": task_id, "skipped": task.status if task else "gone"}
    tool = server.find_tool(task.tool)
    if tool is None:
        _settle(task_id, "failed", error=json.dumps(
            {"code": INTERNAL_ERROR, "message": f"the tool {task.tool} is not served here"}))
        return {"task": task_id, "status": "failed"}
    identity = _identity(task)
    act_as(identity)
    ctx = ToolContext(identity=identity, session=TaskSession(task),
                      channel=TaskChannel(task_id), request_id=f"task:{task_id}",
                      progress_token=f"task:{task_id}",
                      inputs=json_or(task.input_responses, {}))
    args = json_or(task.arguments, {})
    db.session.commit()  # end the read: the handler starts from a fresh snapshot
    try:
        result = server._run_tool(tool, ctx, args)
    except InputRequired as exc:
        db.session.rollback()
        moved = _settle(task_id, "input_required", input_requests=json.dumps(exc.requests),
                        status_message="Waiting for the client's answers (tasks/update)")
        return {"task": task_id, "status": "input_required" if moved else "cancelled"}
    except RpcError as exc:
        db.session.rollback()
        error = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        _settle(task_id, "failed", error=json.dumps(error), status_message=exc.message)
        return {"task": task_id, "status": "failed"}
    except Exception:
        db.session.rollback()
        log.exception("task %s (%s) failed", task_id, task.tool)
        _settle(task_id, "failed", error=json.dumps(
            {"code": INTERNAL_ERROR, "message": "Internal error"}), status_message="Failed")
        return {"task": task_id, "status": "failed"}
    if result is None:  # stopped by a cancel: the row says cancelled already
        db.session.rollback()
        return {"task": task_id, "status": "cancelled"}
    db.session.commit()
    out = result.to_dict()
    moved = _settle(task_id, "completed", result=json.dumps(out),
                    status_message="Failed" if result.is_error else "Completed")
    return {"task": task_id, "status": "completed" if moved else "cancelled"}


@revocation.ends
def cancel_tasks(ended: revocation.Ended) -> None:
    """A revoked grant's or agent's unfinished tasks are cancelled (their queued run then finds
    them so and does nothing)."""
    made = ended.made(McpTask.made_by_token_id, McpTask.made_by_grant_id, McpTask.user_id)
    if made is not None:
        db.session.execute(update(McpTask).where(made, McpTask.status.in_(
            ("working", "input_required"))).values(
            status="cancelled", status_message="Cancelled: the access that created it was "
                                               "revoked", updated_at=utcnow()))

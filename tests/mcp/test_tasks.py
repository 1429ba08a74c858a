"""The MCP tasks extension (SEP-2663) with the official SDK as the client, against two gunicorn
servers on one database: a replay runs as a durable task (create, progress, the confirmation
question answered with tasks/update, the result inlined in tasks/get), a cancelled replay task
leaves the design model unchanged, and whichever server process is asked answers for a task the
other created. The conformance suite's tasks scenarios run in tests/mcp/test_processes.py.

The SDK has no tasks client of its own, but it lets a client extension claim a result shape:
``Tasks`` below claims ``resultType: "task"`` on tools/call and finishes it by polling tasks/get
(answering any questions through tasks/update), so ``client.call_tool`` returns the tool's
ordinary result.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from typing import Any, Literal

import pytest
from flask import Flask
from pydantic import ConfigDict, Field, TypeAdapter

from tests.mcp.clients import text_of
from tests.mcp.conftest import gunicorns

pytestmark = pytest.mark.slow

EXTENSION = "io.modelcontextprotocol/tasks"
SELECTOR = {"category": "OST_Walls", "typeName": "RC150", "levelName": "1FL"}
CONFIRM = {"action": "accept", "content": {"confirm": True}}
ANY: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


@cache
def _sdk_types() -> Any:
    """The request and result models of the extension, as SDK types (built lazily: the SDK
    is a test dependency that imports slowly)."""
    from mcp_types import Request, RequestParams, Result

    class TaskParams(RequestParams):
        model_config = ConfigDict(extra="allow")
        task_id: str = Field(alias="taskId")

    class TasksGet(Request[TaskParams, Literal["tasks/get"]]):
        method: Literal["tasks/get"] = "tasks/get"
        name_param = "taskId"

    class TasksUpdate(Request[TaskParams, Literal["tasks/update"]]):
        method: Literal["tasks/update"] = "tasks/update"
        name_param = "taskId"

    class TasksCancel(Request[TaskParams, Literal["tasks/cancel"]]):
        method: Literal["tasks/cancel"] = "tasks/cancel"
        name_param = "taskId"

    class CreateTaskResult(Result):
        model_config = ConfigDict(extra="allow")
        result_type: Literal["task"] = Field(alias="resultType")
        task_id: str = Field(alias="taskId")
        status: str

    return TaskParams, TasksGet, TasksUpdate, TasksCancel, CreateTaskResult


async def _send(session: Any, kind: Any, task_id: str, **extra: Any) -> dict[str, Any]:
    params_type = _sdk_types()[0]
    return await session.send_request(kind(params=params_type(taskId=task_id, **extra)), ANY)


async def task_get(session: Any, task_id: str) -> dict[str, Any]:
    return await _send(session, _sdk_types()[1], task_id)


async def task_update(session: Any, task_id: str, answers: dict[str, Any]) -> dict[str, Any]:
    return await _send(session, _sdk_types()[2], task_id, inputResponses=answers)


async def task_cancel(session: Any, task_id: str) -> dict[str, Any]:
    return await _send(session, _sdk_types()[3], task_id)


async def wait_for(session: Any, task_id: str, *statuses: str) -> dict[str, Any]:
    """Poll tasks/get until the task reaches one of ``statuses`` (or a terminal one)."""
    for _ in range(600):
        got = await task_get(session, task_id)
        if got["status"] in statuses or got["status"] in ("completed", "failed", "cancelled"):
            return got
        await asyncio.sleep(got.get("pollIntervalMs", 200) / 1000)
    raise AssertionError(f"task {task_id} stayed {got['status']}")


def tasks_extension(seen: list[dict[str, Any]]) -> Any:
    """The client side of the extension: claim CreateTaskResult, poll, answer, return."""
    from mcp.client.extension import ClientExtension, ResultClaim
    from mcp_types import CallToolResult

    create_type = _sdk_types()[4]

    async def resolve(created: Any, ctx: Any) -> Any:
        seen.append({"created": created.model_dump(by_alias=True)})
        while True:
            got = await wait_for(ctx.session, created.task_id, "input_required")
            seen.append(got)
            if got["status"] == "input_required":
                # Our "user" confirms every write the replay asks about.
                await task_update(ctx.session, created.task_id,
                                  {key: CONFIRM for key in got["inputRequests"]})
                continue
            assert got["status"] == "completed", got
            return CallToolResult.model_validate(got["result"])

    class Tasks(ClientExtension):
        identifier = EXTENSION

        def claims(self) -> list[Any]:
            return [ResultClaim(result_type="task", model=create_type, resolve=resolve)]

    return Tasks()


@asynccontextmanager
async def sdk(base: str, token: str, seen: list[dict[str, Any]]) -> AsyncIterator[Any]:
    """The SDK client (2026-07-28) with the tasks extension and an elicitation capability."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def never_asked(context: Any, params: Any) -> Any:
        raise AssertionError("a task's questions come through tasks/get, not elicitation")

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(60.0)) as http:
        async with Client(streamable_http_client(base + "/mcp", http_client=http),
                          mode="auto", extensions=[tasks_extension(seen)],
                          elicitation_callback=never_asked) as client:  # type: ignore[arg-type]
            yield client


@pytest.fixture(scope="module")
def task_pair(app: Flask) -> Any:
    """Two servers on one database, each with its in-process queue worker."""
    with gunicorns(app, {"WORKFLOWS_WORKER": "on"}, {"WORKFLOWS_WORKER": "on"}) as (a, b):
        yield a, b


def _comments(app: Flask) -> list[Any]:
    """The Comments of the walls the recipe writes, read from the design model's tables."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import DesignElement

    with app.app_context():
        walls = db.session.scalars(select(DesignElement).where(
            DesignElement.category == "OST_Walls", DesignElement.type_name == "RC150",
            DesignElement.level == "1FL", DesignElement.kind == "instance")).all()
        found = [w.parameters.get("Comments") for w in walls]
        db.session.rollback()
    return [v.get("value") if isinstance(v, dict) else v for v in found]


def test_a_replay_runs_as_a_task_and_a_cancelled_one_writes_nothing(  # type: ignore[no-untyped-def]
        app: Flask, task_pair: tuple[str, str], studio, demo) -> None:
    a, b = task_pair
    seen: list[dict[str, Any]] = []

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with sdk(a, studio.token, seen) as one, sdk(b, studio.token, []) as two:
            # Teach a write, then set the wall back: the replay is what writes "Checked".
            assert not (await one.call_tool("teach_start", {"name": "task-walls"})).is_error
            for method, params in (("get_walls", {"level": "1FL"}),
                                   ("update_wall_parameter", {"selector": SELECTOR,
                                                              "param": "Comments",
                                                              "value": "Checked"})):
                done = await one.call_tool("upstream_call", {"method": method,
                                                             "params": params})
                assert not done.is_error, text_of(done)
            stopped = (await one.call_tool("teach_stop", {})).structured_content
            done = await one.call_tool("upstream_call", {"method": "update_wall_parameter",
                                                         "params": {"selector": SELECTOR,
                                                                    "param": "Comments",
                                                                    "value": "Before"}})
            assert not done.is_error, text_of(done)
            replay = {"session_id": stopped["id"], "args": {}}
            dry = await one.call_tool("replay", replay)  # a task too, finished transparently
            assert not dry.is_error and dry.structured_content["dry_run"], text_of(dry)
            out["dry_seen"] = list(seen)

            # The cancelled replay: created on A, watched and cancelled from B.
            created = await one.session.call_tool("replay", {**replay, "dry_run": False},
                                                  allow_claimed=True)
            task_id = created.task_id
            out["parked"] = await wait_for(two.session, task_id, "input_required")
            out["cancel_ack"] = await task_cancel(two.session, task_id)
            out["cancelled"] = await task_get(one.session, task_id)
            out["after_cancel"] = _comments(app)

            # The completed replay: the extension answers the question and returns the result.
            seen.clear()
            result = await one.call_tool("replay", {**replay, "dry_run": False})
            out["result"], out["seen"] = result, list(seen)
            done_id = seen[0]["created"]["taskId"]
            out["from_b"] = await task_get(two.session, done_id)
            out["after_replay"] = _comments(app)
        return out

    out = asyncio.run(scenario())
    # The dry run went through a task as well (the server decides; the client never asked).
    assert out["dry_seen"][0]["created"]["resultType"] == "task"

    parked = out["parked"]
    assert parked["status"] == "input_required" and "confirm_writes" in parked["inputRequests"]
    assert parked["inputRequests"]["confirm_writes"]["method"] == "elicitation/create"
    assert out["cancel_ack"] == {"resultType": "complete"}
    assert out["cancelled"]["status"] == "cancelled" and "result" not in out["cancelled"]
    assert out["after_cancel"] and set(out["after_cancel"]) == {"Before"}, out["after_cancel"]

    result = out["result"]
    assert not result.is_error and ": ok (2/2 steps)" in text_of(result), text_of(result)
    statuses = [s.get("status") for s in out["seen"][1:]]
    assert statuses == ["input_required", "completed"], statuses
    final = out["seen"][-1]
    progress = final["_meta"]["io.harmonic/progress"]
    assert progress["total"] >= 2 and 0 < progress["progress"] <= progress["total"], progress
    assert set(out["after_replay"]) == {"Checked"}, out["after_replay"]
    # The other process answers for the finished task, result inlined.
    from_b = out["from_b"]
    assert from_b["status"] == "completed" and from_b["result"] == final["result"]


def _answer(response: Any) -> dict[str, Any]:
    return json.loads(response.get_data(as_text=True))


def finished(app: Flask, get: Any) -> dict[str, Any]:
    """Work the queue in this process until ``get()`` shows the task terminal (a server of this
    module's pair may lease the job first; then we only wait for it)."""
    import time

    from app.workflows.worker import Worker

    worker = Worker(app, "test-worker")
    for _ in range(600):
        got: dict[str, Any] = get()
        if got["status"] in ("completed", "failed", "cancelled"):
            return got
        if not worker.run_once():
            time.sleep(0.05)
    raise AssertionError(f"the task stayed {got['status']}")


def test_a_task_belongs_to_its_caller_and_needs_the_extension(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent) -> None:
    """In-process, raw JSON-RPC (2026-07-28): without the extension replay answers at once and
    tasks/* are refused with -32021 naming it; with it, replay answers a task that the queue
    worker finishes (a tool error is "completed" with isError); another user cannot see it;
    the removed v1 methods are unknown."""
    from tests.helpers import join_studio
    from tests.mcp.test_era_2026 import Stateless

    alice = Stateless(app.test_client(), studio.token)
    bob = Stateless(app.test_client(), join_studio(make_agent, "bob").token)
    caps = {"extensions": {EXTENSION: {}}}
    args = {"name": "replay", "arguments": {"session_id": "no-such-playbook"}}

    sync = alice.tool("replay", arguments=args["arguments"])
    assert sync["resultType"] == "complete" and sync["isError"], sync
    refused = alice.post("tasks/get", {"taskId": "x"}, **{"Mcp-Name": "x"})
    assert refused.status_code == 400 and _answer(refused)["error"]["code"] == -32021
    data = _answer(refused)["error"]["data"]
    assert EXTENSION in data["requiredCapabilities"]["extensions"]

    created = alice.call("tools/call", args, caps)["result"]
    assert created["resultType"] == "task" and created["status"] == "working", created
    assert created["ttlMs"] > 0 and created["pollIntervalMs"] > 0
    task_id = created["taskId"]
    got = finished(app, lambda: _answer(alice.post("tasks/get", {"taskId": task_id}, caps, **{
        "Mcp-Name": task_id}))["result"])
    assert got["status"] == "completed" and got["result"]["isError"], got
    assert "no-such-playbook" in got["result"]["content"][0]["text"]

    stranger = bob.post("tasks/get", {"taskId": task_id}, caps, **{"Mcp-Name": task_id})
    assert _answer(stranger)["error"]["code"] == -32602
    unknown = alice.post("tasks/cancel", {"taskId": "nope"}, caps, **{"Mcp-Name": "nope"})
    assert _answer(unknown)["error"]["code"] == -32602
    again = alice.post("tasks/cancel", {"taskId": task_id}, caps, **{"Mcp-Name": task_id})
    assert _answer(again)["result"] == {"resultType": "complete"}  # terminal: same empty ack
    for removed in ("tasks/result", "tasks/list"):
        gone = alice.post(removed, {"taskId": task_id}, caps)
        assert gone.status_code == 404 and _answer(gone)["error"]["code"] == -32601


def test_a_2025_session_that_declares_the_extension_gets_tasks(  # type: ignore[no-untyped-def]
        app: Flask, studio) -> None:
    """The handshake era: the extension declared in initialize's capabilities is enough."""

    client = app.test_client()
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "Authorization": f"Bearer {studio.token}"}

    def post(method: str, params: dict[str, Any], ident: int | None = 1) -> Any:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if ident is not None:
            body["id"] = ident
        return client.post("/mcp", data=json.dumps(body), headers=headers)

    opened = post("initialize", {"protocolVersion": "2025-11-25", "clientInfo": {
        "name": "pytest", "version": "1"}, "capabilities": {"extensions": {EXTENSION: {}}}})
    assert opened.status_code == 200, opened.get_data(as_text=True)
    assert EXTENSION in _answer(opened)["result"]["capabilities"]["extensions"]
    headers.update({"Mcp-Session-Id": opened.headers["Mcp-Session-Id"],
                    "MCP-Protocol-Version": "2025-11-25"})
    post("notifications/initialized", {}, None)

    created = _answer(post("tools/call", {"name": "replay", "arguments": {
        "session_id": "no-such-playbook"}}, 2))["result"]
    assert created["resultType"] == "task", created
    got = finished(app, lambda: _answer(post("tasks/get", {"taskId": created["taskId"]},
                                             3))["result"])
    assert got["status"] == "completed" and got["result"]["isError"], got

"""A workflow run as an MCP task (SEP-2663), with the official SDK as the client, against two
gunicorn servers on one database: the task is the run itself (its own jobs on the durable
queue), so the progress tasks/get reports is the workflow's steps done, its result is the
run's, and tasks/cancel cancels the run, whose remaining steps then never run. The servers run
no queue worker here: this test process works the queue one job at a time, so every state in
between is seen, whichever server is asked.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.mcp.clients import TRANSPORTS, over, text_of
from tests.mcp.conftest import gunicorns
from tests.mcp.test_tasks import EXTENSION, finished, sdk, task_cancel, task_get

pytestmark = pytest.mark.slow

CHECK = {"workflow": "studio-check", "inputs": {"studio": "team"}}


@pytest.fixture(scope="module")
def idle_pair(app: Flask) -> Any:
    """Two servers on one database, neither working the queue."""
    with gunicorns(app, {"WORKFLOWS_WORKER": "off"}, {"WORKFLOWS_WORKER": "off"}) as (a, b):
        yield a, b


def _studio_page(base: str, token: str) -> str:
    return httpx.get(f"{base}/studios/team", headers={"Authorization": f"Bearer {token}",
                                                      "Accept": "text/markdown"}).text


def _run_of(app: Flask, short: str) -> tuple[dict[str, Any], list[dict[str, Any]],
                                             list[dict[str, Any]]]:
    """The run row, its jobs and its events, read from the queue's tables."""
    from app.workflows import queue, runs

    with app.app_context():
        run = runs.find(short)
        return run, runs.jobs(run["id"]), queue.events_after(run["id"])


def test_a_workflow_run_is_a_task_any_process_reports_and_cancel_stops_it(  # type: ignore[no-untyped-def]
        app: Flask, idle_pair: tuple[str, str], studio) -> None:
    from app.workflows.worker import Worker

    a, b = idle_pair
    worker = Worker(app, "test-worker")

    async def work_one() -> bool:
        return await asyncio.to_thread(worker.run_once)

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with sdk(a, studio.token, []) as one, sdk(b, studio.token, []) as two:
            listed = {t.name: t for t in (await one.list_tools()).tools}
            out["execution"] = listed["run_workflow"].execution

            # Cancelled: created on A, cancelled from B before any step ran.
            created = await one.session.call_tool("run_workflow", CHECK, allow_claimed=True)
            out["created"] = created.model_dump(by_alias=True)
            out["queued"] = await task_get(two.session, created.task_id)
            out["cancel_ack"] = await task_cancel(two.session, created.task_id)
            out["cancelled"] = await task_get(one.session, created.task_id)
            out["worked_after_cancel"] = await work_one()
            out["page_after_cancel"] = _studio_page(a, studio.token)

            # Completed: created on B, each job worked here, each state read from A.
            created = await two.session.call_tool("run_workflow", CHECK, allow_claimed=True)
            states = [await task_get(one.session, created.task_id)]
            while await work_one():
                states.append(await task_get(one.session, created.task_id))
            out["states"] = states
            out["from_b"] = await task_get(two.session, created.task_id)
            out["page_after_run"] = _studio_page(a, studio.token)

            # A refusal is the tool's error at once, not a task.
            out["refused"] = await one.call_tool("run_workflow", {"workflow": "no-such-flow"})
        return out

    out = asyncio.run(scenario())
    assert out["execution"].task_support == "optional"
    assert out["created"]["resultType"] == "task" and out["created"]["status"] == "working"

    queued = out["queued"]  # read by the other process: the run has not started
    assert queued["status"] == "working", queued
    assert queued["_meta"]["io.harmonic/progress"] == {"progress": 0, "total": 4}
    assert out["cancel_ack"] == {"resultType": "complete"}
    assert out["cancelled"]["status"] == "cancelled" and "result" not in out["cancelled"]
    assert out["worked_after_cancel"] is False  # its queued job was cancelled with it
    assert "No notes yet" in out["page_after_cancel"]  # the welcome step never ran

    states = out["states"]
    assert [s["status"] for s in states[:-1]] == ["working"] * (len(states) - 1)
    seen = [s["_meta"]["io.harmonic/progress"]["progress"] for s in states]
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == 4, seen
    assert len(set(seen)) >= 3, seen  # steps were seen to finish one by one
    final = states[-1]
    assert final["status"] == "completed", final
    result = final["result"]
    assert not result.get("isError") and result["structuredContent"]["status"] == "succeeded"
    assert result["structuredContent"]["steps"] == {"done": 4, "total": 4}
    assert "studio-check: succeeded (4/4 steps)" in result["content"][0]["text"]
    assert out["from_b"]["status"] == "completed" and out["from_b"]["result"] == result
    assert "No notes yet" not in out["page_after_run"] and "Welcome" in out["page_after_run"]

    assert out["refused"].is_error and "no-such-flow" in text_of(out["refused"])

    # The cancelled run, as the queue's tables have it: cancelled, and no step ever started.
    with app.app_context():
        from app.workflows import runs

        history = runs.recent("studio-check", 10)
    cancelled = next(r for r in history if r["status"] == "cancelled")
    run, jobs, events = _run_of(app, cancelled["short_id"])
    assert run["status"] == "cancelled"
    assert {job["status"] for job in jobs} == {"cancelled"}
    types = [event["type"] for event in events]
    assert "execution_cancelled" in types and "step_started" not in types, types


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_without_the_extension_run_workflow_answers_at_once(  # type: ignore[no-untyped-def]
        transport: str, mode: str, version: str, request: pytest.FixtureRequest, app: Flask,
        studio) -> None:
    """A client that does not declare the tasks extension, in either era over either
    transport: the run is queued and the answer names it."""

    async def task(client: Any) -> Any:
        return await client.call_tool("run_workflow", CHECK)

    result = over(transport, mode, version, request, app, studio.token, task)
    assert not result.is_error, text_of(result)
    info = result.structured_content
    # The answer reads the run once it is queued; a stdio server on SQLite works its own
    # queue, and its worker may already have leased (or even finished) the run by then.
    assert info["status"] in ("queued", "running", "succeeded"), info
    assert info["workflow"] == "studio-check"
    assert info["events"] == f"harmonic://runs/{info['run']}/events"
    run, jobs, _ = _run_of(app, info["run"])
    assert run["workflow"] == "studio-check" and jobs and jobs[0]["step"] == "start"


def test_a_2025_session_that_declares_the_extension_runs_a_workflow_as_a_task(  # type: ignore[no-untyped-def]
        app: Flask, studio) -> None:
    """The handshake era, raw JSON-RPC in-process: the task finishes as the queue is worked."""
    client = app.test_client()
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "Authorization": f"Bearer {studio.token}"}

    def post(method: str, params: dict[str, Any], ident: int | None = 1) -> Any:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if ident is not None:
            body["id"] = ident
        return json.loads(client.post("/mcp", data=json.dumps(body),
                                      headers=headers).get_data(as_text=True) or "{}")

    opened = client.post("/mcp", data=json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "pytest", "version": "1"},
            "capabilities": {"extensions": {EXTENSION: {}}}}}), headers=headers)
    headers.update({"Mcp-Session-Id": opened.headers["Mcp-Session-Id"],
                    "MCP-Protocol-Version": "2025-11-25"})
    post("notifications/initialized", {}, None)
    created = post("tools/call", {"name": "run_workflow", "arguments": CHECK}, 2)["result"]
    assert created["resultType"] == "task", created
    got = finished(app, lambda: post("tasks/get", {"taskId": created["taskId"]}, 3)["result"])
    assert got["status"] == "completed", got
    assert got["result"]["structuredContent"]["status"] == "succeeded"
    assert got["_meta"]["io.harmonic/progress"] == {"progress": 4, "total": 4}

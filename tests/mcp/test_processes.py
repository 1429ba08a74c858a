"""/mcp under gunicorn as real processes: the official conformance suite (0.1.x for the 2025
era; 0.2.x for 2026-07-28 and again for 2025-11-25, all on one server), the SDK and the
Inspector as clients, and sessions whose requests move between processes.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.conftest import module_group
from tests.helpers import open_studio, parse_md
from tests.mcp.conftest import (
    INIT,
    MCP_SERVER,
    ROOT,
    Http,
    app_env,
    gunicorn,
    gunicorns,
    node_env,
    ping_until_refused,
)

# One worker runs the module's tests of each database (``--dist loadgroup``): its server pairs are
# module fixtures, which each worker that ran some of its tests would otherwise start again.
pytestmark = [pytest.mark.slow, *module_group("mcp-processes")]

CONFORMANCE = "@modelcontextprotocol/conformance@0.1.16"
# The 0.2 line is where the 2026-07-28 scenarios live (prereleases only so far).
CONFORMANCE_NEXT = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
# The Inspector's CLI and how long it waits for a server to connect: its default, 15 s, is less
# than a spawned bin/mcp-server may take to load on two cores busy with the rest of the suite.
INSPECTOR_CLI = (INSPECTOR, "--cli", "--connect-timeout", "120000")
# WORKFLOWS_WORKER=on: each server runs MCP tasks on its in-process queue worker (on
# PostgreSQL too, where the default leaves that to bin/worker).
PROFILE = {"HARMONIC_MCP_AUTH": "off", "HARMONIC_MCP_CONFORMANCE": "1", "HOST": "127.0.0.1",
           "WORKFLOWS_WORKER": "on"}


@pytest.fixture(scope="module")
def conformance_pair(app: Flask) -> Iterator[tuple[str, str]]:
    """Two servers on one database with the conformance profile: A has 2 workers, B one."""
    with gunicorns(app, {**PROFILE, "workers": 2}, {**PROFILE, "workers": 1}) as (a, b):
        yield a, b


@pytest.fixture(scope="module")
def server_pair(app: Flask) -> Iterator[tuple[str, str]]:
    """Two ordinary servers (tokens required) on one database."""
    with gunicorns(app, {}, {}) as (a, b):
        yield a, b


def _npx(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    npx, env = node_env()
    try:
        return subprocess.run([*npx, *args], env=env, capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"npx {args[0]} timed out: {exc.stderr}") from None


def _conformance(url: str, package: str, *options: str) -> tuple[int, int]:
    """Run one conformance suite against ``url``: (checks passed, checks failed)."""
    done = _npx("-p", package, "--", "conformance", "server", "--url", url, *options)
    output = done.stdout + done.stderr
    if done.returncode != 0 and ("ENOTFOUND" in output or "EAI_AGAIN" in output):
        pytest.skip("the npm registry is unreachable")
    summary = done.stdout[done.stdout.rfind("=== SUMMARY ==="):]
    assert done.returncode == 0, summary or output[-4000:]
    total = re.search(r"Total: (\d+) passed, (\d+) failed", summary)
    assert total is not None, output[-4000:]
    return int(total.group(1)), int(total.group(2))


@pytest.mark.parametrize(("package", "options", "at_least"), [
    (CONFORMANCE, (), 39),
    (CONFORMANCE_NEXT, ("--suite", "all", "--spec-version", "2026-07-28"), 150),
    (CONFORMANCE_NEXT, ("--suite", "all", "--spec-version", "2025-11-25"), 80),
], ids=["0.1-2025-11-25", "0.2-2026-07-28", "0.2-2025-11-25"])
def test_official_conformance_suite_passes(conformance_pair: tuple[str, str], package: str,
                                           options: tuple[str, ...], at_least: int) -> None:
    """Both eras on the same server process: each suite passes every check it runs. One
    process: its session-lifecycle check sends a request right after its DELETE, and another
    process refuses that session once its change feed tells it of the end, a moment later
    (``test_session_read``)."""
    url = conformance_pair[1].replace("127.0.0.1", "localhost") + "/mcp"
    passed, failed = _conformance(url, package, *options)
    assert failed == 0 and passed >= at_least, (passed, failed)


@pytest.mark.parametrize(("scenario", "at_least"), [
    ("sep-2640-skills-enumeration", 32), ("sep-2640-skills-manifest", 6),
    # The tasks extension (SEP-2663). tasks-status-notifications is left out: the suite itself
    # only reports it SKIPPED (its harness awaits a subscriptions/listen rewrite).
    ("tasks-lifecycle", 9), ("tasks-capability-negotiation", 5), ("tasks-wire-fields", 4),
    ("tasks-request-state-removal", 3), ("tasks-mrtr-input", 4), ("tasks-request-headers", 5),
    ("tasks-dispatch-and-envelope", 9), ("tasks-required-task-error", 3),
    ("tasks-mrtr-composition", 2),
])
def test_conformance_extension_scenarios_pass(conformance_pair: tuple[str, str], scenario: str,
                                              at_least: int) -> None:
    """The extensions we declare pass their scenarios (run one by one, as the suite offers)."""
    url = conformance_pair[0].replace("127.0.0.1", "localhost") + "/mcp"
    done = _npx("-p", CONFORMANCE_NEXT, "--", "conformance", "server", "--url", url,
                "--scenario", scenario)
    output = done.stdout + done.stderr
    if done.returncode != 0 and ("ENOTFOUND" in output or "EAI_AGAIN" in output):
        pytest.skip("the npm registry is unreachable")
    found = re.search(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings", output)
    assert found is not None, output[-4000:]
    passed, total, failed, warnings = map(int, found.groups())
    assert (failed, warnings) == (0, 0) and passed == total >= at_least, output[-4000:]


def test_conformance_profile_needs_loopback_and_auth_off(app: Flask, make_agent) -> None:
    agent = make_agent("alice")
    with gunicorn(app, HARMONIC_MCP_CONFORMANCE="1") as url:  # auth stays on
        http = Http(url, agent.token)
        http.initialize()
        names = [t["name"] for t in http.call("tools/list")["result"]["tools"]]
        assert "test_simple_text" not in names and "navigate" in names


def _sse_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def test_elicitation_answer_reaches_the_call_from_another_process(
        conformance_pair: tuple[str, str]) -> None:
    a, b = conformance_pair
    http_a = Http(a)
    http_a.initialize({"elicitation": {}})
    http_b = Http(b)
    http_b.session_id = http_a.session_id  # same session, the other process
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "Who are you?"}}}
    headers = {**http_a.headers, "Mcp-Session-Id": http_a.session_id,
               "MCP-Protocol-Version": "2025-11-25"}
    with httpx.stream("POST", http_a.url, json=call, headers=headers, timeout=30) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _sse_events(response)
        asked = next(events)
        assert asked["method"] == "elicitation/create"
        assert asked["params"]["requestedSchema"]["required"] == ["username", "email"]
        answer = {"jsonrpc": "2.0", "id": asked["id"],
                  "result": {"action": "accept",
                             "content": {"username": "ada", "email": "ada@example.org"}}}
        assert http_b.post(answer).status_code == 202
        final = next(events)
    assert final["id"] == 7
    assert "ada@example.org" in final["result"]["content"][0]["text"]


def test_elicitation_needs_the_client_capability(conformance_pair: tuple[str, str]) -> None:
    http = Http(conformance_pair[0])
    http.initialize()  # no elicitation capability declared
    result = http.tool("test_elicitation", message="hello?")
    assert result["isError"] is True and "elicitation" in result["content"][0]["text"]


def test_cancellation_from_another_process_stops_the_call(
        conformance_pair: tuple[str, str]) -> None:
    a, b = conformance_pair
    http_a = Http(a)
    http_a.initialize({"elicitation": {}})
    http_b = Http(b)
    http_b.session_id = http_a.session_id
    call = {"jsonrpc": "2.0", "id": "c1", "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "Wait"}}}
    headers = {**http_a.headers, "Mcp-Session-Id": http_a.session_id,
               "MCP-Protocol-Version": "2025-11-25"}
    with httpx.stream("POST", http_a.url, json=call, headers=headers, timeout=30) as response:
        events = _sse_events(response)
        asked = next(events)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": "c1", "reason": "changed my mind"}}
        assert http_b.post(cancel).status_code == 202
        rest = list(events)  # the stream ends without a response to the cancelled call
    assert rest == []
    # The call stopped waiting: its pending request is gone, so a late answer is refused.
    late = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
    assert http_b.post(late).status_code == 400
    assert http_a.call("ping")["result"] == {}


def test_two_sessions_alternating_between_processes_keep_their_own_page(
        server_pair: tuple[str, str], studio, make_agent, app: Flask) -> None:  # type: ignore[no-untyped-def]

    bob = make_agent("bob")
    open_studio(app, "bob", handle="lab", name="Lab")
    a, b = server_pair
    alice_a, bob_b = Http(a, studio.token), Http(b, bob.token)
    alice_a.initialize()
    bob_b.initialize()
    alice_b, bob_a = Http(b, studio.token), Http(a, bob.token)
    alice_b.session_id, bob_a.session_id = alice_a.session_id, bob_b.session_id
    # Each process reads the other's session once first and keeps a copy of it: the page is not
    # in the copy but read by each call, so the navigation below, made in the other process,
    # is what it sees next.
    for http in (alice_b, bob_a, alice_a, bob_b):
        assert http.call("ping")["result"] == {}
    assert alice_a.tool("navigate", path="/studios/team/note")["structuredContent"]["path"] \
        == "/studios/team/note"
    assert bob_b.tool("navigate", path="/studios/lab/note")["structuredContent"]["path"] \
        == "/studios/lab/note"
    # Each acts on its own current page, through the other process.
    done_alice = alice_b.tool("execute_action", action="create_note",
                              params={"text": "alice was here"})
    done_bob = bob_a.tool("execute_action", action="create_note", params={"text": "bob too"})
    assert done_alice["structuredContent"]["location"].startswith("/studios/team/n/")
    assert done_bob["structuredContent"]["location"].startswith("/studios/lab/n/")
    context = alice_b.call("resources/read", {"uri": "harmonic://context"})["result"]
    assert "`/studios/team/note`" in context["contents"][0]["text"]
    # Ended in one process, the session is over in the other once its change feed tells it.
    ended = alice_a.client.delete(alice_a.url, headers={
        **alice_a.headers, "Mcp-Session-Id": alice_a.session_id})
    assert ended.status_code == 204
    assert ping_until_refused(alice_b) == 404, "the other process never heard of the end"
    assert bob_a.call("ping")["result"] == {}  # another session of that process is untouched


def test_official_sdk_over_http_with_a_token(server_pair: tuple[str, str], studio) -> None:  # type: ignore[no-untyped-def]
    """auto (the default) speaks 2026-07-28 statelessly, legacy 2025-11-25 in a session."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    url = server_pair[0] + "/mcp"

    async def scenario(mode: str) -> tuple[str, str]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {studio.token}"},
                                      timeout=httpx2.Timeout(30.0)) as http_client:
            async with Client(streamable_http_client(url, http_client=http_client),
                              mode=mode) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert {"navigate", "execute_action"} <= set(names)
                page = await client.call_tool("navigate", {"path": "/studios/team"})
                assert not page.is_error
                offered = [a["name"] for a in page.structured_content["actions"]]
                path = "/studios/team" if "create_note" in offered else "/studios/team/note"
                done = await client.call_tool("execute_action", {
                    "action": "create_note", "path": path,
                    "params": {"title": f"Over HTTP {mode}", "text": "Hello through gunicorn"}})
                assert not done.is_error, done
                return client.protocol_version or "", done.structured_content["location"]

    for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
        spoken, location = asyncio.run(scenario(mode))
        assert spoken == version
        response = httpx.get(server_pair[1] + location, headers={
            "Authorization": f"Bearer {studio.token}", "Accept": "text/markdown"})
        front, body = parse_md(response.text)
        assert front["title"] == f"Over HTTP {mode}" and "Hello through gunicorn" in body
        html = httpx.get(server_pair[1] + location, headers={
            "Authorization": f"Bearer {studio.token}", "Accept": "text/html"})
        assert html.status_code == 200 and "Hello through gunicorn" in html.text


def _inspector(*target: str) -> dict[str, Any]:
    done = _npx(*INSPECTOR_CLI, *target, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _findings(listed: dict[str, Any]) -> list[str]:
    """The strict Inspector's schema findings, one "tool: schema.path rule" line each."""
    return [f"{tool['toolName']}: {f['schema']}.{f['path']} {f['rule']} ({f['severity']})"
            for tool in listed.get("schemaFindings", []) for f in tool["findings"]]


def test_inspector_cli_over_both_transports(server_pair: tuple[str, str], studio,
                                            app: Flask) -> None:  # type: ignore[no-untyped-def]
    """The Inspector's CLI lists and calls our tools over HTTP and stdio. Its ``--strict``
    listing also lints every tool schema for portability (type arrays, untyped schemas,
    remote refs): our tools/list is clean over both transports."""
    url = server_pair[0] + "/mcp"
    http = [url, "--transport", "http", "--header", f"Authorization: Bearer {studio.token}"]
    env = app_env(app, HARMONIC_API_TOKEN=studio.token)
    env_args = [arg for key in ("DATABASE_URL", "HARMONIC_INSTANCE", "HARMONIC_API_TOKEN",
                                "SECRET_KEY") for arg in ("-e", f"{key}={env[key]}")]
    stdio = [*env_args, sys.executable, str(MCP_SERVER)]
    for target, expected in ((http, "navigate"), (stdio, "execute_action")):
        done = _npx(*INSPECTOR_CLI, *target, "--method", "tools/list", "--strict",
                    "--format", "json", timeout=180)
        assert done.returncode == 0, done.stderr[-3000:]
        listed = json.loads(done.stdout)
        assert expected in [t["name"] for t in listed["result"]["tools"]]
        assert _findings(listed) == [], done.stderr[-3000:]
        assert "Warning:" not in done.stderr and "Schema portability" not in done.stderr
        called = _inspector(*target, "--method", "tools/call", "--tool-name", "navigate",
                            "--tool-arg", "path=/studios/team", "--format", "json")
        assert called["result"]["structuredContent"]["path"] == "/studios/team"


def test_many_concurrent_calls_on_one_session(conformance_pair: tuple[str, str]) -> None:
    http = Http(conformance_pair[0])
    http.initialize()
    results: list[dict[str, Any]] = []

    def call() -> None:
        client = Http(conformance_pair[0])
        client.session_id = http.session_id
        results.append(client.tool("test_tool_with_progress"))

    threads = [threading.Thread(target=call) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(results) == 6 and all(not r.get("isError") for r in results)


def test_initialize_body_matches_what_clients_expect(conformance_pair: tuple[str, str]) -> None:
    response = httpx.post(conformance_pair[1] + "/mcp", json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
        headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 200 and response.headers["Mcp-Session-Id"]
    assert response.json()["result"]["capabilities"]["resources"]["subscribe"] is True


def test_closing_a_stateless_stream_cancels_the_call(conformance_pair: tuple[str, str]) -> None:
    """2026-07-28 has no notifications/cancelled on HTTP: hanging up is the cancellation."""
    from tests.mcp.test_era_2026 import VERSION, meta

    url = conformance_pair[1] + "/mcp"  # one process, so the probe sees the same calls
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": VERSION,
               "Mcp-Method": "tools/call"}

    def call(tool: str, **extra: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": tool, "arguments": {"token": "hang-up"}, "_meta": meta(**extra)}}

    with httpx.stream("POST", url, json=call("test_wait_for_cancel", progressToken="p"),
                      headers={**headers, "Mcp-Name": "test_wait_for_cancel"},
                      timeout=30) as response:
        first = next(_sse_events(response))
        assert first["method"] == "notifications/progress"
    state = "running"
    for _ in range(200):  # the server notices at its next progress write
        answer = httpx.post(url, json=call("test_cancelled_calls"), timeout=30,
                            headers={**headers, "Mcp-Name": "test_cancelled_calls"})
        state = answer.json()["result"]["content"][0]["text"]
        if state == "cancelled":
            break
        threading.Event().wait(0.1)
    assert state == "cancelled"

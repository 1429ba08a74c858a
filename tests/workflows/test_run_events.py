"""A workflow run's events over MCP: the events resource is JSON lines (one event a line, no
embedded pages), and a client that listens or subscribes after the run finished still gets
every event, by number.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from flask import Flask

from tests.mcp.conftest import ACCEPT, app_env
from tests.mcp.test_era_2026 import VERSION, meta
from tests.mcp.test_stdio import StdioProcess
from tests.playbooks.conftest import run_async
from tests.workflows.conftest import drain, user_id

KEYS = {"seq", "type", "step", "time", "data"}


def _finished_run(app: Flask) -> str:
    from app.workflows import runs

    with app.app_context():
        text = open("examples/workflows/studio-check.yaml").read()
        run_id = runs.start(text, {}, user_id(app, "alice"))
    assert drain(app, run_id)["status"] == "succeeded"
    return f"harmonic://runs/{run_id.hex[:8]}/events"


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_events_resource_is_json_lines_and_subscribe_then_read_gives_all(
        app, studio, wf_settings, live_server) -> None:  # type: ignore[no-untyped-def]
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    uri = _finished_run(app)

    async def scenario() -> tuple[str, str]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {studio.token}"},
                                      timeout=httpx2.Timeout(60.0)) as http_client:
            async with Client(streamable_http_client(live_server + "/mcp",
                                                     http_client=http_client),
                              mode="legacy") as client:
                await client.subscribe_resource(uri)
                read = await client.read_resource(uri)
                return read.contents[0].mime_type or "", read.contents[0].text

    mime, text = run_async(scenario)
    assert mime == "application/x-ndjson"
    assert text.endswith("\n")
    lines = [json.loads(line) for line in text.splitlines()]
    assert all(set(line) == KEYS for line in lines)
    assert [e["seq"] for e in lines] == list(range(1, len(lines) + 1))
    assert lines[0]["type"] == "execution_started"
    assert lines[-1]["type"] == "execution_completed"
    # The studio page a step read is not embedded in the events (the run's page has it).
    assert not any(len(s) > 500 or "\n# " in s for e in lines for s in _strings(e["data"]))


def _listen(live_server: str, token: str, uri: str, after: int | None) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"_meta": meta(),
                              "notifications": {"resourceSubscriptions": [uri]}}
    if after is not None:
        params["_meta"]["io.harmonic/after"] = {uri: after}
    headers = {"Accept": ACCEPT, "Content-Type": "application/json",
               "Authorization": f"Bearer {token}", "MCP-Protocol-Version": VERSION,
               "Mcp-Method": "subscriptions/listen"}
    body = {"jsonrpc": "2.0", "id": "late", "method": "subscriptions/listen", "params": params}
    heard = []
    with httpx.Client(timeout=30) as http, http.stream(
            "POST", live_server + "/mcp", json=body, headers=headers) as stream:
        lines = (line for line in stream.iter_lines() if line.startswith("data:"))
        ack = json.loads(next(lines)[5:])
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        for line in lines:
            note = json.loads(line[5:])
            assert note["method"] == "notifications/resources/updated"
            assert note["params"]["uri"] == uri
            event = note["params"]["_meta"]["io.harmonic/event"]
            heard.append(event)
            if event["type"] == "execution_completed":
                break
    return heard


def test_listening_after_the_run_finished_hears_every_event(
        app, studio, wf_settings, live_server) -> None:  # type: ignore[no-untyped-def]
    uri = _finished_run(app)
    everything = _listen(live_server, studio.token, uri, None)
    assert [e["seq"] for e in everything] == list(range(1, len(everything) + 1))
    assert everything[0]["type"] == "execution_started" and len(everything) > 3
    assert all(set(e) == KEYS for e in everything)
    # A client that says what it has gets the rest only.
    rest = _listen(live_server, studio.token, uri, 2)
    assert rest == everything[2:]


def test_listening_over_stdio_after_the_run_finished(app, studio, wf_settings) -> None:  # type: ignore[no-untyped-def]
    uri = _finished_run(app)
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=studio.token))
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "_meta": meta(), "notifications": {"resourceSubscriptions": [uri]}}})
        assert server.read()["method"] == "notifications/subscriptions/acknowledged"
        events = []
        while not events or events[-1]["type"] != "execution_completed":
            note = server.read()
            assert note["params"]["uri"] == uri
            events.append(note["params"]["_meta"]["io.harmonic/event"])
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    finally:
        server.close()


def test_someone_elses_run_replays_nothing(app, studio, make_agent, wf_settings,  # type: ignore[no-untyped-def]
                                           live_server) -> None:
    uri = _finished_run(app)
    bob = make_agent("bob")
    params = {"_meta": meta(), "notifications": {"resourceSubscriptions": [uri]}}
    headers = {"Accept": ACCEPT, "Content-Type": "application/json",
               "Authorization": f"Bearer {bob.token}", "MCP-Protocol-Version": VERSION,
               "Mcp-Method": "subscriptions/listen"}
    body = {"jsonrpc": "2.0", "id": "peek", "method": "subscriptions/listen", "params": params}
    with httpx.Client(timeout=5) as http, http.stream(
            "POST", live_server + "/mcp", json=body, headers=headers) as stream:
        lines = (line for line in stream.iter_lines() if line.startswith("data:"))
        assert json.loads(next(lines)[5:])["method"] == \
            "notifications/subscriptions/acknowledged"
        try:
            extra = next(lines)
        except httpx.ReadTimeout:
            extra = None
        assert extra is None, extra

"""Agents teach and replay over MCP without guessing (the official SDK client over HTTP):
teach sessions belong to their MCP session and expire when idle, teach_stop makes the draft
recipe, and replay refuses unknown arguments, speaks its own parameter names, states planned
effects in words and answers a compact summary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import parse_md
from tests.playbooks.conftest import capture_lines, run_async

SELECTOR = {"category": "OST_Walls", "typeName": "RC150", "levelName": "1FL"}


def _client(live_server: str, token: str, calls: list[str] | None = None) -> Any:
    """An SDK client in legacy mode (2025-11-25: an MCP session), counting its tool calls."""
    import contextlib

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    @contextlib.asynccontextmanager
    async def opened() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                      timeout=httpx2.Timeout(60.0)) as http_client:
            async with Client(streamable_http_client(live_server + "/mcp",
                                                     http_client=http_client),
                              mode="legacy") as client:
                if calls is not None:
                    original = client.call_tool

                    async def counted(name: str, arguments: Any = None, **kw: Any) -> Any:
                        calls.append(name)
                        return await original(name, arguments, **kw)

                    client.call_tool = counted  # type: ignore[method-assign]
                yield client

    return opened()


def _text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def test_two_sessions_teaching_do_not_stop_each_other(studio, demo, live_server) -> None:  # type: ignore[no-untyped-def]
    async def scenario() -> dict[str, Any]:
        async with _client(live_server, studio.token) as one, \
                _client(live_server, studio.token) as two:
            first = await one.call_tool("teach_start", {"name": "one"})
            second = await two.call_tool("teach_start", {"name": "two"})
            assert not first.is_error and not second.is_error
            assert "stopped" not in second.structured_content
            assert not (await one.call_tool("upstream_call", {
                "method": "get_walls", "params": {"level": "1FL"}})).is_error
            assert not (await two.call_tool("upstream_call", {
                "method": "get_walls", "params": {"level": "2FL"}})).is_error
            stop_two = await two.call_tool("teach_stop", {})
            stop_one = await one.call_tool("teach_stop", {})
            return {"one": (first.structured_content, stop_one.structured_content),
                    "two": (second.structured_content, stop_two.structured_content)}

    out = run_async(scenario)
    for name, level in (("one", "1FL"), ("two", "2FL")):
        started, stopped = out[name]
        assert stopped["sessionId"] == started["sessionId"] and stopped["entries"] == 1
        lines = capture_lines(Path(started["dir"]))
        assert [x["params"]["level"] for x in lines] == [level]


def test_an_idle_teach_session_expires_and_a_left_one_can_be_stopped(
        app, studio, demo, live_server, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "PLAYBOOK_TEACH_IDLE", "1")

    async def start(name: str) -> str:
        async with _client(live_server, studio.token) as client:
            started = await client.call_tool("teach_start", {"name": name})
            assert not started.is_error, started
            return started.structured_content["id"]  # the client exits, still teaching

    idle = run_async(lambda: start("left-idle"))
    front, _ = parse_md(studio.get(f"/playbooks/{idle}").get_data(as_text=True))
    assert "stop_teach" in [a["name"] for a in front["actions"]]
    time.sleep(1.5)
    front, body = parse_md(studio.get(f"/playbooks/{idle}").get_data(as_text=True))
    assert "stop_teach" not in [a["name"] for a in front["actions"]]
    assert "| teaching |" not in body

    monkeypatch.setitem(app.config, "PLAYBOOK_TEACH_IDLE", "off")
    left = run_async(lambda: start("left-behind"))
    stopped = studio.act(f"/playbooks/{left}", "stop_teach")
    assert stopped.status_code == 200, stopped.get_data(as_text=True)
    front, _ = parse_md(studio.get(f"/playbooks/{left}").get_data(as_text=True))
    assert "stop_teach" not in [a["name"] for a in front["actions"]]


def test_teach_three_calls_stop_makes_a_draft_and_dry_run_within_budget(
        studio, demo, live_server) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []

    async def scenario() -> dict[str, Any]:
        async with _client(live_server, studio.token, calls) as client:
            assert not (await client.call_tool("teach_start", {"name": "walls"})).is_error
            for method, params in (("get_walls", {"level": "1FL"}),
                                   ("update_wall_parameter", {"selector": SELECTOR,
                                                              "param": "Comments",
                                                              "value": "Checked"}),
                                   ("get_walls", {"level": "1FL"})):
                done = await client.call_tool("upstream_call", {"method": method,
                                                                "params": params})
                assert not done.is_error, done
            stopped = await client.call_tool("teach_stop", {})
            recipe = stopped.structured_content["recipe"]
            dry = await client.call_tool("replay", {"session_id": stopped.structured_content[
                "id"], "args": {}})
            budget = len(calls)
            unknown = await client.call_tool("replay", {"session_id": "x", "SessionId": "x"})
            missing = await client.call_tool("replay", {})
            return {"stopped": stopped.structured_content, "recipe": recipe,
                    "dry": dry, "budget": budget, "unknown": unknown, "missing": missing}

    out = run_async(scenario)
    assert out["budget"] <= 7
    assert out["recipe"]["state"] == "draft" and out["recipe"]["steps"] >= 2
    page = studio.get(f"/playbooks/{out['stopped']['id']}").get_data(as_text=True)
    assert "draft" in page

    dry = out["dry"]
    assert not dry.is_error, _text(dry)
    summary = dry.structured_content
    assert summary["ok"] and summary["dry_run"] and summary["run"].startswith("/playbooks/")
    assert len(json.dumps(summary)) < 1500, summary
    assert "details" not in summary
    planned = [p for p in summary["planned"] if "update_wall_parameter" in p]
    assert planned and planned[0].startswith("would call update_wall_parameter on ")
    assert "Comments = 'Checked'" in planned[0], planned
    assert "{'" not in _text(dry)  # no Python dict in the words
    # The full detail stays on the run's page.
    assert "update_wall_parameter" in studio.get(summary["run"]).get_data(as_text=True)

    refused = out["unknown"]
    assert refused.is_error
    assert "SessionId" in _text(refused) and "session_id" in _text(refused)
    assert "recipe_path" in _text(refused) and "dry_run" in _text(refused)
    missing = _text(out["missing"])
    assert out["missing"].is_error and "session_id" in missing and "SessionId" not in missing

"""Agents teach and replay over MCP without guessing (the official SDK client over stdio and
HTTP, in both eras): a teach session belongs to its MCP session (2025-11-25) or its token
(2026-07-28, stateless) and never stops another's, idle ones expire, teach_stop makes the draft
recipe, and replay refuses unknown arguments, speaks its own parameter names, states planned
effects in words and answers a compact summary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.helpers import join_studio, parse_md
from tests.mcp.clients import LEGACY, TRANSPORTS, opener, run, text_of
from tests.playbooks.conftest import capture_lines

SELECTOR = {"category": "OST_Walls", "typeName": "RC150", "levelName": "1FL"}


def _capture(started: dict[str, Any]) -> list[dict[str, Any]]:
    """The capture's lines, from whichever capture store the app uses."""
    return list(capture_lines(Path(started["dir"])))


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_two_teachers_do_not_stop_each_other(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                             studio, make_agent, demo, transport: str,
                                             mode: str, version: str) -> None:
    # 2025-11-25: each MCP session owns its teach session, so one token's two sessions are two
    # teachers. 2026-07-28 is stateless: the token owns it, so the second teacher is bob.
    second = studio.token if version == LEGACY else join_studio(make_agent, "bob").token
    open_client = opener(transport, mode, request, app)

    async def scenario() -> dict[str, Any]:
        async with open_client(studio.token) as one, open_client(second) as two:
            first = await one.call_tool("teach_start", {"name": "one"})
            other = await two.call_tool("teach_start", {"name": "two"})
            assert not first.is_error and not other.is_error, (first, other)
            assert "stopped" not in other.structured_content
            assert not (await one.call_tool("upstream_call", {
                "method": "get_walls", "params": {"level": "1FL"}})).is_error
            assert not (await two.call_tool("upstream_call", {
                "method": "get_walls", "params": {"level": "2FL"}})).is_error
            stop_two = await two.call_tool("teach_stop", {})
            stop_one = await one.call_tool("teach_stop", {})
            return {"one": (first.structured_content, stop_one.structured_content),
                    "two": (other.structured_content, stop_two.structured_content)}

    out = run(scenario)
    for name, level in (("one", "1FL"), ("two", "2FL")):
        started, stopped = out[name]
        assert stopped["sessionId"] == started["sessionId"] and stopped["entries"] == 1
        assert [x["params"]["level"] for x in _capture(started)] == [level]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_stateless_teach_session_belongs_to_its_token(request: pytest.FixtureRequest,  # type: ignore[no-untyped-def]
                                                        app: Flask, studio, demo,
                                                        transport: str) -> None:
    # 2026-07-28 has no MCP session: a later connection with the same token is the same teacher,
    # so its calls are captured into the session the first connection started, and it stops it.
    open_client = opener(transport, "auto", request, app)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with open_client(studio.token) as first:
            started = await first.call_tool("teach_start", {"name": "by-token"})
            assert not started.is_error, started
        async with open_client(studio.token) as later:
            assert not (await later.call_tool("upstream_call", {
                "method": "get_walls", "params": {"level": "1FL"}})).is_error
            stopped = await later.call_tool("teach_stop", {})
            assert not stopped.is_error, text_of(stopped)
        return started.structured_content, stopped.structured_content

    started, stopped = run(scenario)
    assert stopped["sessionId"] == started["sessionId"] and stopped["entries"] == 1
    assert [x["method"] for x in _capture(started)] == ["get_walls"]


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_an_idle_teach_session_expires_and_a_left_one_can_be_stopped(  # type: ignore[no-untyped-def]
        request: pytest.FixtureRequest, app: Flask, studio, demo, transport: str, mode: str,
        version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    open_client = opener(transport, mode, request, app)
    # Expiry off while the client starts and leaves (a stdio process may take a while to exit
    # on a busy machine), then a fifth of a second: the page read after 0.7 s finds it idle.
    monkeypatch.setitem(app.config, "PLAYBOOK_TEACH_IDLE", "off")

    async def start(name: str) -> str:
        async with open_client(studio.token) as client:
            started = await client.call_tool("teach_start", {"name": name})
            assert not started.is_error, started
            return str(started.structured_content["id"])  # the client leaves, still teaching

    idle = run(lambda: start("left-idle"))
    front, _ = parse_md(studio.get(f"/playbooks/{idle}").get_data(as_text=True))
    assert "stop_teach" in [a["name"] for a in front["actions"]]
    monkeypatch.setitem(app.config, "PLAYBOOK_TEACH_IDLE", "0.2")
    time.sleep(0.7)
    front, body = parse_md(studio.get(f"/playbooks/{idle}").get_data(as_text=True))
    assert "stop_teach" not in [a["name"] for a in front["actions"]]
    assert "| teaching |" not in body

    monkeypatch.setitem(app.config, "PLAYBOOK_TEACH_IDLE", "off")
    left = run(lambda: start("left-behind"))
    stopped = studio.act(f"/playbooks/{left}", "stop_teach")
    assert stopped.status_code == 200, stopped.get_data(as_text=True)
    front, _ = parse_md(studio.get(f"/playbooks/{left}").get_data(as_text=True))
    assert "stop_teach" not in [a["name"] for a in front["actions"]]


class _Counted:
    """A client whose tool calls are counted by name."""

    def __init__(self, client: Any, calls: list[str]) -> None:
        self.client, self.calls = client, calls

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls.append(name)
        return await self.client.call_tool(name, arguments)


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_teach_three_calls_stop_makes_a_draft_and_dry_run_within_budget(  # type: ignore[no-untyped-def]
        request: pytest.FixtureRequest, app: Flask, studio, demo, transport: str, mode: str,
        version: str) -> None:
    calls: list[str] = []
    open_client = opener(transport, mode, request, app)

    async def scenario() -> dict[str, Any]:
        async with open_client(studio.token) as opened:
            client = _Counted(opened, calls)
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

    out = run(scenario)
    assert out["budget"] <= 7
    assert out["recipe"]["state"] == "draft" and out["recipe"]["steps"] >= 2
    page = studio.get(f"/playbooks/{out['stopped']['id']}").get_data(as_text=True)
    assert "draft" in page

    dry = out["dry"]
    assert not dry.is_error, text_of(dry)
    summary = dry.structured_content
    assert summary["ok"] and summary["dry_run"] and summary["run"].startswith("/playbooks/")
    assert len(json.dumps(summary)) < 1500, summary
    assert "details" not in summary
    planned = [p for p in summary["planned"] if "update_wall_parameter" in p]
    assert planned and planned[0].startswith("would call update_wall_parameter on ")
    assert "Comments = 'Checked'" in planned[0], planned
    assert "{'" not in text_of(dry)  # no Python dict in the words
    # The full detail stays on the run's page.
    assert "update_wall_parameter" in studio.get(summary["run"]).get_data(as_text=True)

    refused = out["unknown"]
    assert refused.is_error
    assert "SessionId" in text_of(refused) and "session_id" in text_of(refused)
    assert "recipe_path" in text_of(refused) and "dry_run" in text_of(refused)
    missing = text_of(out["missing"])
    assert out["missing"].is_error and "session_id" in missing and "SessionId" not in missing

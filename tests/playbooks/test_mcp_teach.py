"""An agent over MCP (the official SDK client, Streamable HTTP) teaches a Harmonic routine —
create a decision, add two options, read the design model — and the recipe replays it in
another studio with new variables: dry run first, then for real after the person accepts
(elicitation), with progress notifications; a declined replay writes nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.helpers import open_studio, parse_md
from tests.playbooks.conftest import run_async


def _second_studio(app, handle: str = "lab") -> None:  # type: ignore[no-untyped-def]
    open_studio(app, "alice", handle=handle, name="Lab")


def test_agent_teaches_a_routine_and_replays_it_elsewhere(app, studio, demo, live_server) -> None:  # type: ignore[no-untyped-def]
    import httpx2
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client

    _second_studio(app)
    alice = studio
    asked: list[str] = []
    answer = {"action": "accept"}
    progress: list[tuple[float, float | None, str | None]] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if answer["action"] == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {alice.token}"},
                                      timeout=httpx2.Timeout(60.0)) as http_client:
            async with Client(streamable_http_client(live_server + "/mcp",
                                                     http_client=http_client),
                              elicitation_callback=elicit) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert {"teach_start", "teach_stop", "replay", "upstream_call"} <= names
                started = await client.call_tool("teach_start", {"name": "decide-beams"})
                assert not started.is_error, started
                out["playbook"] = started.structured_content["id"]
                page = await client.call_tool("navigate", {"path": "/studios/team/decide"})
                assert not page.is_error, page
                made = await client.call_tool("execute_action", {
                    "action": "create_decision", "path": "/studios/team/decide",
                    "params": {"question": "Which beam type for 2FL?"}})
                assert not made.is_error, made
                decision = made.structured_content["location"]
                for title in ("RC-Beam-450x600", "RC-Beam-300x500"):
                    added = await client.call_tool("execute_action", {
                        "action": "add_option", "path": decision, "params": {"title": title}})
                    assert not added.is_error, added
                walls = await client.call_tool("upstream_call", {
                    "method": "get_walls", "params": {"level": "2FL"}})
                assert not walls.is_error and walls.structured_content["totalCount"] == 5
                stopped = await client.call_tool("teach_stop", {})
                out["entries"] = stopped.structured_content["entries"]

                playbook = f"/playbooks/{out['playbook']}"
                generated = await client.call_tool("execute_action", {
                    "action": "generate_recipe", "path": playbook})
                assert not generated.is_error, generated
                capture = await client.read_resource(f"playbook://{out['playbook']}/capture")
                out["capture"] = [json.loads(line) for line in
                                  capture.contents[0].text.splitlines()]
                recipe = await client.read_resource(f"playbook://{out['playbook']}/recipe")
                out["recipe"] = json.loads(recipe.contents[0].text)

                args = {"studio": "lab", "question": "Which slab for 3FL?",
                        "title": "Flat slab", "title_2": "Waffle slab"}
                dry = await client.call_tool("replay", {"session": out["playbook"],
                                                        "args": args})
                assert dry.structured_content is not None, dry
                out["dry"] = dry.structured_content
                answer["action"] = "decline"
                declined = await client.call_tool("replay", {
                    "session": out["playbook"], "args": args, "dry_run": False})
                out["declined"] = declined.structured_content
                answer["action"] = "accept"
                done = await client.call_tool("replay", {
                    "session": out["playbook"], "args": args, "dry_run": False},
                    progress_callback=on_progress)
                out["done"] = done.structured_content
        return out

    out = run_async(scenario)

    # The capture holds the MCP calls and the upstream call, in order.
    assert out["entries"] == 5
    kinds = [line.get("tool") or line.get("method") for line in out["capture"]]
    assert kinds == ["navigate", "execute_action", "execute_action", "execute_action",
                     "get_walls"]

    # The recipe: studio and texts are variables; add_option works on the decision it created.
    recipe = out["recipe"]
    assert recipe["vars"]["studio"] == "team"
    assert recipe["vars"]["question"] == "Which beam type for 2FL?"
    # Variables of an execute_action step are typed from the action's parameter schema.
    assert recipe["inputs"]["question"] == {"type": "string", "maxLength": 500,
                                            "description": "The question to decide"}
    steps = {s["name"]: s for s in recipe["steps"]}
    assert list(steps) == ["create_decision", "add_option", "add_option_2", "get_walls"]
    assert steps["create_decision"]["params"]["path"] == "/studios/{{studio}}/decide"
    assert steps["add_option"]["params"]["path"] == "{{steps.create_decision.result.location}}"
    assert steps["add_option_2"]["params"]["params"]["title"] == "{{title_2}}"

    # Dry run: nothing written; the first write step's page and action were checked, and the
    # summary states it in words (every step's detail is on the run's page).
    assert out["dry"]["ok"] and out["dry"]["dry_run"]
    assert "would run create_decision at /studios/lab/decide" in out["dry"]["planned"][0]
    assert "details" not in out["dry"]

    # Declined: asked once, nothing written.
    assert out["declined"]["status"] == "declined" and len(asked) == 2
    assert "create_decision" in asked[0]

    # Accepted: the routine ran in the lab studio with the new variables.
    done = out["done"]
    assert done["ok"], done
    run_page = alice.get(done["run"]).get_data(as_text=True)
    found = re.search(r'"location": "(/studios/lab/d/[^"]+)"', run_page)
    assert found, run_page
    location = found.group(1)
    assert location.startswith("/studios/lab/d/")
    assert [value for value, _total, _m in progress] == sorted({v for v, _t, _m in progress})
    assert progress[-1][0] == progress[-1][1] == 4
    front, body = parse_md(alice.get(location).get_data(as_text=True))
    assert "Which slab for 3FL?" in front["title"]
    assert "Flat slab" in body and "Waffle slab" in body
    team = alice.get("/studios/team").get_data(as_text=True)
    assert "Which slab" not in team
    lab_decisions = alice.get("/studios/lab").get_data(as_text=True)
    assert lab_decisions.count("Which slab for 3FL?") >= 1


def test_stdio_session_is_captured_too(app, studio, demo) -> None:  # type: ignore[no-untyped-def]
    """bin/mcp-server (stdio) shares the app's tool-call hook: its calls are captured."""
    import sys
    from pathlib import Path

    from mcp import Client, StdioServerParameters

    from tests.mcp.conftest import MCP_SERVER, ROOT, app_env
    from tests.playbooks.conftest import capture_lines

    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=studio.token),
                                   cwd=str(ROOT))

    async def scenario() -> dict[str, Any]:
        async with Client(params) as client:
            started = await client.call_tool("teach_start", {"name": "over-stdio"})
            assert not started.is_error, started
            assert not (await client.call_tool("navigate", {"path": "/studios/team"})).is_error
            walls = await client.call_tool("upstream_call", {"method": "get_walls",
                                                             "params": {"level": "1FL"}})
            assert not walls.is_error, walls
            stopped = await client.call_tool("teach_stop", {})
            return {**started.structured_content, "entries":
                    stopped.structured_content["entries"]}

    out = run_async(scenario)
    assert out["entries"] == 2
    lines = capture_lines(Path(out["dir"]))
    assert [x.get("tool") or x.get("method") for x in lines] == ["navigate", "get_walls"]
    assert lines[0]["result"]["path"] == "/studios/team"
    assert lines[1]["result"]["totalCount"] == 6

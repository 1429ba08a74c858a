"""One effect vocabulary, read everywhere: MCP annotations, the action pages, a replay's write
confirmation and read-only tokens all follow the effect declared where each action, MCP tool
and design-model method is registered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask import Flask

from tests.helpers import join_studio
from tests.mcp.conftest import Http
from tests.mcp.test_era_2026 import ELICIT, Stateless
from tests.mcp.test_http import _FlaskClient
from tests.playbooks.conftest import rpc

PLAN = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: window, bottom: door, left: solid]
  }
"""
READ_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
              "openWorldHint": False}


def _mcp(client: Any, token: str) -> Http:
    http = Http("http://localhost", token, _FlaskClient(client))
    http.initialize()
    return http


def _hints(hints: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in hints.items() if k.endswith("Hint")}


def test_tools_list_annotations_derive_from_the_declared_effects(studio, client) -> None:  # type: ignore[no-untyped-def]
    tools = {t["name"]: t for t in _mcp(client, studio.token).call("tools/list")["result"][
        "tools"]}
    for name in ("navigate", "validate_floorplan", "render_floorplan", "modify_floorplan"):
        assert _hints(tools[name]["annotations"]) == READ_HINTS, name
    # Stopping teach mode twice stops it once: a write, idempotent, nothing destroyed.
    assert _hints(tools["teach_stop"]["annotations"]) == {
        "readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
        "openWorldHint": False}
    assert tools["teach_start"]["annotations"]["idempotentHint"] is False
    # execute_action may run any action, closing and revoking included.
    execute = tools["execute_action"]["annotations"]
    assert execute["readOnlyHint"] is False and execute["destructiveHint"] is True
    # upstream_call reaches the design-model upstream, beyond this app.
    assert tools["upstream_call"]["annotations"]["openWorldHint"] is True
    # Every tool has its hints, derived: no tool is left to the spec's defaults.
    assert all(set(READ_HINTS) <= set(t["annotations"]) for t in tools.values())


def _decision_and_commitment(alice: Any) -> tuple[str, str, str]:
    note = alice.act("/studios/team/note", "create_note", text="Effects")
    decision = alice.act("/studios/team/decide", "create_decision", question="Which?",
                         options_open=True)
    commitment = alice.act("/studios/team/commit", "create_commitment", title="Ship",
                           critical_mass=2)
    assert {note.status_code, decision.status_code, commitment.status_code} == {201}
    decision_path = decision.json["location"]
    assert alice.act(decision_path, "add_option", title="A").status_code == 201
    return note.json["location"], decision_path, commitment.json["location"]


def test_action_pages_and_navigate_show_the_effect(studio, client, make_agent) -> None:  # type: ignore[no-untyped-def]
    note, decision, commitment = _decision_and_commitment(studio)
    bob = join_studio(make_agent, "bob")
    cases = [(decision, "vote", "write", True), (commitment, "join_commitment", "write", True),
             (note, "confirm_read", "write", True), ("/studios/team/note", "create_note",
                                                     "write", False)]
    http = _mcp(client, bob.token)
    for page, name, effect, idempotent in cases:
        described = bob.get(f"{page}/actions/{name}", accept="application/json")
        assert described.status_code == 200, described.get_data(as_text=True)
        assert (described.json["effect"], described.json["idempotent"]) == (effect, idempotent)
        markdown = bob.get(f"{page}/actions/{name}").get_data(as_text=True)
        assert "## Effect\n\nwrite" in markdown
        listed = http.tool("navigate", path=page)["structuredContent"]["actions"]
        shown = next(a for a in listed if a["name"] == name)
        assert (shown["effect"], shown["idempotent"]) == (effect, idempotent)
        # Repeating a vote or a join has no second effect: never destructive, idempotent.
        assert _hints(shown["annotations"]) == {
            "readOnlyHint": False, "destructiveHint": False, "idempotentHint": idempotent,
            "openWorldHint": False}, name
    # Closing a decision cannot be undone by another call.
    close = studio.get(f"{decision}/actions/close_decision", accept="application/json").json
    assert (close["effect"], close["idempotent"]) == ("destructive", False)
    closing = next(a for a in _mcp(client, studio.token).tool("navigate", path=decision)[
        "structuredContent"]["actions"] if a["name"] == "close_decision")
    assert closing["annotations"]["destructiveHint"] is True


def _recipe(data_dir: Path, name: str, steps: list[dict[str, Any]]) -> str:
    """An approved recipe file (seed 000's reviewed/ folder), so governance lets it run."""
    path = data_dir / "playbooks" / "reviewed" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "version": "1.0.0", "steps": steps}))
    return f"reviewed/{path.name}"


def test_replay_confirms_writes_only(app: Flask, client, studio, demo) -> None:  # type: ignore[no-untyped-def]
    data_dir = Path(app.config["HARMONIC_DATA_DIR"])
    reads = {
        "validate": [{"tool": "validate_floorplan", "params": {"dsl": PLAN}}],
        "walls": [{"method": "get_walls", "params": {"count": 1}}],
        "element": [{"method": "get_element_info", "params": {"elementId": 3001}}],
    }
    writes = {
        "comment": [{"method": "update_wall_parameter",
                     "params": {"elementId": 3001, "param": "Comments", "value": "replayed"}}],
        "note": [{"tool": "execute_action", "params": {
            "action": "create_note", "path": "/studios/team/note", "params": {"text": "x"}}}],
    }
    modern = Stateless(client, studio.token)
    for name, steps in reads.items():
        recipe = _recipe(data_dir, name, steps)
        # The first real run of an approved recipe follows a dry run of it (seed 000 §6.7).
        assert studio.post("/replay", json={"RecipePath": recipe, "DryRun": True}).json["ok"]
        report = studio.post("/replay", json={"RecipePath": recipe, "DryRun": False}).json
        assert report["ok"] is True and "unconfirmed" not in report, (name, report)
        # Over MCP, a client that can be asked is not asked: nothing here writes.
        answer = modern.tool(capabilities=ELICIT, name="replay",
                             arguments={"recipe_path": recipe, "dry_run": False})
        assert answer["resultType"] == "complete", (name, answer)
    for name, steps in writes.items():
        recipe = _recipe(data_dir, name, steps)
        report = studio.post("/replay", json={"RecipePath": recipe, "DryRun": False}).json
        assert report["ok"] is False and report["unconfirmed"] == [steps[0].get("method")
                                                                  or "execute_action"], report
        confirmed = [{**steps[0], "confirm": True}]
        recipe = _recipe(data_dir, f"{name}-confirmed", confirmed)
        assert studio.post("/replay", json={"RecipePath": recipe, "DryRun": True}).json["ok"]
        asked = modern.tool(capabilities=ELICIT, name="replay",
                            arguments={"recipe_path": recipe, "dry_run": False})
        assert asked["resultType"] == "input_required", (name, asked)
    assert rpc(studio, "get_element_info", {"elementId": 3001})["result"]["element"][
        "parameters"]["Comments"]["value"] == ""  # nothing was written


def test_a_recipe_cannot_call_a_declared_write_a_read(app: Flask, studio, demo) -> None:  # type: ignore[no-untyped-def]
    data_dir = Path(app.config["HARMONIC_DATA_DIR"])
    recipe = _recipe(data_dir, "sneaky", [{"method": "delete_elements", "kind": "read",
                                          "params": {"elementIds": [3001]}}])
    report = studio.post("/replay", json={"RecipePath": recipe, "DryRun": False})
    assert report.status_code == 422, report.get_data(as_text=True)
    assert "declared destructive" in report.get_data(as_text=True)


def test_read_only_tokens_run_what_reads(app: Flask, client, studio, demo, make_agent) -> None:  # type: ignore[no-untyped-def]
    reader = make_agent("alice", scopes="read")
    body = {"jsonrpc": "2.0", "id": 1, "method": "get_walls", "params": {"count": 1}}
    headers = {"Authorization": f"Bearer {reader.token}", "Content-Type": "application/json"}
    read = client.post("/design-model/rpc", json=body, headers=headers).json
    assert read["result"]["totalCount"] > 0, read
    for method in ("select_elements", "delete_elements"):  # a selection is stored state too
        write = client.post("/design-model/rpc", json={
            **body, "method": method, "params": {"elementIds": [3001]}}, headers=headers).json
        assert write["error"]["data"]["code"] == "FORBIDDEN", write
    # The action POST and MCP execute_action: a write is refused before anything runs.
    refused = reader.act("/studios/team/note", "create_note", text="no")
    assert refused.status_code == 403 and "'write' scope" in refused.json["error"]["message"]
    result = _mcp(client, reader.token).tool("execute_action", action="create_note",
                                             path="/studios/team/note", params={"text": "no"})
    assert result["isError"] is True and "403" in result["content"][0]["text"]
    # An action that only reads (a dry run of a playbook's recipe) is the reader's to run.
    made = studio.act("/playbooks", "start_teach", name="effects")
    playbook = made.json["location"]
    assert studio.act(playbook, "stop_teach").status_code == 200
    recipe = {"name": "walls", "version": "1.0.0", "steps": [{"method": "get_walls"}]}
    assert studio.act(playbook, "update_recipe", recipe=json.dumps(recipe)).status_code == 200
    assert reader.get(f"{playbook}/actions/dry_run", accept="application/json").json[
        "effect"] == "read"
    dry = reader.act(playbook, "dry_run")
    assert dry.status_code == 201 and dry.json["result"]["ok"] is True, dry.json
    assert reader.act(playbook, "replay").status_code == 403

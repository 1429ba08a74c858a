"""Replays that cannot surprise, at every door (HTTP /replay, the page's actions, MCP's replay
tool through the official SDK, ``flask playbooks``):

* an argument that is not a variable of the recipe is refused, naming the variables and the
  closest match, before anything runs (a mistyped ``param_valu`` no longer leaves the old
  default in place);
* a recipe that declares no caps is held to the operator's small default caps, shown in its
  dry run and enforced before each write; it raises them only by declaring them, which its
  review shows;
* a dry run says whether a real run with the same arguments would be allowed, and if not which
  rule will refuse it and what to do, in the very words the real run then refuses with;
* stopping a teach session makes its draft recipe on every door, and the local install's
  operator (``PLAYBOOK_AUTH=off``, nobody's studio) approves it on the command line.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.helpers import action_names, join_studio, parse_md
from tests.mcp.clients import http_client, run
from tests.playbooks.conftest import rpc

SELECTOR = {"category": "OST_Walls", "typeName": "RC150", "levelName": "1FL"}
SPACING = {"host": {"category": "OST_StructuralFraming", "levelName": "2FL"},
           "barType": "D13", "confirm": True}


def _comments(agent: Any) -> set[str]:
    walls = rpc(agent, "get_walls", {"level": "1FL"})["result"]["walls"]
    ids = [w["elementId"] for w in walls if w["typeName"] == "RC150"]
    items = rpc(agent, "get_element_info", {"elementIds": ids})["result"]["items"]
    return {i["parameters"]["Comments"]["value"] for i in items}


def _rebars(agent: Any) -> int:
    answer = rpc(agent, "get_elements_by_category_and_level", {"category": "OST_Rebar"})
    return int(answer["result"]["count"])


def _teach_walls(agent: Any, name: str) -> dict[str, Any]:
    """A session setting Comments on 1FL's RC150 walls, its recipe generated (stopping made it
    already; generating again gives the same version): the session id, page and recipe."""
    started = agent.post(f"/teach/start?name={name}").get_json()
    answer = rpc(agent, "update_wall_parameter", {"selector": SELECTOR, "param": "Comments",
                                                  "value": "Taught"})
    assert answer["result"]["updated"] == 2, answer
    agent.post("/teach/stop")
    page = f"/playbooks/{started['id']}"
    made = agent.act(page, "generate_recipe")
    assert made.status_code == 200, made.get_data(as_text=True)
    return {"sessionId": started["sessionId"], "page": page,
            "recipe": made.get_json()["result"]["recipe"]}


def _mcp_replay(live_server: str, token: str, arguments: dict[str, Any]) -> Any:
    async def scenario() -> Any:
        async with http_client(live_server, token) as client:
            return await client.call_tool("replay", arguments)

    return run(scenario)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_an_argument_that_names_no_variable_is_refused_at_every_door(
        app: Flask, studio: Any, demo: None, live_server: str) -> None:
    taught = _teach_walls(studio, "typo")
    session, page = taught["sessionId"], taught["page"]
    typo = {"param_valu": "Model B"}

    # HTTP: refused before any call, dry run or not, naming the variables and the closest.
    for dry_run in (True, False):
        refused = studio.post("/replay", json={"SessionId": session, "DryRun": dry_run,
                                               "Args": typo})
        assert refused.status_code == 422, refused.get_json()
        body = refused.get_json()
        assert body["ok"] is False and body["status"] == "refused" and body["rule"] == "args"
        assert body["unknown"] == ["param_valu"]  # (the variables bear the seed's names)
        assert body["closest"] == {"param_valu": "param_value"}
        assert body["variables"] == ["level_name", "param_name", "param_value",
                                     "target_wall_type"]
        assert "param_valu (did you mean param_value?)" in body["error"]
        assert "level_name, param_name, param_value, target_wall_type" in body["error"]
        assert body["details"] == []
    # A real run after a good dry run still refuses the typo: the old value stays.
    good = {"SessionId": session, "Args": {"param_value": "Model B"}}
    assert studio.post("/replay", json={**good, "DryRun": True}).get_json()["ok"]
    assert studio.post("/replay", json={**good, "DryRun": False,
                                        "Args": {"param_value": "Model B",
                                                 "Param_Valu": "x"}}).status_code == 422
    assert _comments(studio) == {"Taught"}
    # Names stay case-insensitive, as the seed's are.
    assert studio.post("/replay", json={**good, "DryRun": True,
                                        "Args": {"PARAM_VALUE": "Model B"}}).get_json()["ok"]

    # The page's actions.
    on_page = studio.act(page, "dry_run", args=typo)
    assert on_page.status_code == 422
    assert "did you mean param_value?" in on_page.get_json()["error"]["message"]

    # The command line.
    cli = app.test_cli_runner().invoke(args=["playbooks", "replay", session, "--dry-run",
                                             "--arg", "param_valu=Model B"])
    assert cli.exit_code == 1
    assert "did you mean param_value?" in cli.output and "refused by rule args" in cli.output

    # MCP, through the official SDK.
    result = _mcp_replay(live_server, studio.token, {"session_id": session, "args": typo})
    assert result.is_error
    assert "did you mean param_value?" in _text(result)
    assert result.structured_content["rule"] == "args"
    assert result.structured_content["closest"] == {"param_valu": "param_value"}
    assert _comments(studio) == {"Taught"}


def test_a_recipe_without_caps_is_held_to_the_default_caps(
        app: Flask, studio: Any, demo: None, data_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Hand-written, approved by its place in reviewed/, no caps and no bounds of its own:
    # every 20 mm along each 2FL beam is some two thousand bars.
    path = data_dir / "playbooks" / "reviewed" / "bars-everywhere.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "bars-everywhere", "vars": {"spacing_mm": 20},
                                "steps": [{"method": "create_rebar_by_spacing", "confirm": True,
                                           "params": {**SPACING,
                                                      "spacingMm": "{{spacing_mm}}"}}]}))
    before = _rebars(studio)
    body = {"RecipePath": "reviewed/bars-everywhere.json"}
    dry = studio.post("/replay", json={**body, "DryRun": True}).get_json()
    # The dry run stops at the planned overshoot and shows the caps in force.
    assert dry["ok"] is False and dry["status"] == "failed"
    assert dry["caps"] == {"maxCreated": {"value": 50, "source": "default"},
                           "maxUpdated": {"value": 100, "source": "default"},
                           "maxDeleted": {"value": 10, "source": "default"}}
    step = dry["details"][0]
    cap = next(c for c in step["checks"] if c["check"] == "created <= 50")
    assert cap["ok"] is False and cap["actual"] > 2000
    assert "exceeds the maximum 50 (default caps.maxCreated)" in step["error"]
    assert dry["realRun"]["allowed"] is False and dry["realRun"]["rule"] == "dry_run_first"
    refused = studio.post("/replay", json={**body, "DryRun": False})
    assert refused.status_code == 409 and refused.get_json()["rule"] == "dry_run_first"
    assert _rebars(studio) == before

    # Few enough bars pass the dry run; the cap still holds the real run, before it writes,
    # when the operator's default is lower by then.
    few = {**body, "Args": {"spacing_mm": 2000}}
    planned = studio.post("/replay", json={**few, "DryRun": True}).get_json()
    assert planned["ok"] is True and planned["realRun"] == {"allowed": True,
                                                            "basis": "approved"}
    created = planned["details"][0]["planned"]["created"]
    assert 10 < created <= 50
    monkeypatch.setitem(app.config, "PLAYBOOK_CAPS", "maxCreated=10")
    stopped = studio.post("/replay", json={**few, "DryRun": False}).get_json()
    assert stopped["ok"] is False and stopped["caps"]["maxCreated"]["value"] == 10
    assert "stopped before writing" in stopped["error"]
    assert "exceeds the maximum 10 (default caps.maxCreated)" in stopped["error"]
    assert _rebars(studio) == before
    # A malformed default never lifts a cap.
    monkeypatch.setitem(app.config, "PLAYBOOK_CAPS", "maxCreated=lots,maxUpdated=-1")
    assert studio.post("/replay", json={**few, "DryRun": True}).get_json()["caps"][
        "maxCreated"] == {"value": 50, "source": "default"}

    # Declaring a cap is how a recipe raises it.
    monkeypatch.setitem(app.config, "PLAYBOOK_CAPS", "")
    declared = json.loads(path.read_text())
    declared["caps"] = {"maxCreated": 100}
    path.write_text(json.dumps(declared))
    more = {**body, "Args": {"spacing_mm": 500}}
    dry = studio.post("/replay", json={**more, "DryRun": True}).get_json()
    assert dry["ok"] is True, dry
    assert dry["caps"]["maxCreated"] == {"value": 100, "source": "recipe", "default": 50}
    wanted = dry["details"][0]["planned"]["created"]
    assert 50 < wanted <= 100
    done = studio.post("/replay", json={**more, "DryRun": False}).get_json()
    assert done["ok"] is True, done
    assert _rebars(studio) == before + wanted


def test_a_raised_cap_is_in_the_recipe_and_its_review_shows_it(
        app: Flask, studio: Any, demo: None) -> None:
    started = studio.post("/teach/start?name=many-bars").get_json()
    taught = rpc(studio, "create_rebar_by_spacing", {**SPACING, "spacingMm": 500})
    created = taught["result"]["created"]
    assert created > 50
    studio.post("/teach/stop")
    made = studio.act(f"/playbooks/{started['id']}", "generate_recipe")
    raw = made.get_json()["result"]["recipe"]
    # What was taught must replay, so the generator raised the cap, in the recipe.
    assert raw["caps"] == {"maxCreated": created * 2}
    front, text = parse_md(studio.get(f"/playbooks/{started['id']}").get_data(as_text=True))
    assert f"* `maxCreated` {created * 2}: declared by the recipe, **raises the default 50**" \
        in text
    assert "* `maxUpdated` 100: default" in text
    html = studio.get(f"/playbooks/{started['id']}", accept="text/html").get_data(as_text=True)
    assert "<strong>above the server's default of 50</strong>" in html
    shown = app.test_cli_runner().invoke(args=["playbooks", "show", started["sessionId"]])
    assert shown.exit_code == 0, shown.output
    assert f"maxCreated {created * 2}: declared by the recipe, RAISES the default 50" \
        in shown.output
    assert "maxDeleted 10: default" in shown.output
    # A session whose writes stay under the defaults declares no caps at all.
    assert "caps" not in _teach_walls(studio, "few-walls")["recipe"]


class _CatalogUpstream(BaseHTTPRequestHandler):
    """A remote upstream whose catalog declares dryRun for create_things only."""

    calls: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:  # noqa: N802
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.calls.append(request)
        params = request.get("params") or {}
        if request["method"] == "rpc.discover":
            result: dict[str, Any] = {"openrpc": "1.3.2", "methods": [
                {"name": "create_things", "params": [{"name": "count"}, {"name": "dryRun"}]},
                {"name": "create_others", "params": [{"name": "count"}]}]}
        else:
            result = {"ok": True, "created": params.get("count", 0)}
        data = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_dry_run_says_what_a_real_run_will_meet(app: Flask, studio: Any, demo: None,
                                                  make_agent: Any, data_dir: Path,
                                                  live_server: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bob = join_studio(make_agent, "bob")
    taught = _teach_walls(studio, "verdicts")
    session, page = taught["sessionId"], taught["page"]
    assert studio.act(page, "share_playbook", studio="team").status_code == 200
    args = {"param_value": "Model B"}

    # bob is not the teacher: the draft does not run for real, and the dry run says so.
    dry = bob.post("/replay", json={"SessionId": session, "DryRun": True, "Args": args})
    assert dry.status_code == 200 and dry.get_json()["ok"] is True
    verdict = dry.get_json()["realRun"]
    assert verdict["allowed"] is False and verdict["rule"] == "approval"
    assert "review_recipe" in verdict["next"] and "flask playbooks approve" in verdict["next"]
    real = bob.post("/replay", json={"SessionId": session, "DryRun": False, "Args": args})
    assert real.status_code == 409
    assert real.get_json()["refusal"] == {k: v for k, v in verdict.items() if k != "allowed"}
    # The same answer on the page (and the dry run's page keeps it), the command line and MCP.
    on_page = bob.act(page, "dry_run", args=args)
    assert on_page.status_code == 201
    said = on_page.get_json()["message"]
    assert "A real run with these arguments would be refused (rule approval)" in said
    run_page = bob.get(on_page.get_json()["location"]).get_data(as_text=True)
    assert "**Real run:** A real run with these arguments would be refused (rule approval)" \
        in run_page
    result = _mcp_replay(live_server, bob.token, {"session_id": session, "args": args})
    assert not result.is_error, _text(result)
    assert result.structured_content["real_run"]["rule"] == "approval"
    assert "would be refused (rule approval)" in _text(result)
    # The teacher's own session may go, once this very dry run has succeeded.
    own = studio.post("/replay", json={"SessionId": session, "DryRun": True,
                                       "Args": args}).get_json()
    assert own["realRun"] == {"allowed": True, "basis": "teacher"}
    cli = app.test_cli_runner().invoke(args=["playbooks", "replay", session, "--dry-run",
                                             "--arg", "param_value=Model B"])
    assert cli.exit_code == 0, cli.output
    assert "caps: maxCreated 50 (default), maxUpdated 100 (default), maxDeleted 10 (default)" \
        in cli.output
    assert "A real run with these arguments would be " in cli.output
    # A write with no confirm: the dry run goes, and says the real run will not.
    unconfirmed = data_dir / "playbooks" / "reviewed" / "unconfirmed.json"
    unconfirmed.parent.mkdir(parents=True, exist_ok=True)
    unconfirmed.write_text(json.dumps({"name": "unconfirmed", "steps": [
        {"method": "update_wall_parameter", "params": {"selector": SELECTOR,
                                                       "param": "Comments", "value": "x"}}]}))
    checked = studio.post("/replay", json={"RecipePath": "reviewed/unconfirmed.json",
                                           "DryRun": True}).get_json()
    assert checked["ok"] is True and checked["realRun"]["rule"] == "confirm"
    assert "update_wall_parameter" in checked["realRun"]["message"]
    assert _comments(studio) == {"Taught"}

    # A remote upstream: a write previews there when the operator lists it or when the
    # upstream's own catalog declares dryRun for it; the dry run says which way it will go.
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CatalogUpstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _CatalogUpstream.calls = []
    remote = data_dir / "playbooks" / "reviewed" / "remote-things.json"
    try:
        monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM",
                            f"http://127.0.0.1:{server.server_port}")
        for method, allowed in (("create_things", True), ("create_others", False)):
            remote.write_text(json.dumps({"name": method, "steps": [
                {"method": method, "params": {"count": 3}, "confirm": True}]}))
            body = {"RecipePath": "reviewed/remote-things.json", "DryRun": True}
            dry = studio.post("/replay", json=body).get_json()
            assert dry["ok"] is True and dry["realRun"]["allowed"] is allowed, dry
            done = studio.post("/replay", json={**body, "DryRun": False})
            assert done.get_json()["ok"] is allowed, done.get_json()
            if not allowed:
                assert dry["realRun"]["rule"] == "preview" and done.status_code == 409
                assert "create_others" in dry["realRun"]["message"]
        sent = [(c["method"], c["params"]) for c in _CatalogUpstream.calls
                if c["method"] != "rpc.discover"]
        assert sent == [("create_things", {"count": 3, "dryRun": True}),  # the dry run
                        ("create_things", {"count": 3, "dryRun": True}),  # the preview
                        ("create_things", {"count": 3})]  # the write; create_others: none
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_the_local_operator_gets_a_draft_and_approves_it(
        app: Flask, demo: None, auth_off: None, client: Any, studio: Any,
        monkeypatch: pytest.MonkeyPatch, capture_store: str) -> None:
    # Token-less, on loopback: the session belongs to the local operator, nobody's studio.
    # (Named per capture store: the same recipe approved in the other run would count here.)
    name = f"local-walls-{capture_store}"
    monkeypatch.setitem(app.config, "PLAYBOOK_TEACHER_REPLAY", "off")
    client.post(f"/teach/start?name={name}")
    answer = client.post("/rpc", json={"jsonrpc": "2.0", "id": 1,
                                       "method": "update_wall_parameter",
                                       "params": {"selector": SELECTOR, "param": "Comments",
                                                  "value": "Local"}}).get_json()
    assert answer["result"]["updated"] == 2
    stopped = client.post("/teach/stop").get_json()
    assert stopped["recipe"]["state"] == "draft"
    assert Path(stopped["recipe"]["path"]).is_file()
    assert f'"SessionId": "{name}", "DryRun": true' in stopped["message"]
    body = {"SessionId": name, "Args": {"param_value": "Approved"}}
    dry = client.post("/replay", json={**body, "DryRun": True}).get_json()
    assert dry["ok"] is True and dry["realRun"]["rule"] == "approval"
    assert "flask playbooks approve" in dry["realRun"]["next"]
    assert client.post("/replay", json={**body, "DryRun": False}).status_code == 409

    runner = app.test_cli_runner()
    shown = runner.invoke(args=["playbooks", "show", name])
    assert shown.exit_code == 0, shown.output
    assert "version 1.0.0 (draft), by local" in shown.output
    assert "param_value = \"Local\"" in shown.output
    assert "update_wall_parameter update_wall_parameter" in shown.output
    declined = runner.invoke(args=["playbooks", "approve", name], input="n\n")
    assert declined.exit_code == 1
    assert client.post("/replay", json={**body, "DryRun": False}).status_code == 409
    approved = runner.invoke(args=["playbooks", "approve", name, "--yes", "--note", "read it"])
    assert approved.exit_code == 0, approved.output
    assert "/playbooks/reviewed/" in approved.output
    again = runner.invoke(args=["playbooks", "approve", name, "--yes"])
    assert again.exit_code == 1 and "only a draft or reviewed version" in again.output

    dry = client.post("/replay", json={**body, "DryRun": True}).get_json()
    assert dry["realRun"] == {"allowed": True, "basis": "approved"}
    done = client.post("/replay", json={**body, "DryRun": False}).get_json()
    assert done["ok"] is True and done["governance"] == {"state": "approved",
                                                         "basis": "approved"}
    assert _comments(studio) == {"Approved"}
    # The approval is in the playbook's audit, as the operator's.
    from app.extensions import db
    from app.models.playbooks import PlaybookAudit

    with app.app_context():
        rows = db.session.query(PlaybookAudit).filter_by(event="approved").all()
        assert ("operator", "read it") in [(r.actor, r.detail.get("note")) for r in rows
                                           if r.detail.get("by")]


def test_stopping_on_the_page_makes_the_draft_too(studio: Any, demo: None) -> None:
    started = studio.act("/playbooks", "start_teach", name="page-walls")
    short = started.get_json()["result"]["id"]
    rpc(studio, "update_wall_parameter", {"selector": SELECTOR, "param": "Comments",
                                          "value": "Page"})
    stopped = studio.act(f"/playbooks/{short}", "stop_teach")
    assert stopped.status_code == 200, stopped.get_data(as_text=True)
    assert "Draft recipe page-walls@1.0.0 with 1 steps" in stopped.get_json()["message"]
    assert "dry_run" in action_names(studio.get(f"/playbooks/{short}").get_data(as_text=True))

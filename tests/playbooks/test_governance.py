"""Seed 000's governance (§6.7 "First run is always dry-run", §6.9 "Keep a reviewed folder for
approved recipes; require code review for changes"), through HTTP and through MCP.

bob teaches a rebar routine and shares the playbook with the studio 'team'; carol, a member,
reviews the draft on its page; alice, the studio's admin, approves it. Whoever replays it for
real is refused while it is a draft (naming the rule and what to do next), refused again
without a dry run of the same version and arguments, and succeeds after one. A recipe file in
the data folder's reviewed/ folder counts as approved; others are drafts. Seed 000's plain
``curl -d`` (a form Content-Type) reaches /rpc as JSON.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.helpers import join_studio, parse_md
from tests.playbooks.conftest import rpc, run_async

BAR = {"barType": "D16", "coverTop": "25mm", "coverSide": "25mm"}


def _rebars(agent: Any) -> int:
    answer = rpc(agent, "get_elements_by_category_and_level", {"category": "OST_Rebar"})
    return answer["result"]["count"]


def _people(studio: Any, make_agent: Any) -> tuple[Any, Any, Any]:
    """alice (the studio's admin), bob (author, member) and carol (member)."""
    return studio, join_studio(make_agent, "bob"), join_studio(make_agent, "carol")


def _taught_and_shared(bob: Any, name: str = "rebar-b1") -> tuple[str, str]:
    """bob's rebar session on beam B1, its draft recipe generated and shared with 'team'.
    (A recipe is known by its content: the same routine taught under the same name is the
    same recipe, approved wherever its content is in reviewed/.)"""
    started = bob.post(f"/teach/start?name={name}").get_json()
    rpc(bob, "create_rebar_linear", {"host": {"elementId": 4001}, "count": 4, "confirm": True,
                                     **BAR})
    assert bob.post("/teach/stop").get_json()["entries"] == 1
    page = f"/playbooks/{started['id']}"
    assert bob.act(page, "generate_recipe").status_code == 200
    shared = bob.act(page, "share_playbook", studio="team")
    assert shared.status_code == 200, shared.get_data(as_text=True)
    return started["sessionId"], page


def test_review_approve_dry_run_then_replay_over_http(app, studio, demo, make_agent,
                                                      data_dir) -> None:  # type: ignore[no-untyped-def]
    alice, bob, carol = _people(studio, make_agent)
    session, page = _taught_and_shared(bob)
    real = {"SessionId": session, "DryRun": False, "Args": {"bar_count": 5}}
    before = _rebars(carol)

    # A draft is refused for real, before any call, saying which rule and what to do next.
    draft = carol.post("/replay", json=real)
    assert draft.status_code == 409
    body = draft.get_json()
    assert body["ok"] is False and body["rule"] == "approval" and body["details"] == []
    assert "draft recipe: only approved versions replay for real" in body["error"]
    assert "review_recipe" in body["next"] and "approve_recipe" in body["next"]
    assert _rebars(carol) == before

    # carol reviews on the page: the diff, the variables, the bounds and the write steps.
    front, text = parse_md(carol.get(page).get_data(as_text=True))
    offered = [a["name"] for a in front["actions"]]
    assert "review_recipe" in offered and "approve_recipe" not in offered
    assert "### Review of version 1.0.0 (draft)" in text
    assert "+  \"name\": \"rebar-b1\"," in text  # the diff from nothing: every line added
    assert "* `bar_count` (required)" in text
    assert "* `create_rebar_linear`: `created <= 8` (`maxCreated`)" in text
    assert "* `create_rebar_linear` calls `create_rebar_linear`, confirm: true" in text
    # The author does not review their own version.
    assert "review_recipe" not in [a["name"] for a in parse_md(
        bob.get(page).get_data(as_text=True))[0]["actions"]]
    own = bob.act(page, "review_recipe")
    assert own.status_code == 403
    assert carol.act(page, "review_recipe", note="bounds and selector checked").status_code \
        == 200

    # Reviewed is not approved: still refused, now pointing at the admin's approval.
    reviewed = carol.post("/replay", json=real)
    assert reviewed.status_code == 409 and reviewed.get_json()["rule"] == "approval"
    assert "reviewed recipe" in reviewed.get_json()["error"]
    assert carol.act(page, "approve_recipe").status_code == 403  # a member, not an admin
    approved = alice.act(page, "approve_recipe")
    assert approved.status_code == 200, approved.get_data(as_text=True)
    reviewed_path = approved.get_json()["result"]["recipePath"]
    assert reviewed_path.startswith("reviewed/")
    assert (data_dir / "playbooks" / reviewed_path).is_file()

    # Approved, but the first real run with these arguments needs a dry run of them.
    first = carol.post("/replay", json=real)
    assert first.status_code == 409 and first.get_json()["rule"] == "dry_run_first"
    assert "DryRun: true" in first.get_json()["next"]
    other = carol.post("/replay", json={**real, "DryRun": True, "Args": {"bar_count": 3}})
    assert other.get_json()["ok"]
    assert carol.post("/replay", json=real).get_json()["rule"] == "dry_run_first"
    dry = carol.post("/replay", json={**real, "DryRun": True})
    assert dry.status_code == 200 and dry.get_json()["ok"]
    assert _rebars(carol) == before
    done = carol.post("/replay", json=real)
    assert done.status_code == 200 and done.get_json()["ok"], done.get_json()
    assert done.get_json()["governance"] == {"state": "approved", "basis": "approved"}
    assert _rebars(carol) == before + 5

    # Every state change and every replay is audited, refusals included.
    text = parse_md(alice.get(page).get_data(as_text=True))[1]
    audit = text[text.index("### Audit"):]
    for event in ("generated by", "shared by", "reviewed by", "approved by",
                  "replay by", "dry_run by"):
        assert event in audit, event
    assert "rule approval" in audit and "rule dry_run_first" in audit

    # Retired: no real run any more, and it leaves the reviewed folder.
    assert carol.act(page, "retire_recipe").status_code == 403
    assert alice.act(page, "retire_recipe").status_code == 200
    assert not (data_dir / "playbooks" / reviewed_path).exists()
    retired = carol.post("/replay", json=real)
    assert retired.status_code == 409 and retired.get_json()["rule"] == "retired"
    assert _rebars(carol) == before + 5


def test_the_teacher_replays_their_own_session_after_a_dry_run(app, studio, demo, make_agent,
                                                               monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _alice, bob, _carol = _people(studio, make_agent)
    session, _page = _taught_and_shared(bob)
    real = {"SessionId": session, "DryRun": False, "Args": {"bar_count": 2}}
    assert bob.post("/replay", json=real).get_json()["rule"] == "dry_run_first"
    assert bob.post("/replay", json={**real, "DryRun": True}).get_json()["ok"]
    monkeypatch.setitem(app.config, "PLAYBOOK_TEACHER_REPLAY", "off")
    off = bob.post("/replay", json=real)
    assert off.status_code == 409 and off.get_json()["rule"] == "approval"
    assert "PLAYBOOK_TEACHER_REPLAY=off" in off.get_json()["error"]
    monkeypatch.setitem(app.config, "PLAYBOOK_TEACHER_REPLAY", "on")
    # The studio the playbook is shared with may say otherwise, in its settings.
    policy = studio.act("/studios/team/settings", "update_studio_settings", teacher_replays=False)
    assert policy.status_code == 200, policy.get_data(as_text=True)
    strict = bob.post("/replay", json=real)
    assert strict.status_code == 409 and strict.get_json()["rule"] == "approval"
    assert "team replays approved recipes only" in strict.get_json()["error"]
    studio.act("/studios/team/settings", "update_studio_settings", teacher_replays=True)
    done = bob.post("/replay", json=real).get_json()
    assert done["ok"] and done["governance"] == {"state": "draft", "basis": "teacher"}
    # The dry run expires: a new argument set needs a fresh one within the window.
    monkeypatch.setitem(app.config, "PLAYBOOK_DRYRUN_WINDOW", "0.2")
    three = {**real, "Args": {"bar_count": 3}}
    assert bob.post("/replay", json={**three, "DryRun": True}).get_json()["ok"]
    time.sleep(0.4)
    late = bob.post("/replay", json=three)
    assert late.status_code == 409 and late.get_json()["rule"] == "dry_run_first"


def test_review_approve_dry_run_then_replay_over_mcp(app, studio, demo, make_agent,
                                                     live_server, capture_store) -> None:  # type: ignore[no-untyped-def]
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    alice, bob, carol = _people(studio, make_agent)
    session, page = _taught_and_shared(bob, f"rebar-mcp-{capture_store}")
    call = {"session": session, "args": {"bar_count": 5}, "dry_run": False}
    before = _rebars(carol)

    async def replay(arguments: dict[str, Any]) -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {carol.token}"},
                                      timeout=httpx2.Timeout(60.0)) as http_client:
            async with Client(streamable_http_client(live_server + "/mcp",
                                                     http_client=http_client)) as client:
                return await client.call_tool("replay", arguments)

    def text_of(result: Any) -> str:
        return "\n".join(block.text for block in result.content if block.type == "text")

    draft = run_async(lambda: replay(call))
    assert draft.is_error and "(rule: approval)" in text_of(draft)
    assert "only approved versions replay for real" in text_of(draft)
    assert draft.structured_content["rule"] == "approval"
    assert carol.act(page, "review_recipe").status_code == 200
    assert alice.act(page, "approve_recipe").status_code == 200
    first = run_async(lambda: replay(call))
    assert first.is_error and "(rule: dry_run_first)" in text_of(first)
    # Over MCP the refusal speaks the tool's own argument names, not /replay's.
    assert "dry_run: true" in text_of(first) and "DryRun" not in text_of(first)
    assert _rebars(carol) == before
    dry = run_async(lambda: replay({**call, "dry_run": True}))
    assert not dry.is_error, text_of(dry)
    done = run_async(lambda: replay(call))
    assert not done.is_error, text_of(done)
    assert done.structured_content["governance"]["basis"] == "approved"
    assert _rebars(carol) == before + 5


def test_a_reviewed_file_recipe_replays_after_its_dry_run(app, studio, demo,
                                                          data_dir) -> None:  # type: ignore[no-untyped-def]
    recipe = {"name": "comment-walls", "version": "1.0.0",
              "vars": {"value": "Reviewed"},
              "steps": [{"method": "update_wall_parameter", "confirm": True,
                         "params": {"selector": {"category": "OST_Walls", "typeName": "RC150",
                                                 "levelName": "1FL"},
                                    "param": "Comments", "value": "{{value}}"},
                         "expect": {"minUpdated": 1, "maxUpdated": 10}}]}
    for folder in ("hand-made", "reviewed"):
        path = data_dir / "playbooks" / folder / "walls.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(recipe))
    draft = studio.post("/replay", json={"RecipePath": "hand-made/walls.json",
                                         "DryRun": False})
    assert draft.status_code == 409 and draft.get_json()["rule"] == "approval"
    assert "reviewed/" in draft.get_json()["next"]
    body = {"RecipePath": "reviewed/walls.json", "DryRun": False}
    assert studio.post("/replay", json=body).get_json()["rule"] == "dry_run_first"
    assert studio.post("/replay", json={**body, "DryRun": True}).get_json()["ok"]
    done = studio.post("/replay", json=body).get_json()
    assert done["ok"] and done["details"][0]["response"]["result"]["updated"] == 2
    # The same content dry-run under another name is the same recipe (known by its digest).
    (data_dir / "playbooks" / "reviewed" / "copy.json").write_text(json.dumps(recipe))
    assert studio.post("/replay", json={**body, "RecipePath": "reviewed/copy.json"}
                       ).get_json()["ok"]


def test_plain_curl_d_reaches_rpc_and_replay(app, demo, auth_off, live_server,
                                             data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """``curl -d`` sends Content-Type application/x-www-form-urlencoded; the JSON still counts,
    even with the characters a form decoder would split on."""
    payload = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "get_walls",
                          "params": {"level": "1FL", "note": "a=b&c=d+e%20"}})
    done = subprocess.run(["curl", "-sS", "--max-time", "30", "-X", "POST", "-w",
                           "\n%{http_code}", f"{live_server}/rpc", "-d", payload],
                          capture_output=True, text=True, check=True)
    text, _, code = done.stdout.rpartition("\n")
    assert code == "200"
    answer = json.loads(text)
    assert answer["id"] == 7 and answer["result"]["totalCount"] >= 1, answer
    path = data_dir / "playbooks" / "reviewed" / "read.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "read", "steps": [{"method": "get_walls",
                                                            "params": {"level": "1FL"}}]}))
    replayed = subprocess.run(["curl", "-sS", "--max-time", "30", "-X", "POST",
                               f"{live_server}/replay", "-d",
                               json.dumps({"RecipePath": "reviewed/read.json", "DryRun": True})],
                              capture_output=True, text=True, check=True)
    assert json.loads(replayed.stdout)["ok"] is True

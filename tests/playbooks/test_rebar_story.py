"""Seed 000's rebar story end to end against the embedded design-model server.

Teach with count 8 → recipe with bar_count required and the beam named by a selector;
replay without bar_count → refused naming it, before any call; with 5 → the dry run shows 5
candidates and writes nothing, execution creates 5; with 8 and maxCreated 6 → stopped before
the write, model unchanged.
"""

from __future__ import annotations

import json
import re

from tests.helpers import parse_md
from tests.playbooks.conftest import rpc

BAR = {"barType": "D16", "coverTop": "25mm", "coverSide": "25mm"}


def _rebar_count(agent) -> int:  # type: ignore[no-untyped-def]
    answer = rpc(agent, "get_elements_by_category_and_level", {"category": "OST_Rebar"})
    return answer["result"]["count"]


def _teach_rebar(agent) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    started = agent.post("/teach/start?name=rebar-beam-B1").get_json()
    assert started["ok"] and re.fullmatch(r"\d{8}_\d{6}_rebar-beam-B1(-\d+)?",
                                          started["sessionId"])
    beams = rpc(agent, "get_elements_by_category_and_level",
                {"category": "OST_StructuralFraming", "levelSelector": {"levelName": "2FL"}})
    beam = beams["result"]["items"][0]["elementId"]
    preview = rpc(agent, "preview_rebar_linear", {"host": {"elementId": beam}, "count": 8, **BAR})
    assert preview["result"]["candidates"] == 8
    made = rpc(agent, "create_rebar_linear",
               {"host": {"elementId": beam}, "count": 8, "confirm": True, **BAR})
    assert made["result"]["created"] == 8
    stopped = agent.post("/teach/stop").get_json()
    assert stopped["ok"] and stopped["entries"] == 3
    return started["sessionId"], started["id"]


def test_rebar_story(app, studio, demo) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    session, short = _teach_rebar(alice)

    generated = alice.act(f"/playbooks/{short}", "generate_recipe")
    assert generated.status_code == 200, generated.get_data(as_text=True)
    recipe = generated.get_json()["result"]["recipe"]
    assert recipe["vars"]["bar_count"] is None  # volatile: required, no default
    assert recipe["inputs"]["bar_count"]["required"] is True
    selector = recipe["vars"]["host_selector"]  # intent, not the id 4001
    assert selector["category"] == "OST_StructuralFraming" and selector["mark"] == "B1"
    create = next(s for s in recipe["steps"] if s["method"] == "create_rebar_linear")
    assert create["params"]["count"] == "{{bar_count}}" and create["confirm"] is True
    assert create["params"]["host"] == "{{host_selector}}"
    assert "maxCreated" in create["expect"]

    before = _rebar_count(alice)

    # Without bar_count: refused, naming it, before any call.
    refused = alice.post("/replay", json={"SessionId": session, "DryRun": False, "Args": {}})
    assert refused.status_code == 422
    body = refused.get_json()
    assert body["ok"] is False and body["missing"] == ["bar_count"]
    assert "bar_count" in body["error"] and body["details"] == []
    assert _rebar_count(alice) == before

    # Dry run with 5: the upstream's own preview, nothing written.
    dry = alice.post("/replay", json={"SessionId": session, "DryRun": True,
                                      "Args": {"bar_count": 5}}).get_json()
    assert dry["ok"] and dry["dryRun"], dry
    steps = {d["name"]: d for d in dry["details"]}
    assert steps["preview_rebar_linear"]["response"]["result"]["candidates"] == 5
    assert steps["create_rebar_linear"]["status"] == "planned"
    assert steps["create_rebar_linear"]["planned"]["created"] == 5
    assert steps["create_rebar_linear"]["targets"][0]["elementIds"] == [4001]  # beam B1
    assert _rebar_count(alice) == before

    # Execute with 5 (the teacher's own session, after its dry run): exactly 5 bars.
    done = alice.post("/replay", json={"SessionId": session, "DryRun": False,
                                       "Args": {"bar_count": "5"}}).get_json()
    assert done["ok"], done
    created = next(d for d in done["details"] if d["name"] == "create_rebar_linear")
    assert created["response"]["result"]["created"] == 5
    assert created["preview"]["checks"][0]["ok"]
    assert _rebar_count(alice) == before + 5

    # Tighten the bound to maxCreated 6, then try 8: stopped before the write.
    create["expect"]["maxCreated"] = 6
    saved = alice.act(f"/playbooks/{short}", "update_recipe", recipe=json.dumps(recipe))
    assert saved.status_code == 200, saved.get_data(as_text=True)
    stopped = alice.post("/replay", json={"SessionId": session, "DryRun": True,
                                          "Args": {"bar_count": 8}}).get_json()
    assert stopped["ok"] is False and stopped["status"] == "failed"
    assert "exceeds the maximum 6" in stopped["error"] and "maxCreated" in stopped["error"]
    last = stopped["details"][-1]
    assert last["name"] == "create_rebar_linear" and last["status"] == "failed"
    # A failed dry run lets nothing through: 8 for real is refused before any call.
    refused8 = alice.post("/replay", json={"SessionId": session, "DryRun": False,
                                           "Args": {"bar_count": 8}})
    assert refused8.status_code == 409 and refused8.get_json()["rule"] == "dry_run_first"
    assert _rebar_count(alice) == before + 5  # unchanged

    # Every run is stored and readable per step.
    page = alice.get(stopped["run"])
    assert page.status_code == 200
    front, text = parse_md(page.get_data(as_text=True))
    assert front["path"] == stopped["run"]
    assert "exceeds the maximum 6" in text and "create_rebar_linear" in text
    listing = alice.get(f"/playbooks/{short}").get_data(as_text=True)
    # refused, dry, done, stopped (a dry run), refused8
    assert listing.count(f"/playbooks/{short}/runs/") == 5


def test_required_variables_are_all_listed_and_types_checked(app, studio, demo) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    session, short = _teach_rebar(alice)
    recipe = alice.act(f"/playbooks/{short}", "generate_recipe").get_json()["result"]["recipe"]
    recipe["vars"]["bar_type"] = None
    alice.act(f"/playbooks/{short}", "update_recipe", recipe=json.dumps(recipe))
    refused = alice.post("/replay", json={"SessionId": session, "DryRun": True}).get_json()
    assert sorted(refused["missing"]) == ["bar_count", "bar_type"]
    wrong = alice.post("/replay", json={"SessionId": session, "DryRun": True,
                                        "Args": {"bar_count": "five", "bar_type": "D16"}})
    assert wrong.status_code == 422
    assert "bar_count must be of type integer" in wrong.get_json()["error"]

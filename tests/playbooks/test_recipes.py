"""The recipe format: comments, semver names, typed substitution, bounds (a missing field
fails), the general check form, caps — and seed 000's rebar recipe A as printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.playbooks import recipe as recipes
from app.services.errors import Invalid
from tests.playbooks.conftest import rpc

# Seed 000 §3.1 A, verbatim (comments included).
SEED_REBAR_A = (Path(__file__).parent / "seed_000_rebar_a.jsonc").read_text()


def test_seed_rebar_recipe_parses_with_its_comments() -> None:
    loaded = recipes.load(recipes.parse_text(SEED_REBAR_A))
    assert loaded.title == "place-rebar-linear@0.0.0"
    assert recipes.missing_vars(loaded, recipes.resolve_vars(loaded, {})) == ["bar_count"]
    create = loaded.steps[1]
    assert create.kind == "write" and create.name == "create_rebar_linear"
    assert [(c.path, c.min, c.max) for c in create.checks] == [("created", 1, None),
                                                                ("created", None, 6)]


def test_typed_substitution() -> None:
    values = {"sel": {"category": "OST_Walls"}, "n": 5, "name": "RC150", "flag": False}
    outputs = {"make": {"elementIds": [11, 12], "location": "/studios/a/d/1"}}
    params = {"selector": "{{sel}}", "count": "{{ n }}", "label": "type {{name}} x{{n}}",
              "first": "{{steps.make.result.elementIds.0}}", "flag": "{{flag}}",
              "path": "{{steps.make.result.location}}/settings"}
    assert recipes.substitute(params, values, outputs) == {
        "selector": {"category": "OST_Walls"}, "count": 5, "label": "type RC150 x5",
        "first": 11, "flag": False, "path": "/studios/a/d/1/settings"}
    with pytest.raises(recipes.Unresolved):
        recipes.substitute({"x": "{{steps.later.result.id}}"}, values, outputs)
    lenient = recipes.substitute({"x": "{{steps.later.result.id}}"}, values, outputs, True)
    assert lenient == {"x": "{{steps.later.result.id}}"}


def test_bounds_missing_field_fails_and_general_checks() -> None:
    missing = recipes.Check(path="updated", max=10, source="maxUpdated")
    verdict = recipes.evaluate(missing, {"ok": True, "elementId": 3})
    assert verdict["ok"] is False and "no 'updated' field" in verdict["message"]
    alias = recipes.evaluate(recipes.Check(path="updated", min=1), {"stats": {"successCount": 2}})
    assert alias["ok"] and alias["field"] == "stats.successCount"
    errors: list[dict[str, str]] = []
    checks, _ = recipes.parse_checks({"checks": [
        {"path": "items", "min": 1, "max": 3}, {"path": "ok", "equals": True},
        {"path": "walls[0].typeName", "equals": "RC150"}]}, "expect", errors)
    result = {"ok": True, "items": [1, 2], "walls": [{"typeName": "RC200"}]}
    assert [recipes.evaluate(c, result)["ok"] for c in checks] == [True, True, False]
    assert errors == []


def test_invalid_recipes_list_every_problem() -> None:
    with pytest.raises(Invalid) as caught:
        recipes.load({"name": "x@1.2", "steps": [{"method": "a", "tool": "b"},
                                                  {"method": "c", "expect": {"maxBogus": 1}},
                                                  {"method": "d", "confirm": "yes"}],
                      "caps": {"maxEverything": 3}})
    params = {e["param"] for e in caught.value.errors}
    assert params == {"version", "steps[0]", "steps[1].expect.maxBogus", "steps[2].confirm",
                      "caps.maxEverything"}
    assert recipes.load({"name": "walls@2.1.0", "steps": [{"method": "get_walls"}]}).version \
        == "2.1.0"


def _rebar(agent) -> int:  # type: ignore[no-untyped-def]
    return rpc(agent, "get_elements_by_category_and_level",
               {"category": "OST_Rebar"})["result"]["count"]


def test_seed_rebar_recipe_a_blocks_the_overshoot(app, studio, demo, data_dir) -> None:  # type: ignore[no-untyped-def]
    """Three beams match the seed's selector: 5 bars each is 15 > maxCreated 6 → no write."""
    path = data_dir / "playbooks" / "seed-rebar-a.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SEED_REBAR_A)
    before = _rebar(studio)
    dry = studio.post("/replay", json={"RecipePath": "seed-rebar-a.json", "DryRun": True,
                                       "Args": {"bar_count": 5}}).get_json()
    assert dry["ok"] is False and "created = 15 exceeds the maximum 6" in dry["error"]
    # A file outside reviewed/ is a draft: refused for real, before any call.
    draft = studio.post("/replay", json={"RecipePath": str(path), "DryRun": False,
                                         "Args": {"bar_count": 5}})
    assert draft.status_code == 409 and draft.get_json()["rule"] == "approval"
    narrowed = json.loads(recipes.strip_comments(SEED_REBAR_A))
    narrowed["vars"]["host_selector"]["mark"] = "B2"
    approved = data_dir / "playbooks" / "reviewed" / "seed-rebar-a.json"
    approved.parent.mkdir(parents=True, exist_ok=True)
    approved.write_text(json.dumps(narrowed))
    body = {"RecipePath": "reviewed/seed-rebar-a.json", "DryRun": True,
            "Args": {"bar_count": 5}}
    assert studio.post("/replay", json=body).get_json()["ok"]  # one beam: 5 bars planned
    # The model drifts after the dry run: beam B1 is re-marked B2, so two beams match.
    rpc(studio, "set_parameter_for_elements", {"elementIds": [4001], "param": "Mark",
                                               "value": "B2"})
    run = studio.post("/replay", json={**body, "DryRun": False}).get_json()
    assert run["ok"] is False and "stopped before writing" in run["error"]
    assert _rebar(studio) == before
    rpc(studio, "set_parameter_for_elements", {"elementIds": [4001], "param": "Mark",
                                               "value": "B1"})
    ok = studio.post("/replay", json={**body, "DryRun": False}).get_json()
    assert ok["ok"], ok
    assert _rebar(studio) == before + 5


def test_a_bound_on_a_missing_field_fails_the_step(app, studio, demo, data_dir) -> None:  # type: ignore[no-untyped-def]
    path = data_dir / "playbooks" / "missing-field.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "check", "steps": [
        {"name": "walls", "method": "get_walls", "params": {"level": "1FL"},
         "expect": {"minUpdated": 1}},
        {"method": "get_walls", "params": {}}]}))
    report = studio.post("/replay", json={"RecipePath": str(path), "DryRun": True}).get_json()
    assert report["ok"] is False and report["steps"] == {"total": 2, "succeeded": 0,
                                                         "failed": 1, "skipped": 1}
    assert "no 'updated' field" in report["details"][0]["error"]


def test_generated_recipe_wires_what_an_earlier_step_created(app, studio, demo) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    started = alice.post("/teach/start?name=new-wall").get_json()
    made = rpc(alice, "create_wall", {"start": {"x": 0, "y": 9000, "z": 0},
                                      "end": {"x": 5000, "y": 9000, "z": 0},
                                      "wallTypeName": "RC150", "levelName": "1FL",
                                      "heightMm": 3000, "confirm": True})
    wall = made["result"]["elementId"]
    rpc(alice, "update_wall_parameter", {"elementId": wall, "param": "Comments",
                                         "value": "New"})
    alice.post("/teach/stop")
    recipe = alice.act(f"/playbooks/{started['id']}",
                       "generate_recipe").get_json()["result"]["recipe"]
    update = recipe["steps"][1]
    assert update["params"]["elementId"] == "{{steps.create_wall.result.elementId}}"
    body = {"SessionId": started["sessionId"], "Args": {"param_value": "Replayed"}}
    dry = alice.post("/replay", json={**body, "DryRun": True}).get_json()
    assert dry["ok"], (dry["error"], dry["details"])
    report = alice.post("/replay", json={**body, "DryRun": False}).get_json()
    assert report["ok"], report
    new_wall = report["details"][0]["response"]["result"]["elementId"]
    assert new_wall != wall
    assert report["details"][1]["request"]["params"]["elementId"] == new_wall
    info = rpc(alice, "get_element_info", {"elementId": new_wall})["result"]["element"]
    assert info["parameters"]["Comments"]["value"] == "Replayed"

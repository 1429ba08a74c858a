"""Property tests: generated plans parse, validate, render and survive every operation;
no text crashes the parser and every error has a line and column."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.floorplans import tools
from app.floorplans.validate import analyze

from .plans import LABEL_TEXT, VOCAB, GeneratedPlan, plans, token_soup

FAST = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_positions(text: str, diagnostics: list[dict]) -> None:
    lines = text.split("\n")
    for d in diagnostics:
        assert isinstance(d["line"], int) and isinstance(d["column"], int), d
        assert 1 <= d["line"] <= len(lines), (d, len(lines))
        assert 1 <= d["column"] <= len(lines[d["line"] - 1]) + 1, d
        assert d["message"]


@SLOW
@given(plans())
def test_generated_plans_validate_and_render(plan: GeneratedPlan) -> None:
    result = tools.validate_floorplan({"dsl": plan.dsl})
    assert result["valid"], (plan.dsl, result)
    assert not [w for w in result.get("warnings", []) if w["type"] == "overlap"]
    svg, _, meta = tools.render_floorplan({"dsl": plan.dsl, "format": "svg",
                                           "renderAllFloors": True})
    assert meta["success"], meta
    root = ET.fromstring(svg)
    drawn = {el.get("data-room") for el in root.iter() if el.get("class") == "room"}
    assert drawn == set(plan.rooms)
    assert len([c for c in root.iter() if "connection" in (c.get("class") or "")]) == \
        len(plan.connections)
    assert tools.render_floorplan({"dsl": plan.dsl, "format": "svg", "renderAllFloors": True}
                                  )[0] == svg


def _operations(plan: GeneratedPlan, data) -> list[dict]:
    room = data.draw(st.sampled_from(plan.rooms))
    top = data.draw(st.sampled_from(plan.top_rooms))
    anchor = data.draw(st.sampled_from([n for n in plan.top_rooms if n.endswith("_0_0")]))
    other = data.draw(st.sampled_from(plan.top_rooms))
    ops = [
        {"action": "add_room", "params": {"name": "Added", "position": {"x": 500, "y": 500},
                                          "size": {"width": 3, "height": 3},
                                          "label": data.draw(LABEL_TEXT)}},
        {"action": "remove_room", "target": room, "params": {"removeReferences": True}},
        {"action": "resize_room", "target": room,
         "params": {"width": data.draw(st.integers(1, 20)),
                    "height": data.draw(st.integers(1, 20))}},
        {"action": "move_room", "target": room,
         "params": {"x": data.draw(st.integers(-50, 50)), "y": data.draw(st.integers(-50, 50))}},
        {"action": "rename_room", "target": room, "params": {"newName": "Renamed_1"}},
        {"action": "update_walls", "target": room,
         "params": data.draw(st.dictionaries(st.sampled_from(VOCAB.wall_sides),
                                             st.sampled_from(VOCAB.wall_types), min_size=1))},
        {"action": "set_label", "target": room, "params": {"label": data.draw(LABEL_TEXT)}},
        {"action": "convert_to_relative", "params": {"anchorRoom": anchor}},
        {"action": "add_connection", "params": {"from": {"room": top},
                                                "to": {"room": other}}},
    ]
    if plan.connections:
        a, b = data.draw(st.sampled_from(plan.connections))
        ops.append({"action": "remove_connection", "params": {"from": a, "to": b}})
    return ops


@SLOW
@given(plans(max_rows=2, max_cols=3), st.data())
def test_generated_plans_survive_every_operation(plan: GeneratedPlan, data) -> None:
    for op in _operations(plan, data):
        if op["action"] == "add_connection" and op["params"]["from"] == op["params"]["to"]:
            continue
        out = tools.modify_floorplan({"dsl": plan.dsl, "operations": [op]})
        assert out["success"], (op, out, plan.dsl)
        assert out["changes"][0]["result"] == "applied"
        after = analyze(out["dsl"])
        assert after.valid, (op, out["dsl"])
        for comment in plan.comments:  # the user's comments survive
            assert comment in out["dsl"]
        if op["action"] == "rename_room":
            assert op["target"] not in after.names and "Renamed_1" in after.names
        if op["action"] == "convert_to_relative":
            before = {p.room.name: p.rect for p in analyze(plan.dsl).layout.placed.values()}
            now = {p.room.name: p.rect for p in after.layout.placed.values()}
            assert now == before
        if op["action"] == "remove_room":
            assert op["target"] not in after.names
        if op["action"] == "resize_room":
            assert after.names[op["target"]].size == (op["params"]["width"],
                                                      op["params"]["height"])


@FAST
@given(st.one_of(st.text(max_size=200), token_soup))
def test_no_text_crashes_the_parser_and_errors_have_positions(text: str) -> None:
    result = tools.validate_floorplan({"dsl": text})
    assert isinstance(result["valid"], bool)
    assert_positions(text, result["errors"] + result.get("warnings", []))


@FAST
@given(plans(max_rows=2, max_cols=2), st.data())
def test_mutated_plans_never_crash(plan: GeneratedPlan, data) -> None:
    pos = data.draw(st.integers(0, len(plan.dsl)))
    cut = data.draw(st.integers(0, 8))
    insert = data.draw(st.sampled_from(["", "{", "]", "room", "@", '"', "-", "x", "\n"]))
    text = plan.dsl[:pos] + insert + plan.dsl[pos + cut:]
    result = tools.validate_floorplan({"dsl": text})
    assert_positions(text, result["errors"] + result.get("warnings", []))
    image, _, meta = tools.render_floorplan({"dsl": text, "format": "svg"})
    assert meta["success"] == (image is not None)


@FAST
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.sampled_from(["dsl", "operations", "action",
                                                       "target", "params", "width"]), kids,
                                      max_size=4), max_leaves=10))
def test_tools_never_raise_on_arbitrary_arguments(args) -> None:
    assert tools.validate_floorplan(args)["valid"] in (True, False)
    assert tools.modify_floorplan(args)["success"] in (True, False)
    if isinstance(args, dict):
        args = {**args, "format": "svg"}
    assert tools.render_floorplan(args)[2]["success"] in (True, False)

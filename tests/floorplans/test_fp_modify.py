"""Modification operations: span edits that keep formatting, and all-or-nothing operations."""

from __future__ import annotations

import difflib

import pytest

from app.floorplans.tools import modify_floorplan
from app.floorplans.validate import analyze

PLAN = """floorplan
  # the ground floor
  floor f1 {
    room Office   at (0,0)  size (10 x 12) walls [top: solid, right: window]   label "desk"  # mine
    room Storage size (4 x 4) right-of Office gap 1 /* small */
    room Flex at (0,20) size (20 x 10) composed of [
        sub-room Booth at (1,1) size (3 x 3)
        sub-room Booth2 size (3 x 3) right-of Booth
    ]
  }

# doors
connect Office to Storage door   # between the two
connect Booth.right to Booth2.left door
"""


def run(*ops: dict, dsl: str = PLAN) -> dict:
    return modify_floorplan({"dsl": dsl, "operations": list(ops)})


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.ndiff(before.splitlines(), after.splitlines())
            if line[:1] in "+-"]


def room(dsl: str, name: str):
    analysis = analyze(dsl)
    assert analysis.plan is not None
    return analysis.names[name], analysis


def test_resize_touches_only_the_two_numbers() -> None:
    out = run({"action": "resize_room", "target": "Office", "params": {"width": 15, "height": 15}})
    assert out["success"], out
    assert out["dsl"] == PLAN.replace("size (10 x 12)", "size (15 x 15)")
    assert out["changes"] == [{"action": "resize_room", "target": "Office", "result": "applied",
                               "message": "Resized to 15 x 15"}]


def test_move_keeps_comments_and_replaces_relative_placement() -> None:
    out = run({"action": "move_room", "target": "Storage", "params": {"x": 30, "y": 0.5}})
    assert out["success"], out
    assert "room Storage at (30,0.5) size (4 x 4) /* small */" in out["dsl"]
    assert len(changed_lines(PLAN, out["dsl"])) == 2


def test_rename_updates_every_reference_and_works_for_sub_rooms() -> None:
    out = run({"action": "rename_room", "target": "Office", "params": {"newName": "Study"}},
              {"action": "rename_room", "target": "Booth", "params": {"newName": "Pod"}})
    assert out["success"], out
    dsl = out["dsl"]
    assert "Office" not in dsl and "Booth " not in dsl and "Booth." not in dsl
    assert "right-of Study gap 1" in dsl and "connect Study to Storage" in dsl
    assert "sub-room Pod at" in dsl and "right-of Pod" in dsl and "connect Pod.right" in dsl
    assert analyze(dsl).valid


def test_update_walls_replaces_and_adds_sides() -> None:
    out = run({"action": "update_walls", "target": "Office",
               "params": {"right": "door", "left": "window"}},
              {"action": "update_walls", "target": "Storage", "params": {"bottom": "open"}})
    assert out["success"], out
    office, analysis = room(out["dsl"], "Office")
    assert (office.wall_type("right"), office.wall_type("left"), office.wall_type("top")) == \
        ("door", "window", "solid")
    assert analysis.names["Storage"].wall_type("bottom") == "open"
    assert "walls [top: solid, right: door, left: window]   label" in out["dsl"]


def test_set_label_replace_add_and_remove() -> None:
    out = run({"action": "set_label", "target": "Office", "params": {"label": 'the "big" one'}},
              {"action": "set_label", "target": "Storage", "params": {"label": "boxes"}},
              {"action": "add_label", "target": "Flex", "params": {"label": "x"}},
              {"action": "set_label", "target": "Flex", "params": {"label": None}})
    assert out["success"], out
    _, analysis = room(out["dsl"], "Office")
    labels = {n: analysis.names[n].label for n in ("Office", "Storage", "Flex")}
    assert labels == {"Office": 'the "big" one', "Storage": "boxes", "Flex": None}


def test_add_room_to_floor_and_as_sub_room() -> None:
    out = run({"action": "add_room", "params": {
        "name": "Kitchen", "position": {"x": 0, "y": 40}, "size": {"width": 10, "height": 8},
        "walls": {"top": "solid", "right": "door", "bottom": "solid", "left": "window"},
        "label": "break area"}},
        {"action": "add_room", "params": {"name": "Nook", "size": {"width": 2, "height": 2},
                                          "parent": "Flex",
                                          "relativePosition": {"direction": "right-of",
                                                               "reference": "Booth2",
                                                               "gap": 1}}},
        {"action": "add_room", "params": {"name": "Pantry", "size": {"width": 2, "height": 2},
                                          "parent": "Office", "position": {"x": 1, "y": 1}}})
    assert out["success"], out
    dsl = out["dsl"]
    assert ('    room Kitchen at (0,40) size (10 x 8) walls [top: solid, right: door, '
            'bottom: solid, left: window] label "break area"\n  }') in dsl
    assert "        sub-room Nook size (2 x 2) right-of Booth2 gap 1\n    ]" in dsl
    nook, analysis = room(dsl, "Nook")
    assert nook.parent.name == "Flex"
    assert analysis.layout.get(nook).rect.x == 8
    assert analysis.names["Pantry"].parent.name == "Office"


def test_add_room_failures_change_nothing() -> None:
    out = run({"action": "add_room", "params": {"name": "Office", "size": {"width": 1,
                                                                           "height": 1},
                                                "position": {"x": 0, "y": 0}}},
              {"action": "add_room", "params": {"name": "X", "size": {"width": 1, "height": 1}}},
              {"action": "add_room", "params": {"name": "Y", "size": {"width": 1, "height": 1},
                                                "relativePosition": {"direction": "below",
                                                                     "reference": "Nope"}}},
              {"action": "add_room", "params": {"name": "Z", "size": {"width": -1, "height": 1},
                                                "position": {"x": 0, "y": 0}}})
    assert out["success"] is False and out["dsl"] == PLAN
    assert [c["result"] for c in out["changes"]] == ["error"] * 4
    assert [e["operation"] for e in out["errors"]] == [0, 1, 2, 3]
    assert 'Room "Office" already exists' in out["errors"][0]["message"]
    assert "either 'position' or 'relativePosition'" in out["errors"][1]["message"]
    assert "Nope" in out["errors"][2]["message"]
    assert "size.width" in out["errors"][3]["message"]


def test_remove_room_refuses_dangling_references_then_removes_them() -> None:
    refused = run({"action": "remove_room", "target": "Office"})
    assert refused["success"] is False and refused["dsl"] == PLAN
    message = refused["errors"][0]["message"]
    assert "Storage" in message and "connection on line 13" in message
    out = run({"action": "remove_room", "target": "Office",
               "params": {"removeReferences": True}})
    assert out["success"], out
    dsl = out["dsl"]
    assert "Office" not in dsl
    assert "room Storage size (4 x 4) at (11,0) /* small */" in dsl  # kept where it was
    assert "# doors\nconnect Booth.right" in dsl


def test_remove_room_with_sub_rooms_and_their_references() -> None:
    out = run({"action": "remove_room", "target": "Flex", "params": {"removeReferences": True}})
    assert out["success"], out
    assert "Booth" not in out["dsl"] and "composed" not in out["dsl"]
    assert analyze(out["dsl"]).valid


def test_unknown_room_and_unknown_action() -> None:
    out = run({"action": "resize_room", "target": "Garage",
               "params": {"width": 20, "height": 20}},
              {"action": "paint_room", "target": "Office"},
              {"action": "resize_room", "params": {"width": 1, "height": 1}})
    assert out["success"] is False and out["dsl"] == PLAN
    assert out["errors"][0] == {"message": 'Room "Garage" not found', "operation": 0}
    assert "Unknown action" in out["errors"][1]["message"]
    assert "target" in out["errors"][2]["message"]


def test_operations_apply_in_order_and_a_failure_in_the_middle_keeps_the_rest() -> None:
    out = run({"action": "resize_room", "target": "Office", "params": {"width": 11,
                                                                       "height": 12}},
              {"action": "remove_room", "target": "Nope"},
              {"action": "rename_room", "target": "Office", "params": {"newName": "Study"}})
    assert [c["result"] for c in out["changes"]] == ["applied", "error", "applied"]
    assert out["errors"] == [{"message": 'Room "Nope" not found', "operation": 1}]
    assert "room Study   at (0,0)  size (11 x 12)" in out["dsl"]


def test_an_edit_that_would_add_an_error_is_refused() -> None:
    out = run({"action": "rename_room", "target": "Office", "params": {"newName": "Storage"}},
              {"action": "rename_room", "target": "Office", "params": {"newName": "9lives"}},
              {"action": "add_connection", "params": {"from": {"room": "Office"},
                                                      "to": {"room": "Ghost"}}})
    assert out["dsl"] == PLAN
    assert [c["result"] for c in out["changes"]] == ["error"] * 3


def test_connections_add_and_remove() -> None:
    out = run({"action": "add_connection", "params": {
        "from": {"room": "Office", "wall": "bottom"}, "to": {"room": "outside"},
        "doorType": "double-door", "position": 30, "opensInto": "Office", "swing": "left"}},
        {"action": "remove_connection", "params": {"from": "Storage", "to": "Office"}})
    assert out["success"], out
    dsl = out["dsl"]
    assert "connect Office.bottom to outside double-door at 30% opens into Office swing: left" \
        in dsl
    assert "connect Office to Storage" not in dsl
    assert "# doors\n" in dsl
    missing = run({"action": "remove_connection", "params": {"from": "Office", "to": "Flex"}})
    assert missing["success"] is False and missing["dsl"] == PLAN


def test_convert_to_relative_keeps_positions() -> None:
    dsl = """floorplan
  floor f {
    room A at (0,0) size (10 x 10)
    room B at (10,0) size (5 x 5)
    room C at (0,12) size (10 x 4)
    room D at (15,5) size (5 x 5)
    room E at (-4,3) size (4 x 4)
    room Far at (100,100) size (1 x 1)
  }
"""
    before = {p.room.name: p.rect for p in analyze(dsl).layout.placed.values()}
    out = run({"action": "convert_to_relative", "params": {"anchorRoom": "A"}}, dsl=dsl)
    assert out["success"], out
    after_analysis = analyze(out["dsl"])
    after = {p.room.name: p.rect for p in after_analysis.layout.placed.values()}
    assert after == before
    names = after_analysis.names
    assert names["Far"].at == (100, 100)  # too far from everything to read as a neighbour
    assert names["B"].relative and names["B"].relative.reference == "A"
    assert names["C"].relative.direction == "below" and names["C"].relative.gap == 2
    assert names["D"].at is None
    rel = names["E"].relative
    assert (rel.direction, rel.reference, rel.alignment, rel.gap) == ("left-of", "A", "center",
                                                                      None)
    assert out["changes"][0]["message"] == ("Converted 4 room(s) to relative positioning; "
                                            "kept explicit positions for Far")
    bad = run({"action": "convert_to_relative", "params": {"anchorRoom": "Zed"}}, dsl=dsl)
    assert "Anchor room 'Zed' not found" in bad["errors"][0]["message"]


def test_parse_errors_in_the_input_have_positions_and_no_operation() -> None:
    out = run({"action": "resize_room", "target": "A", "params": {"width": 1, "height": 1}},
              dsl="floorplan floor f { room A at (0,0) size (1 x 1) walls [top: glass] }")
    assert out["success"] is False and out["changes"] == []
    err = out["errors"][0]
    assert err["operation"] is None and err["line"] == 1 and "glass" in err["message"]


@pytest.mark.parametrize("args", [None, {}, {"dsl": 3, "operations": []},
                                  {"dsl": "floorplan", "operations": "x"}])
def test_bad_arguments_give_an_error_result(args) -> None:
    out = modify_floorplan(args)
    assert out["success"] is False and out["errors"][0]["message"].startswith("Invalid")

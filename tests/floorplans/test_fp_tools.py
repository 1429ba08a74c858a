"""Seed 002's scenarios at the tool level, the generated schemas and the schema document."""
# ruff: noqa: E501  (DSL fixtures are quoted verbatim from the seed)

from __future__ import annotations

import re
import struct

import jsonschema
import pytest

from app.floorplans import schema_doc, schemas, tools
from app.floorplans.language import GRAMMAR_PATH, Language
from app.floorplans.operations import OPERATIONS, operation_definitions

OFFICE = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: window, bottom: door, left: solid] label "main workspace"
  }"""


def check_output(tool: str, result: dict) -> None:
    jsonschema.validate(result, schemas.output_schema(tool))


# ---------------------------------------------------------------- seed 002 scenarios


def test_successful_render_of_valid_dsl() -> None:
    image, mime, result = tools.render_floorplan({"dsl": OFFICE})
    assert mime == "image/png" and image[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", image[16:24]) == (result["imageSize"]["width"],
                                                  result["imageSize"]["height"])
    check_output("render_floorplan", result)
    assert result["success"] is True and result["format"] == "png"
    assert (result["floorCount"], result["renderedFloor"]) == (1, 0)
    (room,) = result["rooms"]
    assert room["name"] == "Office"
    assert room["position"] == {"x": 0, "y": 0}
    assert room["size"] == {"width": 10, "height": 12}
    assert room["label"] == "main workspace"
    assert room["walls"] == {"top": "solid", "right": "window", "bottom": "door", "left": "solid"}
    assert room["area"] == 120 and "warnings" not in result


def test_render_with_nested_sub_rooms() -> None:
    dsl = """floorplan
  floor f1 {
    room FlexArea at (0,0) size (20 x 20) walls [top: open, right: solid, bottom: open, left: solid] composed of [
      sub-room Booth1 at (2,2) size (3 x 3) walls [top: solid, right: solid, bottom: door, left: solid]
    ]
  }"""
    _, _, result = tools.render_floorplan({"dsl": dsl})
    check_output("render_floorplan", result)
    (flex,) = result["rooms"]
    assert [s["name"] for s in flex["subRooms"]] == ["Booth1"]
    assert flex["subRooms"][0]["position"] == {"x": 2, "y": 2}
    assert flex["subRooms"][0]["resolvedPosition"] == {"x": 2, "y": 2}


def test_render_with_invalid_dsl_returns_errors() -> None:
    image, mime, result = tools.render_floorplan({"dsl": "floorplan\n  floor f1 {\n  room"})
    assert image is None and mime is None
    check_output("render_floorplan", result)
    assert result["success"] is False
    err = result["errors"][0]
    assert err["message"] and err["line"] == 3 and err["column"] >= 1


def test_render_with_semantic_errors_and_warnings() -> None:
    _, _, result = tools.render_floorplan({"dsl": "floorplan floor f { room A size (1 x 1) "
                                                  "right-of B }"})
    assert result["success"] is False
    assert result["errors"][0]["type"] == "missing_reference"
    _, _, ok = tools.render_floorplan({"dsl": "floorplan floor f { room A at (0,0) size (9 x 9) "
                                              "room B at (1,1) size (2 x 2) }"})
    assert ok["success"] and ok["warnings"][0]["type"] == "overlap"


def test_relative_room_metadata() -> None:
    _, _, result = tools.render_floorplan({"dsl": "floorplan floor f { room A at (0,0) size "
                                                  "(5 x 10) room B size (5 x 5) right-of A "
                                                  "align bottom }", "format": "svg"})
    b = result["rooms"][1]
    assert b["resolvedPosition"] == {"x": 5, "y": 5} and "position" not in b
    assert b["relativePosition"] == {"direction": "right-of", "reference": "A",
                                     "alignment": "bottom"}


def test_validation_of_valid_dsl() -> None:
    result = tools.validate_floorplan({"dsl": OFFICE})
    check_output("validate_floorplan", result)
    assert result == {"valid": True, "errors": []}


def test_validation_of_invalid_dsl_with_line_numbers() -> None:
    dsl = ("floorplan\n  floor f1 {\n    room Office at (0,0) size (10 x 12) "
           "walls [top: invalid_type]\n  }")
    result = tools.validate_floorplan({"dsl": dsl})
    check_output("validate_floorplan", result)
    assert result["valid"] is False
    err = result["errors"][0]
    assert err["line"] == 3 and "wall type" in err["message"]
    assert "invalid_type" in err["message"]


def test_modify_add_remove_resize_update_and_missing_room() -> None:
    add = tools.modify_floorplan({"dsl": OFFICE, "operations": [{"action": "add_room", "params": {
        "name": "Kitchen", "position": {"x": 0, "y": 14}, "size": {"width": 10, "height": 8},
        "walls": {"top": "solid", "right": "door", "bottom": "solid", "left": "window"},
        "label": "break area"}}]})
    check_output("modify_floorplan", add)
    assert add["success"] and "room Kitchen at (0,14)" in add["dsl"]
    assert add["changes"][0]["action"] == "add_room" and add["changes"][0]["result"] == "applied"

    with_storage = OFFICE.replace("\n  }", "\n    room Storage at (20,0) size (3 x 3)\n  }")
    removed = tools.modify_floorplan({"dsl": with_storage, "operations": [
        {"action": "remove_room", "target": "Storage"}]})
    assert removed["success"] and "Storage" not in removed["dsl"]
    assert removed["dsl"] == OFFICE

    resized = tools.modify_floorplan({"dsl": OFFICE, "operations": [
        {"action": "resize_room", "target": "Office", "params": {"width": 15, "height": 15}}]})
    assert re.search(r"room Office .*size \(15 x 15\)", resized["dsl"])

    solid = "floorplan floor f1 { room Office at (0,0) size (10 x 12) }"
    walls = tools.modify_floorplan({"dsl": solid, "operations": [
        {"action": "update_walls", "target": "Office",
         "params": {"right": "window", "bottom": "door"}}]})
    assert walls["success"] and "walls [right: window, bottom: door]" in walls["dsl"]

    garage = tools.modify_floorplan({"dsl": OFFICE, "operations": [
        {"action": "resize_room", "target": "Garage", "params": {"width": 20, "height": 20}}]})
    check_output("modify_floorplan", garage)
    assert garage["success"] is False
    assert any('Room "Garage" not found' in e["message"] for e in garage["errors"])


@pytest.mark.parametrize("tool, args", [
    ("render_floorplan", {}), ("render_floorplan", {"dsl": OFFICE, "width": 0}),
    ("render_floorplan", {"dsl": OFFICE, "format": "gif"}),
    ("render_floorplan", {"dsl": OFFICE, "bogus": 1}), ("validate_floorplan", []),
    ("validate_floorplan", {"dsl": None}),
])
def test_bad_arguments_never_raise(tool: str, args) -> None:
    if tool == "render_floorplan":
        image, mime, result = tools.render_floorplan(args)
        assert image is None and result["success"] is False
    else:
        result = tools.validate_floorplan(args)
        assert result["valid"] is False
    assert result["errors"][0]["message"].startswith("Invalid arguments")


# ---------------------------------------------------------------- schemas from the grammar


def test_schemas_are_valid_json_schemas_and_carry_the_grammar_enums() -> None:
    for tool in ("render_floorplan", "validate_floorplan", "modify_floorplan"):
        assert schemas.TOOL_DESCRIPTIONS[tool]
        jsonschema.Draft202012Validator.check_schema(schemas.input_schema(tool))
        jsonschema.Draft202012Validator.check_schema(schemas.output_schema(tool))
    modify = schemas.input_schema("modify_floorplan")
    variants = {v["title"]: v for v in modify["properties"]["operations"]["items"]["oneOf"]}
    assert set(variants) == {op.name for op in OPERATIONS}
    walls = variants["update_walls"]["properties"]["params"]["properties"]
    assert list(walls) == ["top", "right", "bottom", "left"]
    assert walls["top"]["enum"] == ["solid", "door", "window", "open"]
    rel = variants["add_room"]["properties"]["params"]["properties"]["relativePosition"]
    assert "below-left-of" in rel["properties"]["direction"]["enum"]
    assert rel["properties"]["alignment"]["enum"] == ["top", "bottom", "left", "right", "center"]
    conn = variants["add_connection"]["properties"]["params"]["properties"]
    assert conn["doorType"]["enum"] == ["door", "double-door"]
    assert conn["swing"]["enum"] == ["left", "right"]


def test_a_wall_type_added_to_the_grammar_appears_everywhere() -> None:
    grammar = GRAMMAR_PATH.read_text()
    assert '"open"\n' in grammar
    language = Language.from_text(grammar.replace('"open"\n', '"open" | "glass"\n', 1))
    assert language.vocabulary.wall_types[-1] == "glass"
    schema = schemas.input_schema("modify_floorplan", language)
    variants = {v["title"]: v for v in schema["properties"]["operations"]["items"]["oneOf"]}
    assert "glass" in variants["update_walls"]["properties"]["params"]["properties"]["left"]["enum"]
    assert "glass" in variants["add_room"]["properties"]["params"]["properties"]["walls"][
        "properties"]["top"]["enum"]
    out_walls = schemas.output_schema("render_floorplan", language)["$defs"]["room"][
        "properties"]["walls"]["properties"]["top"]["enum"]
    assert "glass" in out_walls
    assert "`glass`" in schema_doc.schema_markdown(language)
    # and the new type works end to end through that language
    dsl = "floorplan floor f { room A at (0,0) size (4 x 4) walls [top: glass] }"
    assert tools.validate_floorplan({"dsl": dsl}, language)["valid"]
    assert tools.validate_floorplan({"dsl": dsl})["valid"] is False
    out = tools.modify_floorplan({"dsl": dsl, "operations": [
        {"action": "update_walls", "target": "A", "params": {"left": "glass"}}]}, language)
    assert out["success"] and "left: glass" in out["dsl"]
    refused = tools.modify_floorplan({"dsl": dsl.replace("glass", "solid"), "operations": [
        {"action": "update_walls", "target": "A", "params": {"left": "glass"}}]})
    assert refused["success"] is False
    _, _, rendered = tools.render_floorplan({"dsl": dsl, "format": "svg"}, language)
    assert rendered["rooms"][0]["walls"]["top"] == "glass"


def test_operation_definitions_give_flat_parameters_for_page_actions() -> None:
    defs = {d["name"]: d for d in operation_definitions(Language.from_text(
        GRAMMAR_PATH.read_text()))}
    assert defs["resize_room"]["parameters"]["required"] == ["target", "width", "height"]
    assert "target" not in defs["add_room"]["parameters"]["properties"]
    for d in defs.values():
        jsonschema.Draft202012Validator.check_schema(d["parameters"])
        assert d["description"]


def test_schema_document_covers_the_language_and_its_examples_are_valid() -> None:
    doc = schema_doc.schema_markdown()
    for needle in ("## Structure", "## Room clauses", "### Wall types", "`solid`", "`door`",
                   "`window`", "`open`", "composed of", "sub-room", "## Relative placement",
                   "## Connections", "`double-door`", "## Examples", "## Grammar (lark)",
                   "`convert_to_relative`"):
        assert needle in doc, needle
    examples = re.findall(r"```floorplan\n(.*?)```", doc, re.S)
    assert len(examples) >= 3
    for example in examples:
        result = tools.validate_floorplan({"dsl": example})
        assert result == {"valid": True, "errors": []}, (example, result)
        assert tools.render_floorplan({"dsl": example, "renderAllFloors": True})[2]["success"]
    grammar = re.search(r"```lark\n(.*?)```", doc, re.S).group(1)
    assert grammar.strip() == GRAMMAR_PATH.read_text().strip()


def test_areas_per_room_and_total_over_floors() -> None:
    dsl = """floorplan
  floor a {
    room Living at (0,0) size (20 x 15)
    room Kitchen size (12 x 10) right-of Living
  }
  floor b { room Bed at (0,0) size (18 x 10) composed of [ sub-room Closet at (0,0) size (2 x 2) ] }"""
    _, _, result = tools.render_floorplan({"dsl": dsl, "renderAllFloors": True,
                                           "multiFloorLayout": "stacked", "format": "svg"})
    assert [r["area"] for r in result["rooms"]] == [300, 120, 180]
    assert result["rooms"][2]["subRooms"][0]["area"] == 4
    assert result["totalArea"] == 600 and result["floorCount"] == 2
    assert result["renderedFloor"] == "all"
    assert [r["floor"] for r in result["rooms"]] == ["a", "a", "b"]


def test_apply_operation_with_flat_parameters() -> None:
    defs = {d["name"]: d for d in operation_definitions()}
    params = {"target": "Office", "width": 11, "height": 9}
    jsonschema.validate(params, defs["resize_room"]["parameters"])
    out = tools.apply_operation(OFFICE, "resize_room", params)
    assert out["success"] and "size (11 x 9)" in out["dsl"]
    missing = tools.apply_operation(OFFICE, "resize_room", {"width": 1, "height": 1})
    assert missing["success"] is False and "target" in missing["errors"][0]["message"]


def test_the_modify_input_schema_accepts_the_seed_operations_and_rejects_bad_ones() -> None:
    schema = schemas.input_schema("modify_floorplan")
    good = {"dsl": OFFICE, "operations": [
        {"action": "add_room", "params": {"name": "Kitchen", "position": {"x": 0, "y": 14},
                                          "size": {"width": 10, "height": 8},
                                          "walls": {"top": "solid", "right": "door"},
                                          "label": "break area"}},
        {"action": "remove_room", "target": "Storage"},
        {"action": "resize_room", "target": "Office", "params": {"width": 15, "height": 15}},
        {"action": "update_walls", "target": "Office",
         "params": {"right": "window", "bottom": "door"}},
        {"action": "convert_to_relative", "params": {"anchorRoom": "Office"}},
    ]}
    jsonschema.validate(good, schema)
    for bad_op in ({"action": "update_walls", "target": "Office", "params": {"right": "glass"}},
                   {"action": "resize_room", "params": {"width": 1, "height": 1}},
                   {"action": "fly", "target": "Office"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"dsl": OFFICE, "operations": [bad_op]}, schema)

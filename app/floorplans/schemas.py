"""JSON Schemas of the three floorplan tools, generated from the grammar and the operations.

Enumerations come from the language's vocabulary and the modify operations from
``operations.OPERATIONS``; nothing here lists a wall type, direction or operation by hand.
"""

from __future__ import annotations

from typing import Any

from .language import Language, default_language
from .operations import OPERATIONS, nullable, relative_schema, walls_schema

TOOL_DESCRIPTIONS = {
    "render_floorplan": "Parse floorplan DSL and render it to a PNG image (or SVG) that can be "
                        "looked at, with the rooms' resolved positions, sizes, walls and areas",
    "validate_floorplan": "Validate floorplan DSL without rendering: syntax errors with line and "
                          "column, semantic errors and warnings",
    "modify_floorplan": "Apply modification operations to floorplan DSL in order and return the "
                        "updated code; formatting and comments are kept",
}
FORMATS = ("png", "svg")
MULTI_FLOOR_LAYOUTS = ("sideBySide", "stacked")
MAX_PIXELS = 4096

_DSL = {"type": "string", "description": "Floorplan DSL source (see floorplan://schema)"}


def _diagnostic() -> dict[str, Any]:
    return {"type": "object", "required": ["message"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"},
                           "line": nullable({"type": "integer", "minimum": 1}),
                           "column": nullable({"type": "integer", "minimum": 1}),
                           "roomName": {"type": "string"}}}


def _operation_item(language: Language) -> dict[str, Any]:
    variants = []
    for op in OPERATIONS:
        props: dict[str, Any] = {"action": {"const": op.name},
                                 "params": op.params(language.vocabulary)}
        required = ["action"]
        if op.takes_target:
            props["target"] = {"type": "string", "description": "Name of the room to change"}
            required.append("target")
        variants.append({"type": "object", "title": op.name, "description": op.description,
                         "properties": props, "required": required})
    return {"type": "object", "required": ["action"],
            "properties": {"action": {"type": "string",
                                      "enum": [op.name for op in OPERATIONS]},
                           "target": {"type": "string"}, "params": {"type": "object"}},
            "oneOf": variants}


def input_schema(tool: str, language: Language | None = None) -> dict[str, Any]:
    language = language or default_language()
    if tool == "render_floorplan":
        return {"type": "object", "required": ["dsl"], "additionalProperties": False,
                "properties": {
                    "dsl": _DSL,
                    "format": {"type": "string", "enum": list(FORMATS), "default": "png"},
                    "width": {"type": "integer", "minimum": 16, "maximum": MAX_PIXELS,
                              "default": 800, "description": "Maximum image width in pixels"},
                    "height": {"type": "integer", "minimum": 16, "maximum": MAX_PIXELS,
                               "default": 600,
                               "description": "Maximum image height in pixels; the plan is "
                                              "fitted into width x height, aspect kept"},
                    "floorIndex": {"type": "integer", "minimum": 0, "default": 0},
                    "renderAllFloors": {"type": "boolean", "default": False},
                    "multiFloorLayout": {"type": "string", "enum": list(MULTI_FLOOR_LAYOUTS),
                                         "default": "sideBySide"}}}
    if tool == "validate_floorplan":
        return {"type": "object", "required": ["dsl"], "additionalProperties": False,
                "properties": {"dsl": _DSL}}
    if tool == "modify_floorplan":
        return {"type": "object", "required": ["dsl", "operations"],
                "additionalProperties": False,
                "properties": {"dsl": _DSL,
                               "operations": {"type": "array",
                                              "items": _operation_item(language)}}}
    raise KeyError(f"unknown floorplan tool {tool!r}")


def _room(language: Language) -> dict[str, Any]:
    v = language.vocabulary
    xy = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
          "required": ["x", "y"]}
    return {"type": "object", "required": ["name", "walls"],
            "properties": {
                "name": {"type": "string"}, "kind": {"type": "string", "enum": list(v.room_kinds)},
                "floor": {"type": "string"},
                "size": {"type": "object", "properties": {"width": {"type": "number"},
                                                          "height": {"type": "number"}}},
                "walls": walls_schema(v), "position": xy, "resolvedPosition": xy,
                "relativePosition": relative_schema(v), "label": {"type": "string"},
                "height": {"type": "number"}, "area": {"type": "number"},
                "subRooms": {"type": "array", "items": {"$ref": "#/$defs/room"}}}}


def output_schema(tool: str, language: Language | None = None) -> dict[str, Any]:
    language = language or default_language()
    diags = {"type": "array", "items": _diagnostic()}
    if tool == "render_floorplan":
        return {"type": "object", "required": ["success"],
                "$defs": {"room": _room(language)},
                "properties": {
                    "success": {"type": "boolean"},
                    "format": {"type": "string", "enum": list(FORMATS)},
                    "floorCount": {"type": "integer", "minimum": 0},
                    "renderedFloor": {"oneOf": [{"type": "integer"}, {"const": "all"}]},
                    "imageSize": {"type": "object",
                                  "properties": {"width": {"type": "integer"},
                                                 "height": {"type": "integer"}}},
                    "rooms": {"type": "array", "items": {"$ref": "#/$defs/room"}},
                    "totalArea": {"type": "number"},
                    "warnings": diags, "errors": diags}}
    if tool == "validate_floorplan":
        return {"type": "object", "required": ["valid", "errors"],
                "properties": {"valid": {"type": "boolean"}, "errors": diags,
                               "warnings": diags}}
    if tool == "modify_floorplan":
        change = {"type": "object", "required": ["action", "target", "result", "message"],
                  "properties": {"action": {"type": "string"}, "target": {"type": "string"},
                                 "result": {"enum": ["applied", "error"]},
                                 "message": {"type": "string"}}}
        err = _diagnostic()
        err["properties"]["operation"] = nullable({"type": "integer", "minimum": 0})
        return {"type": "object", "required": ["success", "dsl", "changes"],
                "properties": {"success": {"type": "boolean"}, "dsl": {"type": "string"},
                               "changes": {"type": "array", "items": change},
                               "errors": {"type": "array", "items": err},
                               "warnings": diags}}
    raise KeyError(f"unknown floorplan tool {tool!r}")

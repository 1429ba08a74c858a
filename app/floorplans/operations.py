"""The modification operations, each defined once: name, description, parameter schema, handler.

``operation_definitions(language)`` is what other layers read: the web layer can turn each entry
into a page action, and the MCP layer builds the ``modify_floorplan`` schema from the same list.
Parameter schemas are built from the grammar's vocabulary, so enums are never typed twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .edit_context import Handler
from .language import Language, Vocabulary, default_language
from .op_convert import convert_to_relative
from .op_handlers import (
    add_connection,
    add_room,
    move_room,
    remove_connection,
    remove_room,
    rename_room,
    resize_room,
    set_label,
    update_walls,
)


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    takes_target: bool
    params: Callable[[Vocabulary], dict[str, Any]]
    handler: Handler


# ---------------------------------------------------------------- shared parameter schemas


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null, as ``anyOf`` branches of one type each: a ``type`` array is legal
    JSON Schema, but clients that map tool schemas onto a single-type dialect reject it."""
    return {"anyOf": [schema, {"type": "null"}]}


def _num(description: str, positive: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "number", "description": description}
    if positive:
        schema["exclusiveMinimum"] = 0
    return schema


def walls_schema(v: Vocabulary) -> dict[str, Any]:
    return {"type": "object", "description": "Wall type per side; a side left out is solid",
            "properties": {side: {"type": "string", "enum": list(v.wall_types)}
                           for side in v.wall_sides},
            "additionalProperties": False}


def relative_schema(v: Vocabulary) -> dict[str, Any]:
    return {"type": "object", "required": ["direction", "reference"],
            "additionalProperties": False,
            "properties": {
                "direction": {"type": "string", "enum": list(v.directions)},
                "reference": {"type": "string", "description": "Name of the room placed against"},
                "gap": _num("Distance from the reference room (default 0)"),
                "alignment": {"type": "string", "enum": list(v.alignments)}}}


def _point() -> dict[str, Any]:
    return {"type": "object", "required": ["x", "y"], "additionalProperties": False,
            "properties": {"x": _num("x, growing to the right"),
                           "y": _num("y, growing downwards")}}


def _size() -> dict[str, Any]:
    return {"type": "object", "required": ["width", "height"], "additionalProperties": False,
            "properties": {"width": _num("Width", True), "height": _num("Height", True)}}


def _wall_ref(v: Vocabulary) -> dict[str, Any]:
    return {"type": "object", "required": ["room"], "additionalProperties": False,
            "properties": {"room": {"type": "string",
                                    "description": "Room name, or 'outside'"},
                           "wall": {"type": "string", "enum": list(v.wall_sides)}}}


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


# ---------------------------------------------------------------- the registry


OPERATIONS: tuple[Operation, ...] = (
    Operation("add_room", "Add a room (or, with 'parent', a sub-room) with a position or a "
              "relative placement", False,
              lambda v: _obj({"name": {"type": "string", "description": "New room name"},
                              "position": _point(), "size": _size(), "walls": walls_schema(v),
                              "label": {"type": "string"},
                              "relativePosition": relative_schema(v),
                              "height": _num("Ceiling height", True),
                              "floor": {"type": "string",
                                        "description": "Floor id (default: the first floor)"},
                              "parent": {"type": "string",
                                         "description": "Add as a sub-room of this room"}},
                             ["name", "size"]), add_room),
    Operation("remove_room", "Remove a room and its sub-rooms; refuses while other rooms or "
              "connections refer to it unless removeReferences is true", True,
              lambda v: _obj({"removeReferences": {
                  "type": "boolean", "default": False,
                  "description": "Also remove references: relative placements become explicit "
                                 "positions, connections are deleted"}}, []), remove_room),
    Operation("resize_room", "Change a room's size", True,
              lambda v: _obj({"width": _num("New width", True),
                              "height": _num("New height", True)}, ["width", "height"]),
              resize_room),
    Operation("move_room", "Give a room an explicit position (replaces relative placement)",
              True, lambda v: _obj({"x": _num("x"), "y": _num("y")}, ["x", "y"]), move_room),
    Operation("rename_room", "Rename a room or sub-room and update every reference to it",
              True, lambda v: _obj({"newName": {"type": "string"}}, ["newName"]), rename_room),
    Operation("update_walls", "Set the type of some walls; sides not yet listed are added",
              True, lambda v: {**walls_schema(v), "minProperties": 1}, update_walls),
    Operation("set_label", "Set a room's label; an empty or null label removes it", True,
              lambda v: _obj({"label": nullable({"type": "string"})}, ["label"]), set_label),
    Operation("convert_to_relative", "Rewrite explicit positions as relative placements "
              "chained from an anchor room, keeping every room where it is", False,
              lambda v: _obj({"anchorRoom": {"type": "string"},
                              "alignmentTolerance": {"type": "number", "minimum": 0,
                                                     "default": 0.01},
                              "targetRooms": {"type": "array", "items": {"type": "string"}}},
                             ["anchorRoom"]), convert_to_relative),
    Operation("add_connection", "Connect two rooms (or a room and the outside) with a door",
              False,
              lambda v: _obj({"from": _wall_ref(v), "to": _wall_ref(v),
                              "doorType": {"type": "string", "enum": list(v.door_types)},
                              "position": {"type": "number", "minimum": 0, "maximum": 100,
                                           "description": "Door centre along the shared wall, %"},
                              "opensInto": {"type": "string"},
                              "swing": {"type": "string", "enum": list(v.swings)}},
                             ["from", "to"]), add_connection),
    Operation("remove_connection", "Remove every connection between two rooms", False,
              lambda v: _obj({"from": {"type": "string"}, "to": {"type": "string"}},
                             ["from", "to"]), remove_connection),
)
ALIASES = {"add_label": "set_label"}  # the reference implementation's name


def find_operation(name: str) -> Operation | None:
    name = ALIASES.get(name, name)
    return next((op for op in OPERATIONS if op.name == name), None)


def operation_definitions(language: Language | None = None) -> list[dict[str, Any]]:
    """One entry per operation: name, description, flat JSON Schema of its parameters, the
    nested ``params`` schema and ``takesTarget`` (the grammar's, by default).

    ``target`` (the room acted on) is merged into the parameters for callers such as page
    actions that take one flat parameter object.
    """
    vocabulary = (language or default_language()).vocabulary
    out = []
    for op in OPERATIONS:
        params = op.params(vocabulary)
        properties: dict[str, Any] = dict(params.get("properties", {}))
        required: list[str] = list(params.get("required", []))
        if op.takes_target:
            properties = {"target": {"type": "string", "description": "Room name"}, **properties}
            required = ["target", *required]
        flat = {"type": "object", "properties": properties, "required": required,
                "additionalProperties": False}
        out.append({"name": op.name, "description": op.description, "parameters": flat,
                    "params": params, "takesTarget": op.takes_target})
    return out

"""A quick yes for the common case of JSON Schema validation: an object whose properties are
plainly typed, checked without jsonschema.

Most tool input schemas are a flat object of typed properties (navigate's is two strings and
no others). For them, jsonschema's general machinery cost more per call than the rest of
navigate's own work beside the page. ``plan`` reads such a schema once into the few facts
that decide it; ``certainly_valid`` then answers True only when the value certainly satisfies
the schema. It never answers False for a valid value's sake: anything it is not sure of
(another keyword, a float where an integer is asked, a nested schema) is left to jsonschema,
which stays the one judge of what is wrong and says so in its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Keywords that say nothing about validity (JSON Schema's annotations).
ANNOTATIONS = frozenset({"description", "title", "examples", "default", "deprecated",
                         "readOnly", "writeOnly", "$comment"})
# Python types that certainly satisfy each JSON type (bool is an int in Python: excluded below).
TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict,), "array": (list,), "null": (type(None),),
}


@dataclass(frozen=True)
class Plan:
    types: dict[str, str]  # property name → its JSON type
    required: tuple[str, ...]
    closed: bool  # additionalProperties: false


def plan(schema: Any) -> Plan | None:
    """The facts of a flat, plainly typed object schema; None for any other schema."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    if set(schema) - ANNOTATIONS - {"type", "properties", "required", "additionalProperties",
                                    "$schema"}:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    closed = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) \
            or not all(isinstance(name, str) for name in required) \
            or not isinstance(closed, bool):
        return None
    types = {}
    for name, spec in properties.items():
        if not isinstance(spec, dict) or set(spec) - ANNOTATIONS - {"type"} \
                or spec.get("type") not in TYPES:
            return None
        types[name] = spec["type"]
    return Plan(types, tuple(required), not closed)


def certainly_valid(facts: Plan, value: Any) -> bool:
    """True only when ``value`` certainly satisfies the schema ``facts`` was read from."""
    if not isinstance(value, dict):
        return False
    for name in facts.required:
        if name not in value:
            return False
    for name, item in value.items():
        kind = facts.types.get(name)
        if kind is None:
            if facts.closed:
                return False
            continue
        if type(item) is bool and kind != "boolean":
            return False
        if not isinstance(item, TYPES[kind]):
            return False
    return True

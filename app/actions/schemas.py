"""JSON Schema (2020-12) as the one parameter vocabulary: readable shapes and refusals.

Every action parameter is described by a JSON Schema (``Param.json_schema``); this module turns
such a schema into the short text people and agents read (``shape``: ``{width: number > 0,
height: number > 0}``) and checks a value against it (``problems``: every problem, each with
its path), naming the expected shape in the refusal so a caller never has to guess it.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

MAX_SHAPE = 400  # a refusal or a table cell stays readable; the full schema is one GET away


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _bounds(schema: dict[str, Any]) -> list[str]:
    out = []
    for key, sign in (("exclusiveMinimum", ">"), ("minimum", "≥"), ("exclusiveMaximum", "<"),
                      ("maximum", "≤")):
        if isinstance(schema.get(key), int | float) and not isinstance(schema.get(key), bool):
            out.append(f"{sign} {schema[key]:g}")
    return out


def _string(schema: dict[str, Any]) -> str:
    notes = []
    if schema.get("format"):
        notes.append(str(schema["format"]))
    if schema.get("minLength"):
        notes.append(f"minLength {schema['minLength']}")
    if schema.get("maxLength"):
        notes.append(f"maxLength {schema['maxLength']}")
    if schema.get("pattern"):
        notes.append(f"pattern {schema['pattern']}")
    return "string" + (f" ({', '.join(notes)})" if notes else "")


def shape(schema: Any, depth: int = 0) -> str:
    """A JSON Schema as one readable line, e.g. ``{x: number, y: number}`` or
    ``"solid" | "door"``; optional properties end in ``?``."""
    if not isinstance(schema, dict):
        return "any"
    if "const" in schema:
        return _literal(schema["const"])
    if schema.get("enum"):
        return " | ".join(_literal(v) for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and not schema.get("properties"):
            return " | ".join(shape(s, depth) for s in schema[key])
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return " | ".join(shape({**schema, "type": k}, depth) for k in kinds)
    if kinds == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props:
            return "object"
        if depth > 2:
            return "{…}"
        required = set(schema.get("required") or ())
        inner = ", ".join(f"{name}{'' if name in required else '?'}: {shape(sub, depth + 1)}"
                          for name, sub in props.items())
        return "{" + inner + "}"
    if kinds == "array":
        items = schema.get("items")
        return f"array of {shape(items, depth + 1)}" if isinstance(items, dict) else "array"
    if kinds == "string":
        return _string(schema)
    if kinds in ("number", "integer"):
        return " ".join([kinds, *_bounds(schema)])
    return str(kinds or "any")


def short_shape(schema: Any) -> str:
    text = shape(schema)
    return text if len(text) <= MAX_SHAPE else text[:MAX_SHAPE - 1] + "…"


def _where(path: Any) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _named(error: jsonschema.ValidationError) -> list[tuple[str, str]]:
    """(where below the value, message) for one error, the expected shape named; a missing or
    an unknown property is named where it is (``[0].option_title``), one entry each."""
    where = _where(error.absolute_path)
    expected = short_shape(error.schema)
    instance, schema, wanted = error.instance, error.schema, error.validator_value
    if not isinstance(schema, dict):
        schema = {}
    if error.validator == "required" and isinstance(instance, dict) \
            and isinstance(wanted, list):
        missing = [k for k in wanted if k not in instance]
        if missing:
            return [(f"{where}.{key}", f"is required; expected {expected}") for key in missing]
    if error.validator == "additionalProperties" and isinstance(instance, dict) \
            and wanted is False:
        known = list(schema.get("properties") or {})
        extra = [k for k in instance if k not in known]
        if extra and not schema.get("patternProperties"):
            return [(f"{where}.{key}", f"unknown property (expected: {', '.join(known)})")
                    for key in extra]
    if error.validator == "type":
        article = "an" if expected[:1] in "aeiou{" else "a"
        if expected.startswith("{"):
            return [(where, f"must be an object {expected}")]
        return [(where, f"must be {article} {expected}")]
    if error.validator in ("required", "additionalProperties", "oneOf", "anyOf",
                           "minProperties"):
        return [(where, f"{error.message}; expected {expected}")]
    return [(where, error.message)]


def _order(error: jsonschema.ValidationError) -> list[tuple[int, int, str]]:
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]


def problems(schema: dict[str, Any], value: Any) -> list[tuple[str, str]]:
    """Every way ``value`` does not fit ``schema``, as (where, message): ``where`` is the path
    below the value (``[0].option_title``, empty for the value itself). None missed, each
    said once, in the value's order."""
    validator = jsonschema.Draft202012Validator(schema)
    found: list[tuple[str, str]] = []
    for error in sorted(validator.iter_errors(value), key=_order):
        # Of the branches of an anyOf/oneOf, the one that came closest says what is wrong.
        best = jsonschema.exceptions.best_match([error])
        for entry in _named(best if best is not None else error):
            if entry not in found:
                found.append(entry)
    return found

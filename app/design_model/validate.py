"""Check a call's params against its method's declaration, and report every problem at once.

The methods read their params with ``protocol.Params``, which stops at the first problem; an
agent fixing a call one error at a time (``barType`` → ``count`` → ``host`` → ...) needs them
all. So before a method runs, its params are checked against ``registry.Spec``: every required
parameter missing, every declared one of the wrong type or out of range, and every ``one_of``
group given none or several times. A refusal is -32602 with ``data.errors`` = ``[{param,
message}]`` and ``data.param`` = the first of them (seed 001's field); the messages are the ones
``Params`` gives, so a single problem reads exactly as before.

The schemas use a small subset of JSON Schema (type, properties, required, items, enum,
minimum, maximum, maxLength, pattern, anyOf); whatever else a value must satisfy (a known
level, a bar type in the table) stays the method's own check. ``null`` counts as absent, as it
does for ``Params``.
"""

from __future__ import annotations

import math
import re
from typing import Any

from app.design_model.protocol import INVALID_PARAMS, MAX_MAGNITUDE, RpcError
from app.design_model.registry import Spec

Problem = dict[str, str]


def problems(spec: Spec, raw: dict[str, Any]) -> list[Problem]:
    """Every problem of ``raw`` against ``spec``, in declaration order."""
    found: list[Problem] = []
    if spec.confirm and raw.get("dryRun") is not True and raw.get("confirm") in (None, False):
        # The same words as revit_methods.require_confirm, which checks it first too.
        found.append({"param": "confirm", "message": "must be true to create elements (or "
                                                     "pass dryRun: true to preview)"})
    for param in spec.params:
        value = raw.get(param.name)
        if value is None:
            # A parameter whose schema allows null (``value``: null clears) must be present.
            absent = param.name not in raw if _nullable(param.schema) else True
            if param.required and absent:
                found.append({"param": param.name, "message": "is required"})
            continue
        found.extend(check(param.name, param.schema, value))
    for group in spec.one_of:
        given = [name for name in group if raw.get(name) is not None]
        if not given:
            found.append({"param": group[-1], "message": "give one of "
                          + ", ".join(group[:-1]) + f" or {group[-1]}"})
        elif len(given) > 1:
            found.append({"param": given[1], "message": f"give only one of {', '.join(given)}"})
    return found


def refusal(found: list[Problem]) -> RpcError:
    """The -32602 naming every problem (one problem reads as ``protocol.invalid`` does)."""
    text = "; ".join(f"{p['param']}: {p['message']}" for p in found)
    data: dict[str, Any] = {"param": found[0]["param"], "errors": found}
    return RpcError(INVALID_PARAMS, f"Invalid params: {text}", data)


def check_call(spec: Spec, raw: dict[str, Any]) -> None:
    found = problems(spec, raw)
    if found:
        raise refusal(found)


def check(path: str, schema: dict[str, Any], value: Any) -> list[Problem]:
    """The problems of one value (never None here) against its schema."""
    if "anyOf" in schema:
        results = [check(path, option, value) for option in schema["anyOf"]]
        if any(not found for found in results):
            return []
        for option, inside in zip(schema["anyOf"], results, strict=True):
            if "type" in option and _type_problem(option["type"], value) is None:
                return inside  # the right kind of value, wrong inside: say where
        return [{"param": path, "message": schema.get("x-message") or "has the wrong shape"}]
    kind = schema.get("type")
    message = _type_problem(kind, value)
    if message is not None:
        return [{"param": path, "message": schema.get("x-message") or message}]
    if "enum" in schema and value not in schema["enum"]:
        return [{"param": path, "message": "must be one of "
                 + ", ".join(repr(v) for v in schema["enum"])}]
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return [{"param": path, "message": f"must be ≥ {schema['minimum']}"}]
        if "maximum" in schema and value > schema["maximum"]:
            return [{"param": path, "message": f"must be ≤ {schema['maximum']}"}]
    if kind == "string":
        if len(value) > schema.get("maxLength", 200):
            return [{"param": path, "message": f"must be at most {schema.get('maxLength', 200)}"
                                               " characters"}]
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return [{"param": path, "message": schema.get("x-message") or "has the wrong form"}]
    if kind == "object":
        found: list[Problem] = []
        for name in schema.get("required", ()):
            if value.get(name) is None:
                found.append({"param": f"{path}.{name}", "message": "is required"})
        for name, inner in (schema.get("properties") or {}).items():
            if value.get(name) is not None:
                found.extend(check(f"{path}.{name}", inner, value[name]))
        return found
    if kind == "array":
        limit = schema.get("maxItems", 10_000)
        if len(value) > limit:
            return [{"param": path, "message": f"must hold at most {limit} items"}]
        items = schema.get("items")
        if items:
            for i, item in enumerate(value):
                # [x, y, z] is read as {x, y, z}: an item is named by its axis, as Params does.
                axes = schema.get("x-axes")
                where = f"{path}.{axes[i]}" if axes and i < len(axes) else f"{path}[{i}]"
                inner = check(where, items, item) if item is not None else [{
                    "param": where,
                    "message": _type_problem(items.get("type"), None) or "must not be null"}]
                if inner:
                    return inner  # one bad item says enough about the list
    return []


def _nullable(schema: dict[str, Any]) -> bool:
    return any(option.get("type") == "null" for option in schema.get("anyOf", ()))


def _type_problem(kind: Any, value: Any) -> str | None:
    """Params' wording for a value that is not of ``kind`` (None: it is)."""
    if kind == "integer":
        if isinstance(value, bool) or not (isinstance(value, int) or (
                isinstance(value, float) and value.is_integer())):
            return "must be an integer"
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value):
            return "must be a finite number"
        if abs(value) > MAX_MAGNITUDE:
            return f"must be between -{MAX_MAGNITUDE:g} and {MAX_MAGNITUDE:g}"
    elif kind == "string":
        if not isinstance(value, str) or not value.strip():
            return "must be a non-empty string"
    elif kind == "boolean":
        if not isinstance(value, bool):
            return "must be true or false"
    elif kind == "object":
        if not isinstance(value, dict):
            return "must be an object"
    elif kind == "array":
        if not isinstance(value, list):
            return "must be an array"
    return None

"""Structured parameters from a plain HTML form: ``size[width]``, ``votes[0][accept]``.

A page built for people posts an object or an array of objects field by field, with no
JavaScript: a room's size as two number inputs, a whole ballot as one checkbox per option.
``nest`` folds those bracketed names into the value an agent would send as JSON, and
``coerce`` turns the form's strings into the types the parameter's own JSON Schema declares
(numbers, booleans), so the one validation that follows (``registry.validate_params``) sees the
same value whichever door it came through.

An empty field inside a structure means "not given", as an empty optional form field does: a
blank fifth option field of a new decision is no option at all.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[[A-Za-z0-9_]*\])+)$")
_PART = re.compile(r"\[([A-Za-z0-9_]*)\]")
MAX_INDEX = 500  # a form never has more rows than this; a bigger index is a typo or a probe

_TRUE = {"true", "on", "1", "yes"}
_FALSE = {"false", "off", "0", "no"}


def _insert(tree: dict[str, Any], parts: list[str], value: str) -> None:
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value  # the last value wins, as for flat form fields


def _listify(node: Any) -> Any:
    """Dicts whose keys are all indices become lists (in index order); empty leaves drop."""
    if isinstance(node, str):
        return node if node != "" else None
    if not isinstance(node, dict):
        return node
    items = {k: _listify(v) for k, v in node.items()}
    items = {k: v for k, v in items.items() if v is not None and v != {} and v != []}
    if node and all(k.isdigit() and int(k) <= MAX_INDEX for k in node):
        return [items[k] for k in sorted(items, key=int)]
    if node and all(k == "" for k in node):  # name[] repeated: the last value only reaches us
        return list(items.values())
    return items


def nest(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with every ``name[a][b]`` field folded into ``name``'s object or array.

    A plain field and a nested one with the same name: the nested value wins only when the
    plain one is absent (a form sends one or the other)."""
    tree: dict[str, Any] = {}
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        match = _KEY.match(key)
        if match is None or not isinstance(value, str):
            flat[key] = value
            continue
        parts = [match.group(1)] + _PART.findall(match.group(2))
        _insert(tree, parts, value)
    for name, node in tree.items():
        folded = _listify(node)
        if name not in flat:
            flat[name] = folded if folded not in (None, {}, []) else ""
    return flat


def _branch(schema: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an ``anyOf`` (how nullable properties are declared)."""
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                if isinstance(branch, dict) and branch.get("type") != "null":
                    return branch
    return schema


def coerce(schema: dict[str, Any], value: Any) -> Any:
    """``value`` (strings from a form) converted to the types ``schema`` declares.

    What cannot be converted is left as it is, for the schema check to refuse with its own
    message ("must be a number")."""
    schema = _branch(schema)
    kind = schema.get("type")
    if isinstance(value, dict) and (kind == "object" or "properties" in schema):
        props = schema.get("properties") or {}
        return {k: coerce(props[k], v) if isinstance(props.get(k), dict) else v
                for k, v in value.items()}
    if isinstance(value, list) and kind == "array":
        items = schema.get("items")
        return [coerce(items, v) if isinstance(items, dict) else v for v in value]
    if not isinstance(value, str):
        return value
    text = value.strip()
    if kind == "boolean" and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    if kind in ("number", "integer"):
        try:
            number = float(text)
        except ValueError:
            return value
        if number != number or number in (float("inf"), float("-inf")):
            return value  # NaN and infinities are no numbers a plan or a vote can use
        if number.is_integer():
            return int(number)
        return number
    return value

"""The recipe format: loading, validation, typed substitution and expectation bounds.

A recipe is seed 000's ``recipe.json`` — ``{name, vars, steps: [{method, params, expect}]}`` —
extended with: ``name@major.minor.patch`` (or a ``version`` key), ``inputs`` (per-variable
type and description), step ``name``, step ``tool`` (a Harmonic MCP tool instead of an upstream
method), per-step ``confirm``, recipe ``caps`` and bounds in the seed's keys (``minUpdated`` …
``maxCandidates``) or in the general form ``checks: [{path, min, max, equals}]``.

Variables: a value in ``vars`` is the default; ``null`` means required. ``"{{x}}"`` as a whole
string becomes x's JSON value (an object stays an object, 5 stays 5); inside a longer string it
renders as text. ``{{steps.<name>.result.<path>}}`` reads an earlier step's result.
The recipe's variables are the names in ``vars``, in ``inputs`` and in its steps' placeholders;
an argument that names none of them is refused (``resolve_vars``, which every door's replay
goes through), naming the variables and the closest match, so a mistyped name never leaves
the old default in place.
A bound whose field is missing from the result fails the step.

Caps: every write step is held to the recipe's caps. A recipe that does not declare a cap gets
the operator's default for it (``PLAYBOOK_CAPS``, small); declaring a cap in ``caps`` is the
only way to raise it, and a reviewer sees it (``caps_in_force`` says which come from where).

Whether a step writes (and so needs ``confirm`` and is only planned by a dry run) is asked of
the declared effects (``app.actions.effects``), never guessed where they are known: a
design-model method's from the design-model registry, a Harmonic MCP tool's from the MCP
registry, an ``execute_action`` step's from its action. Only a method no registry here declares
(a remote upstream's own) falls back to ``effects.guess``, its name's verb. A step may say
``"kind": "write"`` to be treated as a write; ``"kind": "read"`` is refused on a step whose
declared effect writes.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from app.actions import effects
from app.actions.effects import Effect
from app.core import tool_catalog
from app.design_model import method_effect as design_model_effect
from app.playbooks import settings
from app.services.errors import Invalid

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_\[\]-]+)*)\s*\}\}")
WHOLE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_\[\]-]+)*)\s*\}\}$")
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,119}$")
STEP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,79}$")
MAX_STEPS = 200
# Seed keys → the result field they bound.
SEED_BOUNDS = {"Updated": "updated", "Created": "created", "Candidates": "candidates",
               "Deleted": "deleted"}
# Where a count may live in real results (RevitMCP's own shapes), first match wins.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "updated": ("updated", "updatedCount", "stats.successCount"),
    "created": ("created", "createdCount"),
    "candidates": ("candidates", "totalCount", "count"),
    "deleted": ("deleted", "deletedCount"),
}
TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict,
    "array": list}


@dataclass
class Check:
    path: str
    min: float | None = None
    max: float | None = None
    equals: Any = None
    has_equals: bool = False
    source: str = ""  # the key as written, e.g. maxCreated
    optional: bool = False  # caps: a result without the field has nothing to cap

    def describe(self) -> str:
        parts = []
        if self.min is not None:
            parts.append(f">= {self.min:g}")
        if self.max is not None:
            parts.append(f"<= {self.max:g}")
        if self.has_equals:
            parts.append(f"== {json.dumps(self.equals)}")
        return f"{self.path} {' and '.join(parts)}"


@dataclass
class Step:
    name: str
    method: str | None
    tool: str | None
    params: Any
    checks: list[Check] = field(default_factory=list)
    confirm: bool = False
    require_confirm: bool = True
    kind: str = "read"  # read | write

    @property
    def label(self) -> str:
        return self.method or f"mcp:{self.tool}"

    @property
    def confirmed(self) -> bool:
        """Confirmed to write: ``"confirm": true`` on the step, or in its params."""
        return self.confirm or (isinstance(self.params, dict)
                                and self.params.get("confirm") is True)


@dataclass
class Recipe:
    name: str
    version: str
    vars: dict[str, Any]
    inputs: dict[str, dict[str, Any]]
    steps: list[Step]
    caps: dict[str, float]
    raw: dict[str, Any]

    @property
    def title(self) -> str:
        return f"{self.name}@{self.version}"


def strip_comments(text: str) -> str:
    """Drop // and /* */ comments outside strings (the seed's rebar example carries them)."""
    out, i, n = [], 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_string = False
            i += 1
            continue
        if ch == '"':
            in_string = True
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def parse_text(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = json.loads(strip_comments(text))
        except ValueError as exc:
            raise Invalid(f"the recipe is not valid JSON: {exc}",
                          errors=[{"param": "recipe", "message": f"not valid JSON: {exc}"}]
                          ) from None
    if not isinstance(value, dict):
        raise Invalid("the recipe must be a JSON object",
                      errors=[{"param": "recipe", "message": "must be a JSON object"}])
    return value


def declared_effect(method: str | None, tool: str | None, params: Any) -> Effect | None:
    """The effect a registry declares for this step, or None when none knows it."""
    if tool is not None:
        return tool_catalog.call_effect(tool, params)

    return design_model_effect(method or "")


def method_effect(method: str) -> Effect:
    """An upstream method's effect: declared by the design model, else the name's fallback."""
    return declared_effect(method, None, None) or effects.guess(method)


def _undeclared(method: str | None, tool: str | None) -> Effect:
    """The fallback: an unknown tool counts as a write, an unknown method is guessed."""
    return effects.WRITE if tool is not None else effects.guess(method or "")


def is_write(method: str | None, tool: str | None, params: Any = None) -> bool:
    """Whether a step writes, by its declared effect, else the fallback."""
    return (declared_effect(method, tool, params) or _undeclared(method, tool)).writes


def _number(value: Any, where: str, errors: list[dict[str, str]]) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        errors.append({"param": where, "message": "must be a number"})
        return None
    return value


def parse_checks(expect: Any, where: str, errors: list[dict[str, str]]) -> tuple[list[Check], bool]:
    """Bounds from a step's ``expect``; also returns its ``requireConfirm`` (default true)."""
    checks: list[Check] = []
    require_confirm = True
    if expect is None:
        return checks, require_confirm
    items: list[Any] = []
    if isinstance(expect, list):
        items = expect
    elif isinstance(expect, dict):
        for key, value in expect.items():
            m = re.fullmatch(r"(min|max)(Updated|Created|Candidates|Deleted)", key)
            if m:
                number = _number(value, f"{where}.{key}", errors)
                if number is not None:
                    low = m.group(1) == "min"
                    checks.append(Check(path=SEED_BOUNDS[m.group(2)], source=key,
                                        min=number if low else None,
                                        max=None if low else number))
            elif key == "requireConfirm":
                if not isinstance(value, bool):
                    errors.append({"param": f"{where}.requireConfirm",
                                   "message": "must be a boolean"})
                else:
                    require_confirm = value
            elif key == "checks":
                if not isinstance(value, list):
                    errors.append({"param": f"{where}.checks", "message": "must be an array"})
                else:
                    items = value
            else:
                errors.append({"param": f"{where}.{key}", "message": "unknown bound (use "
                               "minUpdated … maxCandidates, requireConfirm or checks)"})
    else:
        errors.append({"param": where, "message": "must be an object or an array of checks"})
    for i, item in enumerate(items):
        at = f"{where}.checks[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("path"), str) \
                or not item["path"].strip():
            errors.append({"param": at, "message": "must be {path, min?, max?, equals?}"})
            continue
        unknown = set(item) - {"path", "min", "max", "equals"}
        if unknown:
            errors.append({"param": at, "message": f"unknown key {sorted(unknown)[0]}"})
            continue
        if not {"min", "max", "equals"} & set(item):
            errors.append({"param": at, "message": "give at least one of min, max, equals"})
            continue
        checks.append(Check(path=item["path"].strip(), min=_number(item.get("min"), at, errors),
                            max=_number(item.get("max"), at, errors), equals=item.get("equals"),
                            has_equals="equals" in item, source=at))
    return checks, require_confirm


def load(raw: dict[str, Any]) -> Recipe:
    """Validate a recipe object; Invalid lists every problem at once."""
    errors: list[dict[str, str]] = []
    name = raw.get("name")
    version = raw.get("version")
    if not isinstance(name, str) or not name.strip():
        errors.append({"param": "name", "message": "is required"})
        name = "untitled"
    name = name.strip()
    if "@" in name:
        name, _, tail = name.rpartition("@")
        version = version or tail
    version = version or "0.0.0"
    if not isinstance(version, str) or not SEMVER.match(version):
        errors.append({"param": "version", "message": "must be major.minor.patch (name@1.2.3)"})
    if not NAME.match(name):
        errors.append({"param": "name", "message": "letters, digits, space . _ - (max 120)"})
    variables = raw.get("vars", {})
    if not isinstance(variables, dict):
        errors.append({"param": "vars", "message": "must be an object"})
        variables = {}
    inputs = raw.get("inputs", {})
    if not isinstance(inputs, dict) or not all(isinstance(v, dict) for v in inputs.values()):
        errors.append({"param": "inputs", "message": "must map variable names to objects"})
        inputs = {}
    for var, spec in inputs.items():
        if spec.get("type") is not None and spec.get("type") not in TYPES:
            errors.append({"param": f"inputs.{var}.type",
                           "message": f"must be one of {', '.join(TYPES)}"})
    caps_raw = raw.get("caps", {})
    caps: dict[str, float] = {}
    if not isinstance(caps_raw, dict):
        errors.append({"param": "caps", "message": "must be an object"})
    else:
        for key, value in caps_raw.items():
            if not re.fullmatch(r"max(Updated|Created|Candidates|Deleted)", key):
                errors.append({"param": f"caps.{key}",
                               "message": "use maxCreated, maxUpdated, maxDeleted, maxCandidates"})
                continue
            number = _number(value, f"caps.{key}", errors)
            if number is not None:
                caps[key] = number
    steps_raw = raw.get("steps")
    steps: list[Step] = []
    if not isinstance(steps_raw, list) or not steps_raw:
        errors.append({"param": "steps", "message": "must be a non-empty array"})
        steps_raw = []
    if len(steps_raw) > MAX_STEPS:
        errors.append({"param": "steps", "message": f"at most {MAX_STEPS} steps"})
        steps_raw = []
    seen: set[str] = set()
    for i, item in enumerate(steps_raw):
        at = f"steps[{i}]"
        if not isinstance(item, dict):
            errors.append({"param": at, "message": "must be an object"})
            continue
        method, tool = item.get("method"), item.get("tool")
        called = method or tool
        if (method is None) == (tool is None) or not isinstance(called, str) \
                or not called.strip():
            errors.append({"param": at, "message": "give exactly one of method or tool"})
            continue
        step_name = item.get("name") or called.replace(".", "_")
        if not isinstance(step_name, str) or not STEP_NAME.match(step_name):
            errors.append({"param": f"{at}.name", "message": "letters, digits, _ and -"})
            continue
        base, n = step_name, 2
        while step_name in seen:
            step_name, n = f"{base}_{n}", n + 1
        seen.add(step_name)
        params = item.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            errors.append({"param": f"{at}.params", "message": "must be an object"})
            continue
        checks, require_confirm = parse_checks(item.get("expect"), f"{at}.expect", errors)
        confirm = item.get("confirm", False)
        if not isinstance(confirm, bool):
            errors.append({"param": f"{at}.confirm", "message": "must be a boolean"})
            confirm = False
        declared = declared_effect(method, tool, params)
        effect = declared or _undeclared(method, tool)
        kind = item.get("kind") or ("write" if effect.writes else "read")
        if kind not in ("read", "write"):
            errors.append({"param": f"{at}.kind", "message": "must be read or write"})
        elif kind == "read" and declared is not None and declared.writes:
            errors.append({"param": f"{at}.kind", "message": f"{method or tool} is declared "
                           f"{declared}: it cannot be replayed as a read"})
        unknown = set(item) - {"name", "method", "tool", "params", "expect", "confirm", "kind",
                               "description"}
        if unknown:
            errors.append({"param": f"{at}.{sorted(unknown)[0]}", "message": "unknown step key"})
        steps.append(Step(name=step_name, method=method, tool=tool, params=params,
                          checks=checks, confirm=confirm, require_confirm=require_confirm,
                          kind=kind))
    if errors:
        raise Invalid("the recipe is not valid", errors=errors)
    return Recipe(name=name, version=version, vars=dict(variables), inputs=dict(inputs),
                  steps=steps, caps=caps, raw=raw)


# ------------------------------------------------------------------ variables and substitution

def placeholders(value: Any) -> list[str]:
    """Every placeholder name in ``value``, in order of appearance, without duplicates."""
    found: dict[str, None] = {}

    def walk(v: Any) -> None:
        if isinstance(v, str):
            for m in PLACEHOLDER.finditer(v):
                found.setdefault(m.group(1), None)
        elif isinstance(v, dict):
            for k, item in v.items():
                walk(k)
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(value)
    return list(found)


def coerce(name: str, value: Any, recipe: Recipe) -> Any:
    """An argument in the variable's type: the declared input type, else the default's type."""
    spec = recipe.inputs.get(name, {})
    wanted = spec.get("type")
    default = recipe.vars.get(name)
    if wanted is None and default is not None:
        wanted = next((t for t, py in TYPES.items() if type(default) is py
                       or (t == "number" and isinstance(default, float))), None)
    try:
        if wanted is None or not isinstance(value, str):
            if wanted == "integer" and isinstance(value, float) and value.is_integer():
                return int(value)
            if wanted is not None and value is not None and (
                    not isinstance(value, TYPES[wanted])
                    or wanted in ("integer", "number") and isinstance(value, bool)):
                raise ValueError
            return value
        if wanted == "integer":
            return int(value)
        if wanted == "number":
            return float(value)
        if wanted == "boolean":
            if value.lower() in ("true", "1", "yes", "on"):
                return True
            if value.lower() in ("false", "0", "no", "off"):
                return False
            raise ValueError
        if wanted in ("object", "array"):
            parsed = json.loads(value)
            if not isinstance(parsed, TYPES[wanted]):
                raise ValueError
            return parsed
    except ValueError:
        raise Invalid(f"argument {name} must be of type {wanted}",
                      errors=[{"param": name, "message": f"must be of type {wanted}"}]) from None
    return value


def variables(recipe: Recipe) -> list[str]:
    """The recipe's variables: the names in ``vars``, ``inputs`` and its steps' placeholders
    (not the ``steps.<name>`` outputs), sorted."""
    names = set(recipe.vars) | set(recipe.inputs)
    for step in recipe.steps:
        names.update(n for n in placeholders(step.params) if not n.startswith("steps."))
    return sorted(names)


def _unknown(recipe: Recipe, keys: list[str], known: list[str]) -> Invalid:
    """The refusal of arguments that name no variable: each with its closest variable."""
    by_lower = {k.lower(): k for k in known}
    closest: dict[str, str] = {}
    errors = []
    for key in keys:
        match = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=0.6)
        hint = f"; did you mean {by_lower[match[0]]}?" if match else ""
        if match:
            closest[key] = by_lower[match[0]]
        errors.append({"param": key, "message": f"is not a variable of {recipe.title}{hint}"})
    said = ", ".join(f"{k} (did you mean {closest[k]}?)" if k in closest else k for k in keys)
    return Invalid(f"Unknown variable{'s' if len(keys) > 1 else ''} {said}: {recipe.title} has "
                   + (f"the variables {', '.join(known)}" if known else "no variables")
                   + ". Nothing was run.", errors=errors, unknown=keys, variables=known,
                   closest=closest)


def resolve_vars(recipe: Recipe, args: dict[str, Any]) -> dict[str, Any]:
    """Defaults overlaid by typed arguments (names case-insensitive, as in the seed); an
    argument that names no variable of the recipe is refused before anything runs."""
    known = variables(recipe)
    by_lower = {k.lower(): k for k in known}
    unknown = [key for key in args if key.lower() not in by_lower]
    if unknown:
        raise _unknown(recipe, unknown, known)
    values = dict(recipe.vars)
    for key, value in args.items():
        name = by_lower[key.lower()]
        values[name] = coerce(name, value, recipe)
    for name, value in values.items():
        minimum = recipe.inputs.get(name, {}).get("minimum")
        if isinstance(minimum, int | float) and isinstance(value, int | float) \
                and not isinstance(value, bool) and value < minimum:
            raise Invalid(f"argument {name} must be at least {minimum:g}",
                          errors=[{"param": name, "message": f"must be at least {minimum:g}"}])
    return values


def missing_vars(recipe: Recipe, values: dict[str, Any]) -> list[str]:
    """Variables some step needs that have no value (null or absent): all of them, in order."""
    missing: dict[str, None] = {}
    for step in recipe.steps:
        for name in placeholders(step.params):
            if name.startswith("steps."):
                continue
            if values.get(name) is None:
                missing.setdefault(name, None)
    return list(missing)


class Unresolved(Exception):
    """A ``{{steps...}}`` reference whose value is not known (yet)."""


def lookup(data: Any, path: str) -> Any:
    """``a.b[0].c`` or ``a.b.0.c`` inside ``data``; KeyError when any part is missing."""
    current = data
    for part in re.findall(r"[^.\[\]]+", path):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and re.fullmatch(r"-?\d+", part) \
                and -len(current) <= int(part) < len(current):
            current = current[int(part)]
        else:
            raise KeyError(path)
    return current


def _value_of(name: str, values: dict[str, Any], outputs: dict[str, Any]) -> Any:
    if name.startswith("steps."):
        _, step, rest = name.split(".", 2) if name.count(".") >= 2 else (None, "", "")
        if step not in outputs:
            raise Unresolved(name)
        try:
            return lookup({"result": outputs[step]}, rest)
        except KeyError:
            raise Unresolved(name) from None
    if values.get(name) is None:
        raise Unresolved(name)
    return values[name]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def substitute(value: Any, values: dict[str, Any], outputs: dict[str, Any],
               lenient: bool = False) -> Any:
    """Typed substitution; ``lenient`` leaves unknown placeholders as written (dry runs)."""
    if isinstance(value, str):
        whole = WHOLE.match(value)
        if whole:
            try:
                return _value_of(whole.group(1), values, outputs)
            except Unresolved:
                if lenient:
                    return value
                raise

        def one(m: re.Match[str]) -> str:
            try:
                return _text(_value_of(m.group(1), values, outputs))
            except Unresolved:
                if lenient:
                    return m.group(0)
                raise

        return PLACEHOLDER.sub(one, value)
    if isinstance(value, dict):
        # A key is always text: "{{x}}" as a key renders x as text, never as a list or object.
        return {_text(substitute(k, values, outputs, lenient)) if isinstance(k, str) else k:
                substitute(v, values, outputs, lenient) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, values, outputs, lenient) for v in value]
    return value


# ------------------------------------------------------------------ bounds

def field_value(result: Any, path: str) -> tuple[bool, Any, str]:
    """(found, value, where) for a bound's field, trying known aliases for seed fields."""
    candidates = FIELD_ALIASES.get(path, (path,))
    for candidate in candidates:
        try:
            value = lookup(result, candidate)
        except KeyError:
            continue
        return True, value, candidate
    return False, None, path


def evaluate(check: Check, result: Any, only_max: bool = False) -> dict[str, Any]:
    """One bound against a result: {check, ok, actual, message}; a missing field fails."""
    found, value, where = field_value(result, check.path)
    out: dict[str, Any] = {"check": check.describe(), "field": where}
    if not found and check.optional:
        out.update(ok=True, actual=None, message="not applicable (no such field)")
        return out
    if not found:
        out.update(ok=False, actual=None,
                   message=f"the result has no '{check.path}' field, so "
                           f"{check.source or check.describe()} cannot be checked")
        return out
    actual = len(value) if isinstance(value, list | dict) and (check.min is not None
                                                               or check.max is not None) else value
    out["actual"] = actual
    problems = []
    if check.min is not None and not only_max:
        if not isinstance(actual, int | float) or isinstance(actual, bool):
            problems.append(f"{where} is not a number")
        elif actual < check.min:
            problems.append(f"{where} = {actual:g} is below the minimum {check.min:g}")
    if check.max is not None:
        if not isinstance(actual, int | float) or isinstance(actual, bool):
            problems.append(f"{where} is not a number")
        elif actual > check.max:
            problems.append(f"{where} = {actual:g} exceeds the maximum {check.max:g}"
                            + (f" ({check.source})" if check.source else ""))
    if check.has_equals and not only_max and actual != check.equals:
        problems.append(f"{where} = {json.dumps(actual)} but {json.dumps(check.equals)} was "
                        f"expected")
    out["ok"] = not problems
    out["message"] = "; ".join(problems) if problems else "ok"
    return out


@dataclass(frozen=True)
class Cap:
    key: str  # maxCreated ...
    value: float
    source: str  # "recipe" (declared in its caps) or "default" (PLAYBOOK_CAPS)
    default: float | None  # the operator's default for this key, if any


def caps_in_force(recipe: Recipe) -> list[Cap]:
    """The caps every write step of ``recipe`` is held to: what it declares, else the
    operator's defaults (``PLAYBOOK_CAPS``), key by key."""
    defaults = dict(settings.current().default_caps)
    keys = [k for k in settings.CAP_KEYS if k in defaults or k in recipe.caps]
    return [Cap(key, recipe.caps[key], "recipe", defaults.get(key)) if key in recipe.caps
            else Cap(key, defaults[key], "default", defaults[key]) for key in keys]


def cap_checks(recipe: Recipe) -> list[Check]:
    return [Check(path=SEED_BOUNDS[cap.key[3:]], max=cap.value, optional=True,
                  source=f"caps.{cap.key}" if cap.source == "recipe"
                  else f"default caps.{cap.key}")
            for cap in caps_in_force(recipe)]


def describe_caps(recipe: Recipe) -> dict[str, dict[str, Any]]:
    """The caps in force as a report shows them: ``{maxCreated: {value, source}}``, with the
    default a declared cap replaces."""
    out: dict[str, dict[str, Any]] = {}
    for cap in caps_in_force(recipe):
        entry: dict[str, Any] = {"value": cap.value, "source": cap.source}
        if cap.source == "recipe" and cap.default is not None:
            entry["default"] = cap.default
        out[cap.key] = entry
    return out


def to_json(recipe_raw: dict[str, Any]) -> str:
    return json.dumps(recipe_raw, indent=2, ensure_ascii=False) + "\n"

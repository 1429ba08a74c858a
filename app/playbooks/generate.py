"""A recipe from a capture: the steps that matter, variables, selectors, bounds and wiring.

1. Steps that matter: failed calls, dry-run previews the person made by hand, navigation, the
   JSON-RPC system methods (``rpc.discover``: reading the catalog) and exact repeats are
   dropped; every other call becomes a named step.
2. Wiring: a later input equal to an id, path or location an earlier *write* step returned
   becomes ``{{steps.<name>.result.<path>}}`` — the decision created in step 1 is the one step 2
   edits. Ids a read returned are not wired: they become selectors (3.), which carry intent.
3. Intent, not ids: remaining ``elementId``/``elementIds`` (also inside ``host``/``target``) are
   replaced by a selector ``{category, typeName, levelName, mark}`` built from the upstream's
   element info (``get_element_info``), or from element info the capture already holds.
4. Variables: literals become ``{{vars}}`` with the captured value as default; one value used
   in several places becomes one variable; volatile inputs (count, spacing, diameter — see
   ``PLAYBOOK_VOLATILE``) and redacted values are required, with no default.
5. Bounds: write steps get ``confirm: true`` and proposed ``expect`` bounds around the observed
   counts; Harmonic actions expect ``ok == true``. The recipe declares caps only where what was
   taught exceeds the operator's default caps (``PLAYBOOK_CAPS``): every other cap stays the
   small default, and a raised one is in the recipe for its reviewer to see.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from app.actions.registry import ACTIONS
from app.playbooks.recipe import TYPES, is_write
from app.playbooks.redact import is_redacted

ID_KEYS = ("elementId", "elementIds", "uniqueId")
ID_CONTAINERS = ("host", "target")
SELECTOR_FIELDS = ("category", "typeName", "levelName", "familyName", "mark")
KEEP_LITERAL = {"dryRun", "confirm", "category", "jsonrpc", "action", "requireConfirm"}
WIRE_KEYS = {"location", "path", "elementId", "uniqueId", "id", "jobId", "elementIds"}
COUNT_FIELDS = ("created", "updated", "deleted", "candidates")
# Friendlier variable names where a bare key says too little (the seed's own names).
ALIASES: dict[str, str] = {"level": "level_name", "levelName": "level_name",
                           "typeName": "type_name", "host": "host_selector",
                           "barType": "bar_type", "param": "param_name", "value": "param_value",
                           "familyName": "family_name"}
FAMILY_ALIASES: dict[str, dict[str, str]] = {"rebar": {"count": "bar_count",
                                                       "spacingMm": "spacing_mm"},
                                             "wall": {"typeName": "target_wall_type"}}
STUDIO_PATH = re.compile(r"^/studios/([A-Za-z0-9_-]+)(/.*)?$")
SKIP_TOOLS = {"navigate", "teach_start", "teach_stop", "replay", "upstream_call"}

ElementInfo = Callable[[list[int]], dict[int, dict[str, Any]]]


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).replace("-", "_").lower()


def _label(entry: dict[str, Any]) -> str:
    """A step name: the action run, else the tool or method, as letters, digits, _ and -."""
    if entry.get("tool") == "execute_action" and isinstance(entry.get("params"), dict):
        raw = str(entry["params"].get("action") or "execute_action")
    else:
        raw = str(entry.get("tool") or entry.get("method") or "step")
    label = re.sub(r"[^A-Za-z0-9_-]+", "_", raw)[:60].strip("_-")
    return label if label[:1].isalpha() else f"step_{label}"


def keep(entries: list[dict[str, Any]], read_only_tools: set[str]) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    for entry in entries:
        if "error" in entry or not (entry.get("method") or entry.get("tool")):
            continue
        params = entry["params"] if isinstance(entry.get("params"), dict) else {}
        if entry.get("method") and (params.get("dryRun") is True
                                    or str(entry["method"]).startswith("rpc.")):
            continue
        if entry.get("tool") and (entry["tool"] in SKIP_TOOLS or entry["tool"] in
                                  read_only_tools):
            continue
        if kept and kept[-1].get("method") == entry.get("method") \
                and kept[-1].get("tool") == entry.get("tool") \
                and kept[-1].get("params") == entry.get("params"):
            continue
        kept.append(entry)
    return kept


def _walk(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, scalar) pairs inside ``value``."""
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _walk(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _walk(v, f"{path}.{i}" if path else str(i))
    elif not isinstance(value, bool) and value is not None:
        out.append((path, value))
    return out


def _wire_index(name: str, result: Any, index: dict[Any, str]) -> None:
    for path, value in _walk(result):
        keys = path.split(".")
        last = keys[-1]
        parent = keys[-2] if len(keys) > 1 else ""
        if last in WIRE_KEYS or (last.isdigit() and parent in WIRE_KEYS):
            if isinstance(value, str) and len(value) < 3:
                continue
            index.setdefault(json.dumps(value), f"steps.{name}.result.{path}")


def _known_elements(entries: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Element info the capture already holds: any result dict with elementId and a category."""
    known: dict[int, dict[str, Any]] = {}

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            ident = value.get("elementId")
            if isinstance(ident, int) and not isinstance(ident, bool) \
                    and value.get("category"):
                known.setdefault(ident, value)
            for v in value.values():
                visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)

    for entry in entries:
        visit(entry.get("result"))
    return known


def _selector(infos: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The selector fields all ``infos`` share (mark only for a single element)."""
    if not infos:
        return None
    selector: dict[str, Any] = {}
    for key in SELECTOR_FIELDS:
        if key == "mark" and len(infos) > 1:
            continue
        values = {json.dumps(i.get(key)) for i in infos}
        value = infos[0].get(key)
        if len(values) == 1 and value not in (None, ""):
            selector[key] = value
    return selector if "category" in selector and len(selector) > 1 else None


class Generator:
    def __init__(self, name: str, entries: list[dict[str, Any]], volatile: tuple[str, ...],
                 element_info: ElementInfo | None = None,
                 read_only_tools: set[str] | None = None,
                 default_caps: dict[str, int] | None = None) -> None:
        self.name = name
        self.default_caps = default_caps or {}
        self.entries = keep(entries, read_only_tools or set())
        self.volatile = set(volatile)
        self.element_info = element_info
        self.vars: dict[str, Any] = {}
        self.inputs: dict[str, dict[str, Any]] = {}
        self.by_value: dict[str, str] = {}
        self.notes: list[str] = []
        self.known = _known_elements(entries)
        # The action an execute_action step runs, while its parameters are lifted: their
        # variables are typed and described from its parameters' JSON Schema.
        self.action: Any = None

    def build(self) -> dict[str, Any]:
        steps: list[dict[str, Any]] = []
        wires: dict[Any, str] = {}
        names: set[str] = set()
        for entry in self.entries:
            base = _label(entry)
            name, n = base, 2
            while name in names:
                name, n = f"{base}_{n}", n + 1
            names.add(name)
            params: dict[str, Any] = copy.deepcopy(
                entry["params"] if isinstance(entry.get("params"), dict) else {})
            tool, method = entry.get("tool"), entry.get("method")
            if tool == "execute_action" and not params.get("path") and isinstance(
                    entry.get("result"), dict) and entry["result"].get("path"):
                params["path"] = entry["result"]["path"]  # the page it ran on, made explicit
            params = self._wire(params, wires)
            if method:
                params = self._selectors(name, params)
            family = next((f for f in FAMILY_ALIASES if f in str(method or "")), None)
            self.action = _action_of(tool, params)
            params = self._lift(params, family, tool)
            self.action = None
            step: dict[str, Any] = {"name": name}
            step["tool" if tool else "method"] = tool or method
            step["params"] = params
            write = is_write(method, tool, entry.get("params"))
            if write:
                step["confirm"] = True
            expect = self._bounds(entry, write, tool)
            if expect:
                step["expect"] = expect
            steps.append(step)
            if write:  # what the routine itself created is what later steps work on
                _wire_index(name, entry.get("result"), wires)
        recipe: dict[str, Any] = {
            "name": self.name, "version": "1.0.0",
            "description": f"Generated from the teach session {self.name}",
            "vars": self.vars, "inputs": self.inputs}
        caps = self._caps(steps)
        if caps:
            recipe["caps"] = caps
        recipe["steps"] = steps
        if self.notes:
            recipe["notes"] = self.notes
        return recipe

    def _caps(self, steps: list[dict[str, Any]]) -> dict[str, int]:
        """Caps raised where a write step's proposed bound exceeds the default cap: what was
        taught must replay, and nothing else is raised."""
        caps: dict[str, int] = {}
        for step in steps:
            expect = step.get("expect") if step.get("confirm") else None
            for key, value in (expect or {}).items():
                default = self.default_caps.get(key)
                if key.startswith("max") and isinstance(value, int) and default is not None \
                        and value > default:
                    caps[key] = max(caps.get(key, 0), value)
        return caps

    # -- wiring -----------------------------------------------------------------------------

    def _wire(self, value: Any, wires: dict[Any, str], key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self._wire(v, wires, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._wire(v, wires, key) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        ref = wires.get(json.dumps(value))
        if ref and (key in WIRE_KEYS or key in ID_KEYS or key == "path" or key.endswith("Id")
                    or key.endswith("Ids")):
            return "{{" + ref + "}}"
        return value

    # -- ids → selectors ----------------------------------------------------------------------

    def _infos(self, ids: list[int]) -> list[dict[str, Any]] | None:
        missing = [i for i in ids if i not in self.known]
        if missing and self.element_info is not None:
            try:
                self.known.update(self.element_info(missing))
            except Exception:  # element info is a nicety: keep the ids when it is unavailable
                pass
        if any(i not in self.known for i in ids):
            return None
        return [self.known[i] for i in ids]

    def _to_selector(self, holder: dict[str, Any], where: str) -> dict[str, Any] | None:
        """The selector that replaces the ids in ``holder``, or None to keep the ids."""
        ids: list[int] = []
        if isinstance(holder.get("elementId"), int):
            ids = [holder["elementId"]]
        elif isinstance(holder.get("elementIds"), list) and all(
                isinstance(i, int) for i in holder["elementIds"]):
            ids = list(holder["elementIds"])
        if not ids:
            return None
        selector = _selector(self._infos(ids) or [])
        if selector is None:
            self.notes.append(f"{where}: kept element ids {ids} (no common selector found)")
            return None
        self.notes.append(f"{where}: element ids {ids} replaced by selector "
                          f"{json.dumps(selector)}")
        return selector

    def _selectors(self, step: str, params: dict[str, Any]) -> dict[str, Any]:
        for container in ID_CONTAINERS:
            holder = params.get(container)
            if isinstance(holder, dict):
                selector = self._to_selector(holder, f"{step}.{container}")
                if selector is not None:
                    params[container] = {**{k: v for k, v in holder.items()
                                            if k not in ID_KEYS}, **selector}
        selector = self._to_selector(params, step)
        if selector is not None:
            params = {**{k: v for k, v in params.items() if k not in ID_KEYS},
                      "selector": selector}
        return params

    # -- variables --------------------------------------------------------------------------

    def _var_name(self, key: str, family: str | None) -> str:
        if family and key in FAMILY_ALIASES[family]:
            return FAMILY_ALIASES[family][key]
        return ALIASES.get(key) or snake(key) or "value"

    def _new_var(self, base: str, value: Any, key: str) -> str:
        name, n = base, 2
        while name in self.vars:
            name, n = f"{base}_{n}", n + 1
        required = key in self.volatile or is_redacted(value)
        self.vars[name] = None if required else value
        spec: dict[str, Any] = {"type": _json_type(value)}
        param = self.action.param(key) if self.action is not None else None
        if param is not None:
            spec.update(_typed_from(param.json_schema(), spec["type"]))
        if required:
            spec["required"] = True
            spec["description"] = ("redacted at capture: give it at replay" if is_redacted(value)
                                   else f"volatile input (was {json.dumps(value)} when taught)")
            if not is_redacted(value):
                spec["examples"] = [value]  # the value seen when taught
        self.inputs[name] = spec
        return name

    def _lift_scalar(self, value: Any, key: str, family: str | None) -> Any:
        if isinstance(value, str) and "{{" in value:
            return value
        base = self._var_name(key, family)
        # One value used under the same (aliased) name is one variable: level and
        # selector.levelName share level_name; two counts of the same routine share bar_count.
        fingerprint = f"{base}={json.dumps(value, sort_keys=True)}"
        existing = self.by_value.get(fingerprint)
        if existing is not None:
            return "{{" + existing + "}}"
        name = self._new_var(base, value, key)
        self.by_value[fingerprint] = name
        return "{{" + name + "}}"

    def _lift(self, value: Any, family: str | None, tool: str | None, key: str = "") -> Any:
        if isinstance(value, dict):
            if key == "host" and all(k in SELECTOR_FIELDS or k == "level" for k in value):
                return self._lift_scalar(value, "host", family)  # the seed's host_selector
            out = {}
            for k, v in value.items():
                if tool and not key and k == "path" and isinstance(v, str):
                    out[k] = self._lift_path(v)
                elif k in KEEP_LITERAL:
                    out[k] = v
                else:
                    out[k] = self._lift(v, family, tool, k)
            return out
        if isinstance(value, list):
            return [self._lift(v, family, tool, key) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        return self._lift_scalar(value, key, family)

    def _lift_path(self, path: str) -> str:
        if "{{" in path:
            return path
        match = STUDIO_PATH.match(path)
        if not match:
            return path
        holder = self._lift_scalar(match.group(1), "studio", None)
        return f"/studios/{holder}{match.group(2) or ''}"

    # -- bounds -----------------------------------------------------------------------------

    def _bounds(self, entry: dict[str, Any], write: bool, tool: str | None
                ) -> dict[str, Any] | None:
        result = entry.get("result")
        if tool:
            if isinstance(result, dict) and "ok" in result:
                return {"checks": [{"path": "ok", "equals": True}]}
            return None
        if not isinstance(result, dict):
            return None
        expect: dict[str, Any] = {}
        for field in COUNT_FIELDS:
            value = result.get(field)
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            if not write and field != "candidates":
                continue
            suffix = field.capitalize()
            expect[f"min{suffix}"] = 1 if value >= 1 else 0
            expect[f"max{suffix}"] = max(value * 2, 1)
        return expect or None


def _action_of(tool: str | None, params: dict[str, Any]) -> Any:
    """The registered action an ``execute_action`` step runs, or None."""
    if tool != "execute_action":
        return None

    name = params.get("action")
    return ACTIONS.get(name) if isinstance(name, str) else None


def _typed_from(schema: dict[str, Any], seen: str) -> dict[str, Any]:
    """A recipe input spec from an action parameter's JSON Schema: its declared type (when it is
    one a recipe types by, else the value's own ``seen``), description, format and enum."""
    kind = schema.get("type")
    spec: dict[str, Any] = {"type": kind if isinstance(kind, str) and kind in TYPES else seen}
    for key in ("description", "format", "enum", "minimum", "maximum", "maxLength"):
        if key in schema:
            spec[key] = schema[key]
    return spec


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"


def generate(name: str, entries: list[dict[str, Any]], volatile: tuple[str, ...],
             element_info: ElementInfo | None = None,
             read_only_tools: set[str] | None = None,
             default_caps: dict[str, int] | None = None) -> dict[str, Any]:
    return Generator(name, entries, volatile, element_info, read_only_tools,
                     default_caps).build()

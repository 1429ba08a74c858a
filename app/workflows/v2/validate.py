"""Validation of a ``noetl.io/v2`` document: the schema, then what a schema cannot say.

Every problem names its path, as for our own documents: ``workflow[2].next.arcs[0].step:
unknown step 'ned' (defined: start, fetch, end)``. Checked beyond the shape: duplicate steps,
tasks and workbook entries; arcs, jumps, workbook and turn references; the kinds this server
runs and what each needs (a ``postgres`` task names its credential, never a DSN); keychain
entries that would carry a credential's material; template syntax and names no template can
see; cycles (a step runs once per run); ``sql_inputs`` that are not inputs; the ``mcp``
section, checked as in our own documents.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from jinja2 import TemplateError, meta
from jsonschema import Draft202012Validator

from app.workflows.checks import (
    defined,
    find_cycle,
    mcp_problems,
    mcp_tool_names,
    path_of,
    shared_schema_problem,
    sorted_errors,
    templates_at,
)
from app.workflows.document import Problem, join
from app.workflows.templating import RESULTS_ENV, keys_read, parse, strings_at
from app.workflows.v2.schema import HINTS, KEYCHAIN_MATERIAL, KINDS, SCHEMA
from app.workflows.v2.scope import JINJA_GLOBALS, RESERVED

SQL_KEYS = ("command", "commands", "query", "queries", "cmd", "cmds", "sql")
PYTHON_CODE = ("code", "code_b64", "code_base64")
# What each kind needs (one of the keys of each tuple).
NEEDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "python": (("code", "code_b64", "code_base64", "function"),),
    "http": (("url", "endpoint"),),
    "postgres": (SQL_KEYS, ("auth", "credential")),
    "duckdb": (SQL_KEYS,),
    "workbook": (("name",),),
    "playbook": (("path",),),
    "mcp": (("tool",),),
    "page": (("path",),),
    "rpc": (("method",),),
    "noop": (),
}
# Keys of a task that are not templates its tool renders.
NOT_RENDERED = ("kind", "name", "spec", "set", "code", "output", "libs")


# Built at the first validation, not at import: most processes never validate a document.
_validator = functools.cache(lambda: Draft202012Validator(SCHEMA))


def schema_problems(doc: dict[str, Any]) -> list[Problem]:
    return schema_problems_of(sorted_errors(_validator(), doc), doc)


def schema_problems_of(errors: list[Any], doc: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    for err in errors:
        where = path_of(err.absolute_path)
        shared = shared_schema_problem(err, where)
        if shared is not None:
            problems.append(shared)
        elif err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            for key in extra:
                hint = HINTS.get(key)
                allowed = ", ".join(err.schema.get("properties", {}))
                problems.append(Problem(join("" if where == "(document)" else where, key),
                                        f"not allowed here: {hint}" if hint else
                                        f"not allowed here (allowed: {allowed})"))
        elif err.validator == "oneOf" and where.endswith(".tool"):
            # Say what is wrong inside the task (the branch of its own type), not only that
            # the tool is not one.
            branch = 0 if isinstance(err.instance, dict) else 1
            inner = [e for e in err.context if e.relative_schema_path[0] == branch]
            if isinstance(err.instance, dict | list) and any(list(e.path) for e in inner):
                problems.extend(schema_problems_of(
                    [max(inner, key=lambda e: len(list(e.path)))], doc))
            else:
                problems.append(Problem(where, "must be a task {kind, …} or a list of tasks "
                                               "[{name, kind, …}]"))
        elif err.validator == "oneOf":
            problems.append(Problem(where, "a rule is {when, then: {do, …}} or "
                                           "{else: {then: {do, …}}}"))
        elif err.validator == "type" and where.endswith(".next"):
            problems.append(Problem(where, "must be {spec: {mode}, arcs: [{step, when, set}]} "
                                           "(a list of step names is the harmonic/v1 form)"))
        else:
            problems.append(Problem(where, err.message))
    return problems


# Tasks ---------------------------------------------------------------------------------------

def tasks_of(tool: Any, step: str | None = None) -> list[dict[str, Any]]:
    """A step's tool as a list of tasks, each named: ``task_<i>`` when it has no name, a lone
    task (``tool: {kind: …}``) after its ``step``. A task's ``spec`` may hold its tool's own
    keys too (NoETL layers them): they count where the task itself does not set them."""
    if isinstance(tool, dict) and step is not None:
        tool = {**tool, "name": tool.get("name") or step}
    items = tool if isinstance(tool, list) else [tool] if isinstance(tool, dict) else []
    out = []
    for i, task in enumerate(items):
        if not isinstance(task, dict):
            continue
        spec: dict[str, Any] = task["spec"] if isinstance(task.get("spec"), dict) else {}
        layered = {k: v for k, v in spec.items() if k not in ("policy", "timeout")}
        out.append({**layered, **task, "name": task.get("name") or f"task_{i}"})
    return out


def then_of(rule: dict[str, Any]) -> dict[str, Any]:
    """A policy rule's action: its ``then``, its ``else``'s ``then``, or an ``else`` written
    as the action itself."""
    if "then" in rule:
        return dict(rule["then"])
    other = rule.get("else") or {}
    return dict(other.get("then") or other)


def workbook_tool(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """A workbook entry's tasks: its ``tool``, or the entry itself written as a task."""
    if "tool" in entry:
        return tasks_of(entry["tool"])
    return [{k: v for k, v in entry.items() if k != "assert"}] if "kind" in entry else []


class _Check:
    """The semantic checks, sharing what the document declares."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.problems: list[Problem] = []
        self.steps = [s["step"] for s in doc["workflow"]]
        self.workbook = {e["name"]: e for e in doc.get("workbook") or []}
        self.workload = doc.get("workload") or {}
        self.names = self._names()

    def add(self, where: str, message: str) -> None:
        self.problems.append(Problem(where, message))

    def _names(self) -> set[str]:
        """Every name a template of this document may start from."""
        names = set(RESERVED) | set(JINJA_GLOBALS) | set(self.workload) | set(self.steps)
        for step in self.doc["workflow"]:
            loop = step.get("loop") or {}
            if "iterator" in loop:
                names.add(loop["iterator"])
            for task in tasks_of(step.get("tool"), step["step"]):
                names.add(task["name"])
            for key in self._set_keys(step):
                names.add(key)
        for entry in self.workbook.values():
            names.add(entry["name"])
            for task in workbook_tool(entry):
                names.add(task["name"])
        return names

    def _set_keys(self, step: dict[str, Any]) -> set[str]:
        """The names ``set`` writes anywhere in a step (bare, ``ctx.`` and ``step.`` keys are
        names of their own afterwards)."""
        sets: list[dict[str, Any]] = [step.get("set") or {}]
        sets += [arc.get("set") or {} for arc in (step.get("next") or {}).get("arcs") or []]
        for task in tasks_of(step.get("tool"), step["step"]):
            sets.append(task.get("set") or {})
            for rule in ((task.get("spec") or {}).get("policy") or {}).get("rules") or []:
                sets.append(then_of(rule).get("set") or {})
        keys = set()
        for item in sets:
            for key in item:
                scope, _, rest = str(key).partition(".")
                if not rest:
                    keys.add(scope)
                elif scope in ("ctx", "step"):
                    keys.add(rest.split(".")[0])
        return keys

    # templates

    def templates(self, value: Any, where: str, extra: Iterable[str] = ()) -> None:
        for at, template in templates_at(value, where):
            try:
                names = meta.find_undeclared_variables(parse(template, RESULTS_ENV))
            except TemplateError as exc:
                self.add(at, f"template syntax error: {exc}")
                continue
            known = self.names | set(extra)
            for name in sorted(names - known):
                self.add(at, f"unknown name '{name}' in template (the workload's keys, "
                             f"steps, tasks, loop iterators, names set with 'set', and: "
                             f"{', '.join(RESERVED[:12])}, …)")

    # tasks

    def task(self, task: dict[str, Any], where: str, labels: list[str]) -> None:
        kind = task["kind"]
        if kind not in KINDS:
            self.add(join(where, "kind"), f"kind '{kind}' is not run here (kinds: "
                                          f"{', '.join(KINDS)})")
            return
        for keys in NEEDS[kind]:
            if not any(key in task for key in keys):
                wanted = " or ".join(keys)
                self.add(join(where, keys[0]), f"required for kind {kind} ({wanted})")
        if kind == "postgres" and "dsn" in task:
            self.add(join(where, "dsn"), "a postgres task names its credential (auth: <name>, "
                                         "read from the operator's secrets), never a DSN")
        if kind == "python" and "script" in task:
            self.add(join(where, "script"), "scripts from elsewhere are not run here: write "
                                            "the code inline, or name a registered function")
        if kind == "workbook" and task.get("name") not in self.workbook:
            self.add(join(where, "name"), f"unknown workbook entry '{task.get('name')}' "
                                          f"{defined(self.workbook)}")
        if kind == "mcp":
            known = mcp_tool_names()
            if known is not None and task.get("tool") not in known:
                self.add(join(where, "tool"), f"unknown MCP tool '{task.get('tool')}' "
                                              f"{defined(known)}")
        for i, rule in enumerate(((task.get("spec") or {}).get("policy") or {}).get("rules")
                                 or []):
            then = then_of(rule)
            at = join(join(join(where, "spec.policy"), "rules"), i)
            if then.get("do") == "jump" and then.get("to") not in labels:
                self.add(join(at, "then.to" if "then" in rule else "else.then.to"),
                         f"jump to an unknown task '{then.get('to')}' {defined(labels)}")
            self.templates(rule.get("when"), join(at, "when"))
            self.templates(then.get("set"), join(at, "then.set"))
        self.templates({k: v for k, v in task.items() if k not in NOT_RENDERED}, where)
        self.templates(task.get("set"), join(where, "set"))

    def pipeline(self, tool: Any, where: str, step: str | None = None) -> None:
        tasks = tasks_of(tool, step)
        labels = [t["name"] for t in tasks]
        seen: dict[str, int] = {}
        for i, task in enumerate(tasks):
            at = join(where, i) if isinstance(tool, list) else where
            if task["name"] in seen:
                self.add(join(at, "name"), f"duplicate task '{task['name']}' (first at "
                                           f"{join(where, seen[task['name']])})")
            seen.setdefault(task["name"], i)
            self.task(task, at, labels)

    # steps

    def step(self, step: dict[str, Any], where: str) -> None:
        if "tool" not in step and "turn" not in step:
            self.add(join(where, "tool"), "required: every step runs a tool (kind: noop to "
                                          "only route), or a turn of the mcp section")
        if "tool" in step and "turn" in step:
            self.add(where, "a step runs a tool or a turn, not both")
        if "turn" in step and "loop" in step:
            self.add(join(where, "loop"), "a turn runs once: loop over a list in a step of "
                                          "tasks")
        if "tool" in step:
            self.pipeline(step["tool"], join(where, "tool"), step["step"])
        self.templates(step.get("input"), join(where, "input"))
        self.templates(step.get("set"), join(where, "set"))
        loop = step.get("loop")
        if loop:
            self.templates(loop.get("in"), join(where, "loop.in"))
            self.templates((loop.get("spec") or {}).get("max_in_flight"),
                           join(where, "loop.spec.max_in_flight"))
        admit = ((step.get("spec") or {}).get("policy") or {}).get("admit") or {}
        for i, rule in enumerate(admit.get("rules") or []):
            self.templates(rule.get("when"), join(join(where, "spec.policy.admit.rules"), i))
        for i, arc in enumerate((step.get("next") or {}).get("arcs") or []):
            at = join(join(where, "next.arcs"), i)
            if arc["step"] not in self.steps:
                self.add(join(at, "step"), f"unknown step '{arc['step']}' "
                                           f"{defined(self.steps)}")
            self.templates(arc.get("when"), join(at, "when"))
            self.templates(arc.get("set"), join(at, "set"))

    def graph(self) -> None:
        index: dict[str, int] = {}
        for i, name in enumerate(self.steps):
            if name in index:
                self.add(join(join("workflow", i), "step"),
                         f"duplicate step '{name}' (first at workflow[{index[name]}])")
            index.setdefault(name, i)
        edges = {s["step"]: [a["step"] for a in (s.get("next") or {}).get("arcs") or []
                             if a["step"] in index] for s in self.doc["workflow"]}
        cycle = find_cycle(edges)
        if cycle:
            self.add(join("workflow", index[cycle[0]]),
                     "cycle: " + " → ".join(cycle + [cycle[0]]) + " (a step runs once per run "
                     "here: repeat work with a loop, or a task policy's jump)")
        spec = (self.doc.get("executor") or {}).get("spec") or {}
        for key in ("entry_step", "final_step"):
            if key in spec and spec[key] not in index:
                self.add(join("executor.spec", key), f"unknown step '{spec[key]}' "
                                                     f"{defined(self.steps)}")

    def keychain(self) -> None:
        for i, entry in enumerate(self.doc.get("keychain") or []):
            for key in entry:
                if key in KEYCHAIN_MATERIAL:
                    self.add(join(join("keychain", i), key),
                             f"a credential's material is never read from the document: the "
                             f"operator stores it as the secret '{entry['name']}' "
                             f"(WORKFLOWS_SECRETS); the entry names it and says its kind")

    def workbook_entries(self) -> None:
        for i, entry in enumerate(self.doc.get("workbook") or []):
            where = join("workbook", i)
            if "tool" not in entry and "kind" not in entry:
                self.add(join(where, "tool"), "required: the entry's tool {kind, …}")
            elif "tool" in entry:
                self.pipeline(entry["tool"], join(where, "tool"))
            else:
                task = workbook_tool(entry)[0]
                self.task(task, where, [task["name"]])

    def inputs(self) -> None:
        read: set[str] = set()
        for _where, template in strings_at({k: v for k, v in self.doc.items()
                                             if k != "workload"}):
            read |= keys_read(template, ("workload",))
        for i, name in enumerate(self.doc.get("sql_inputs") or []):
            if name not in self.workload and name not in read:
                self.add(join("sql_inputs", i), f"'{name}' is not an input of this workflow "
                                                f"(workload: {', '.join(self.workload) or 'none'})")

    def turns(self) -> None:
        turns = [t["name"] for t in (self.doc.get("mcp") or {}).get("turns") or []]
        placed: dict[str, str] = {}
        for i, step in enumerate(self.doc["workflow"]):
            if "turn" not in step:
                continue
            where = join(join("workflow", i), "turn")
            if step["turn"] not in turns:
                self.add(where, f"unknown turn '{step['turn']}' {defined(turns)}")
            elif step["turn"] in placed:
                self.add(where, f"turn '{step['turn']}' is already used by step "
                                f"'{placed[step['turn']]}'")
            else:
                placed[step["turn"]] = step["step"]
        for i, name in enumerate(turns):
            if name not in placed:
                self.add(join("mcp.turns", i), f"turn '{name}' is not used by any step (add a "
                                               f"step with 'turn: {name}')")


def validate_v2(doc: dict[str, Any]) -> list[Problem]:
    """All problems of a parsed ``noetl.io/v2`` document; none means it compiles and runs."""
    problems = schema_problems(doc)
    if problems:
        return problems  # semantic checks assume the shape is right
    check = _Check(doc)
    check.graph()
    check.keychain()
    check.workbook_entries()
    check.inputs()
    check.turns()
    for i, step in enumerate(doc["workflow"]):
        check.step(step, join("workflow", i))
    if doc.get("mcp"):
        check.problems += mcp_problems(doc)
    return check.problems

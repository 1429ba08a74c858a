"""Compiling a valid ``noetl.io/v2`` document into the stored form its runs execute.

Each step keeps its tasks (a lone ``tool`` is a pipeline of one, named after its step), its
``input``, ``loop``, ``set``, admission rules and arcs (``next: [{step, when, set}]`` with the
router's ``mode``, exclusive unless said). A ``workbook`` task is replaced by the entry's own
task(s), the caller's ``input`` over the entry's. A step with more than one way in is a join:
``joins`` lists the steps it waits for (every step it can be reached from), so it runs once,
after whichever of them run. Turns of the ``mcp`` section are steps of type ``turn``, preceded
by a hidden ``resource`` step for each resource a turn reads first, as in our own documents.

The compiled form also says what a run start checks: the inputs the templates read without a
default (``inputs_required``), those only an admin may set (``inputs_privileged``: the
``sql_inputs``, and the inputs that name a credential), and the first step whose python runs
inline code (``inline_python``), which needs the operator's setting.
"""

from __future__ import annotations

import json
from typing import Any

from jinja2 import TemplateError, meta

from app.workflows.declarations import UNNAMED, compile_tool, compile_turn
from app.workflows.document import DocumentError
from app.workflows.templating import keys_read, parse, strings_at
from app.workflows.v2.validate import PYTHON_CODE, tasks_of, validate_v2, workbook_tool

CREDENTIAL_KEYS = ("auth", "credential")


def _expand(tasks: list[dict[str, Any]], workbook: dict[str, dict[str, Any]]
            ) -> list[dict[str, Any]]:
    """Workbook tasks replaced by the tasks of their entry."""
    out: list[dict[str, Any]] = []
    for task in tasks:
        if task["kind"] != "workbook":
            out.append(task)
            continue
        entry = workbook[task["name"]]
        inner = workbook_tool(entry)
        call = {k: v for k, v in task.items() if k not in ("kind", "name", "input")}
        for item in inner:
            merged = {**item, **call,
                      "input": {**(item.get("input") or {}), **(task.get("input") or {})}}
            merged["name"] = task["name"] if len(inner) == 1 else f"{task['name']}.{item['name']}"
            out.append(merged)
    return out


def _arcs(step: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"step": a["step"], **({"when": a["when"]} if "when" in a else {}),
             **({"set": a["set"]} if a.get("set") else {})}
            for a in (step.get("next") or {}).get("arcs") or []]


def _ancestors(edges: dict[str, list[str]]) -> dict[str, set[str]]:
    """For each step, every step it can be reached from."""
    parents: dict[str, set[str]] = {name: set() for name in edges}
    for name, targets in edges.items():
        for target in targets:
            parents.setdefault(target, set()).add(name)
    out: dict[str, set[str]] = {}
    for name in parents:
        seen: set[str] = set()
        todo = list(parents[name])
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(parents.get(current, ()))
        out[name] = seen - {name}
    return out


def _credential_inputs(tasks: list[dict[str, Any]], workload: dict[str, Any]) -> set[str]:
    """The workload keys a task's credential name is read from (``auth: '{{ pg_auth }}'``)."""
    found: set[str] = set()
    for task in tasks:
        for key in CREDENTIAL_KEYS:
            value = task.get(key)
            if not isinstance(value, str) or "{{" not in value:
                continue
            try:
                names = meta.find_undeclared_variables(parse(value))
            except TemplateError:
                continue
            found |= names & set(workload)
            found |= keys_read(value, ("workload", "ctx"))
    return found


def compile_v2(doc: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """The compiled form (plain JSON). Raises DocumentError if the document is not valid."""
    problems = validate_v2(doc)
    if problems:
        raise DocumentError(problems)
    metadata = doc.get("metadata") or {}
    workload = doc.get("workload") or {}
    fallback = name or UNNAMED
    workbook = {e["name"]: e for e in doc.get("workbook") or []}
    mcp = doc.get("mcp") or {}
    models = {m["name"]: m for m in mcp.get("models") or []}
    tools = {t["name"]: compile_tool(t, "tool") for t in mcp.get("tools") or []}
    resources = {r["name"]: compile_tool(r, "resource") for r in mcp.get("resources") or []}
    prompts = {p["name"]: p["template"] for p in mcp.get("prompts") or []}
    turns = {t["name"]: t for t in mcp.get("turns") or []}

    steps: list[dict[str, Any]] = []
    privileged: set[str] = set(doc.get("sql_inputs") or [])
    inline_python: str | None = None
    for i, item in enumerate(doc["workflow"]):
        step: dict[str, Any] = {"name": item["step"], "hidden": False, "source": f"workflow[{i}]",
                                "desc": item.get("desc", ""), "next": _arcs(item),
                                "mode": ((item.get("next") or {}).get("spec") or {}).get(
                                    "mode", "exclusive"),
                                "input": item.get("input") or {}, "set": item.get("set") or {},
                                "loop": item.get("loop"),
                                "admit": ((((item.get("spec") or {}).get("policy") or {})
                                           .get("admit") or {}).get("rules"))}
        if "turn" in item:
            step.update(type="turn", turn=compile_turn(turns[item["turn"]], models, tools, prompts))
        else:
            tasks = _expand(tasks_of(item["tool"], item["step"]), workbook)
            step.update(tasks=tasks, type=tasks[0]["kind"] if len(tasks) == 1 else "pipeline",
                        tool={"name": tasks[0]["name"], "type": tasks[0]["kind"]})
            privileged |= _credential_inputs(tasks, workload)
            if inline_python is None and any(
                    t["kind"] == "python" and any(k in t for k in PYTHON_CODE) for t in tasks):
                inline_python = item["step"]
        steps.append(step)

    # Resources a turn reads run first, each in a hidden step before the turn that needs it.
    hidden: list[dict[str, Any]] = []
    read: set[str] = set()
    for step in [s for s in steps if s["type"] == "turn"]:
        wanted = [r for r in step["turn"]["resources"] if r not in read]
        if not wanted:
            continue
        chain = [f"resource.{r}" for r in wanted] + [step["name"]]
        for other in steps:
            for arc in other["next"]:
                if arc["step"] == step["name"]:
                    arc["step"] = chain[0]
        for res, here, following in zip(wanted, chain, chain[1:], strict=False):
            hidden.append({"name": here, "type": "resource", "hidden": True, "resource": res,
                           "source": f"mcp.resources ({res})", "desc": "", "input": {},
                           "set": {}, "loop": None, "admit": None, "mode": "exclusive",
                           "tool": resources[res], "next": [{"step": following}]})
            read.add(res)
    entry = ((doc.get("executor") or {}).get("spec") or {}).get("entry_step") or (
        "start" if any(s["name"] == "start" for s in steps) else steps[0]["name"])
    everything = hidden + steps
    edges = {s["name"]: [a["step"] for a in s["next"]] for s in everything}
    incoming: dict[str, int] = {}
    for targets in edges.values():
        for target in set(targets):
            incoming[target] = incoming.get(target, 0) + 1
    ancestors = _ancestors(edges)
    joins = {name: sorted(ancestors[name]) for name, count in incoming.items() if count > 1}

    first = _entry(entry, hidden)
    required: set[str] = set()
    for _where, template in strings_at({k: v for k, v in doc.items() if k != "workload"}):
        required |= keys_read(template, ("workload",))
    compiled = {
        "apiVersion": doc["apiVersion"], "kind": doc["kind"], "dsl": "v2",
        "name": metadata.get("name") or fallback,
        "path": metadata.get("path") or metadata.get("name") or fallback,
        "description": metadata.get("description", ""),
        "workload": workload,
        "inputs_required": sorted(required - set(workload)),
        "inputs_privileged": sorted(privileged),
        "sql_inputs": list(doc.get("sql_inputs") or []),
        "inline_python": inline_python,
        "keychain": [k["name"] for k in doc.get("keychain") or []],
        "declarations": {section: {d["name"]: d for d in mcp.get(section) or []}
                         for section in ("models", "tools", "resources", "prompts", "turns")},
        "entry": first,
        "result_step": ((doc.get("executor") or {}).get("spec") or {}).get("final_step"),
        "joins": joins,
        "steps": _ordered(everything, first),
    }
    return json.loads(json.dumps(compiled))


def _entry(entry: str, hidden: list[dict[str, Any]]) -> str:
    """The first step, or the hidden resource step the first step's turn reads before it."""
    for h in hidden:
        if h["next"][0]["step"] == entry and not any(
                x["next"][0]["step"] == h["name"] for x in hidden):
            return str(h["name"])
    return entry


def _ordered(steps: list[dict[str, Any]], entry: str) -> list[dict[str, Any]]:
    """Steps breadth-first from the entry, then those no arc reaches, as written."""
    by_name = {s["name"]: s for s in steps}
    seen, queue = [entry], [entry]
    while queue:
        for arc in by_name[queue.pop(0)]["next"]:
            if arc["step"] not in seen:
                seen.append(arc["step"])
                queue.append(arc["step"])
    return [by_name[n] for n in seen] + [s for s in steps if s["name"] not in seen]

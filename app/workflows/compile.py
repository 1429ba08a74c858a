"""Compilation: a valid document becomes an explicit graph of steps the runner executes.

- Without a ``workflow`` section the turns run in order: start → turn… → end.
- Each turn is a step (``type: turn``); each resource a turn uses becomes a hidden step
  (``type: resource``) placed right before the first turn step that uses it.
- The tools a turn may call are listed as hidden ``type: tool`` steps between the turn's model
  rounds: at run time each call the model asks for is enqueued as its own job
  (``<turn step>#<round>.<tool>.<n>``), then the turn continues (``<turn step>#<round+1>``).
- A ``type: workbook`` step runs a workbook task by name, or the task written inline in it.
- ``declarations`` keeps the ``mcp`` section by name, for templates that read
  ``mcp.models.<name>``, ``mcp.turns.<name>``, ``prompts.<name>.template`` and so on.
"""

from __future__ import annotations

import json
from typing import Any

from app.workflows.checks import MCP_SECTIONS
from app.workflows.declarations import UNNAMED, compile_tool, compile_turn
from app.workflows.document import DocumentError
from app.workflows.schema import V2_VERSIONS
from app.workflows.templating import keys_read, strings_at
from app.workflows.v2.compile import compile_v2
from app.workflows.validate import validate


def inputs_required(doc: dict[str, Any], workload: dict[str, Any]) -> list[str]:
    """Keys the document's templates read from its workload (``input.<key>``,
    ``workload.<key>``) that the workload does not define: a run must be given them."""
    read: set[str] = set()
    for _where, template in strings_at({k: v for k, v in doc.items() if k != "workload"}):
        read |= keys_read(template, ("input", "workload"))
    return sorted(read - set(workload))


def _edges(step: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for target in step.get("next") or []:
        out.append({"step": target} if isinstance(target, str) else dict(target))
    return out


def compile_document(doc: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """The compiled form (plain JSON, stored with each run). Raises DocumentError if invalid.

    ``name`` names a document without ``metadata`` (its file's stem, say); a ``noetl.io/v2``
    document compiles in ``app.workflows.v2``."""
    if doc.get("apiVersion") in V2_VERSIONS:
        return compile_v2(doc, name)
    problems = validate(doc)
    if problems:
        raise DocumentError(problems)
    fallback = name or UNNAMED
    mcp = doc.get("mcp") or {}
    models = {m["name"]: m for m in mcp.get("models") or []}
    tools = {t["name"]: compile_tool(t, "tool") for t in mcp.get("tools") or []}
    resources = {r["name"]: compile_tool(r, "resource") for r in mcp.get("resources") or []}
    prompts = {p["name"]: p["template"] for p in mcp.get("prompts") or []}
    tasks = {t["name"]: compile_tool(t, "task") for t in doc.get("workbook") or []}
    turns = {t["name"]: t for t in mcp.get("turns") or []}

    if doc.get("workflow"):
        source = [dict(s) for s in doc["workflow"]]
    else:  # turns in order
        names = [f"mcp.{t}" for t in turns]
        chain = ["start", *names, "end"]
        source = [{"step": "start", "next": [chain[1]]}]
        source += [{"step": n, "turn": t, "next": [chain[i + 2]]}
                   for i, (n, t) in enumerate(zip(names, turns, strict=True))]
        source.append({"step": "end"})

    steps: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(source):
        step: dict[str, Any] = {"name": item["step"], "hidden": False,
                                "source": f"workflow[{i}]" if doc.get("workflow") else "mcp.turns",
                                "desc": item.get("desc", ""), "next": _edges(item),
                                "retries": item.get("retries")}
        if isinstance(item.get("task"), dict):
            inline = {"name": item["step"], **item["task"]}
            step.update(type="task", tool=compile_tool(inline, "task"), args=item.get("args") or {})
        elif "task" in item:
            step.update(type="task", tool=tasks[item["task"]], args=item.get("args") or {})
        elif "turn" in item:
            turn = turns[item["turn"]]
            step.update(type="turn", turn=compile_turn(turn, models, tools, prompts))
        else:
            step.update(type="noop")
        if item.get("save"):
            step["save"] = item["save"]
        steps[step["name"]] = step

    order = _order(steps)
    entry = "start"
    materialized: set[str] = set()
    hidden: list[dict[str, Any]] = []
    for name in order:
        step = steps[name]
        if step["type"] != "turn":
            continue
        wanted = [r for r in step["turn"]["resources"] if r not in materialized]
        if not wanted:
            continue
        chain = [f"resource.{r}" for r in wanted]
        # Everything that led to the turn now leads to its first resource step.
        for other in steps.values():
            for edge in other["next"]:
                if edge["step"] == name:
                    edge["step"] = chain[0]
        if entry == name:
            entry = chain[0]
        for i, (res, res_step) in enumerate(zip(wanted, chain, strict=True)):
            hidden.append({"name": res_step, "type": "resource", "hidden": True,
                           "source": f"mcp.resources ({res})", "desc": "",
                           "resource": res, "tool": resources[res],
                           "next": [{"step": chain[i + 1] if i + 1 < len(chain) else name}]})
            materialized.add(res)
    for step in list(steps.values()):
        if step["type"] == "turn":
            for tool_name in step["turn"]["tools_allowed"]:
                hidden.append({"name": f"{step['name']}#n.{tool_name}", "type": "tool",
                               "hidden": True, "dynamic": True, "turn_step": step["name"],
                               "source": f"mcp.tools ({tool_name})", "desc":
                               "runs each time the model asks for it, between rounds",
                               "tool": tools[tool_name], "next": [{"step": step["name"]}]})
    all_steps = {**steps, **{h["name"]: h for h in hidden}}
    ordered: list[dict[str, Any]] = []
    for name in _order(all_steps, entry):
        ordered.append(all_steps[name])
        # A turn's tool steps are shown right after it: they run between its rounds.
        ordered += [h for h in hidden if h.get("turn_step") == name]
    last_turn = next((s["name"] for s in reversed(ordered) if s["type"] == "turn"), None)
    metadata = doc.get("metadata") or {}
    workload = doc.get("workload") or {}
    compiled = {
        "apiVersion": doc["apiVersion"], "kind": doc["kind"],
        "name": metadata.get("name") or fallback,
        "path": metadata.get("path") or metadata.get("name") or fallback,
        "description": metadata.get("description", ""),
        "workload": workload,
        "inputs_required": inputs_required(doc, workload),
        "declarations": {section: {item["name"]: item for item in mcp.get(section) or []}
                         for section in MCP_SECTIONS},
        "entry": entry, "result_step": last_turn,
        "steps": ordered,
    }
    # Plain JSON: no shared sub-objects (a run stores it; YAML output has no aliases).
    return json.loads(json.dumps(compiled))


def _order(steps: dict[str, dict[str, Any]], entry: str = "start") -> list[str]:
    """Steps in breadth-first order from the entry (a stable, readable order)."""
    seen, queue = [entry] if entry in steps else [], [entry]
    while queue:
        current = queue.pop(0)
        for edge in steps.get(current, {}).get("next", []):
            if edge["step"] not in seen and edge["step"] in steps:
                seen.append(edge["step"])
                queue.append(edge["step"])
    return seen


def steps_by_name(compiled: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in compiled["steps"]}

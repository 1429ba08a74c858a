"""Validation: the JSON Schema first, then what a schema cannot say.

Every problem names its path and, for a broken reference, what exists instead, e.g.
``mcp.turns[0].model: unknown model 'gpt-5' (defined: default)``. Checked: unresolved model,
tool, resource, prompt, task, turn and step references; duplicate names in a section;
``tools_allowed`` naming unknown tools; template syntax and unknown template names; missing
``start``; cycles; unreachable steps; turns no step uses; ``mcp.<section>.<name>`` and
``prompts.<name>`` references in templates that name nothing declared.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from jsonschema import Draft202012Validator

from app.workflows.checks import (
    declared_names,
    defined,
    find_cycle,
    mcp_problems,
    path_of,
    shared_schema_problem,
    sorted_errors,
    template_problems,
    tool_spec_problems,
)
from app.workflows.document import Problem, join
from app.workflows.schema import SCHEMA, V2_VERSIONS
from app.workflows.templating import expand
from app.workflows.v2.validate import validate_v2

# Built at the first validation, not at import: most processes never validate a document.
_validator = functools.cache(lambda: Draft202012Validator(SCHEMA))


def schema_problems(doc: dict[str, Any]) -> list[Problem]:
    problems = []
    for err in sorted_errors(_validator(), doc):
        where = path_of(err.path)
        shared = shared_schema_problem(err, where)
        if shared is not None:
            problems.append(shared)
        elif err.validator == "additionalProperties":
            allowed = ", ".join(err.schema.get("properties", {}))
            problems.append(Problem(where, f"{err.message} (allowed: {allowed})"))
        elif err.validator == "not" and err.schema_path and "task" in str(err.validator_value):
            problems.append(Problem(where, "a step has either task or turn, not both"))
        elif err.validator == "oneOf" and where.endswith(".task"):
            problems.append(Problem(where, "must be a workbook task's name or an inline task "
                                           "{name?, type, spec | its keys}"))
        elif err.validator == "oneOf" and where.endswith(".template"):
            problems.append(Problem(where, "must be a string or a list of {role, content}"))
        elif err.validator == "oneOf":
            problems.append(Problem(where, "must be a step name or {step, when}"))
        elif err.validator == "dependentRequired":
            problems.append(Problem(where, "a step of type workbook needs a task"))
        else:
            problems.append(Problem(where, err.message))
    return problems


def _materialized_turns(step: dict[str, Any], turns: list[str]) -> list[str]:
    """Turns a step stands for without ``turn:``: its name is ``mcp_<turn>`` (the seed's
    convention) or its task's templates read ``mcp.turns.<turn>``."""
    found = [t for t in turns if step["step"] == f"mcp_{t}"]
    task = step.get("task")
    if isinstance(task, dict):
        text = repr(task)
        found += [t for t in turns if re.search(
            rf"""mcp\.turns(?:\.{re.escape(t)}\b|\[['"]{re.escape(t)}['"]\])""",
            expand(text)) and t not in found]
    return found


def _graph_problems(doc: dict[str, Any], problems: list[Problem]) -> None:
    steps = doc.get("workflow") or []
    tasks = [t["name"] for t in doc.get("workbook") or []]
    turns = [t["name"] for t in (doc.get("mcp") or {}).get("turns") or []]
    index: dict[str, int] = {}
    for i, step in enumerate(steps):
        name = step["step"]
        if name in index:
            problems.append(Problem(join(join("workflow", i), "step"),
                                    f"duplicate step '{name}' (first at workflow[{index[name]}])"))
        else:
            index[name] = i
    if "start" not in index:
        problems.append(Problem("workflow", f"no step named 'start' (steps: "
                                            f"{', '.join(index) or 'none'})"))
    placed: dict[str, str] = {}
    edges: dict[str, list[str]] = {name: [] for name in index}
    for i, step in enumerate(steps):
        where = join("workflow", i)
        if isinstance(step.get("task"), dict):
            tool_spec_problems([step["task"]], join(where, "task"), problems, (), spec_path=False)
            for turn in _materialized_turns(step, turns):
                placed.setdefault(turn, step["step"])
        elif "task" in step and step["task"] not in tasks:
            problems.append(Problem(join(where, "task"), f"unknown task '{step['task']}' "
                                                         f"{defined(tasks)}"))
        if "turn" in step:
            if step["turn"] not in turns:
                problems.append(Problem(join(where, "turn"), f"unknown turn '{step['turn']}' "
                                                             f"{defined(turns)}"))
            elif step["turn"] in placed:
                problems.append(Problem(join(where, "turn"),
                                        f"turn '{step['turn']}' is already used by step "
                                        f"'{placed[step['turn']]}'"))
            else:
                placed[step["turn"]] = step["step"]
        template_problems(step.get("args"), join(where, "args"), problems)
        for j, target in enumerate(step.get("next") or []):
            name = target if isinstance(target, str) else target["step"]
            if isinstance(target, dict) and "when" in target:
                template_problems(target["when"], join(join(join(where, "next"), j), "when"),
                                  problems, ("result",))
            if name not in index:
                problems.append(Problem(join(join(where, "next"), j),
                                        f"unknown step '{name}' {defined(index)}"))
            elif step["step"] in edges:
                edges[step["step"]].append(name)
    for name in turns:
        if name not in placed:
            i = turns.index(name)
            problems.append(Problem(join("mcp.turns", i),
                                    f"turn '{name}' is not used by any workflow step "
                                    f"(add a step with 'turn: {name}', or a workbook step "
                                    f"'mcp_{name}')"))
    cycle = find_cycle(edges)
    if cycle:
        problems.append(Problem(join("workflow", index[cycle[0]]),
                                "cycle: " + " → ".join(cycle + [cycle[0]])))
    if "start" in index:
        reached, todo = {"start"}, ["start"]
        while todo:
            for nxt in edges.get(todo.pop(), []):
                if nxt not in reached:
                    reached.add(nxt)
                    todo.append(nxt)
        for name, i in index.items():
            if name not in reached:
                problems.append(Problem(join(join("workflow", i), "step"),
                                        f"step '{name}' is unreachable from start"))


def semantic_problems(doc: dict[str, Any]) -> list[Problem]:
    problems = mcp_problems(doc)
    mcp = doc.get("mcp") or {}
    declared_names(doc.get("workbook") or [], "workbook", "task", problems)
    tool_spec_problems(doc.get("workbook") or [], "workbook", problems, ("args",))
    if doc.get("workflow"):
        _graph_problems(doc, problems)
    elif not mcp.get("turns"):
        problems.append(Problem("workflow", "nothing to run: add workflow steps or mcp.turns"))
    return problems


def validate(doc: dict[str, Any]) -> list[Problem]:
    """All problems of a parsed document; an empty list means it compiles and can run."""
    if doc.get("apiVersion") in V2_VERSIONS:
        return validate_v2(doc)
    problems = schema_problems(doc)
    version = [p for p in problems if p.path == "apiVersion"]
    if version:
        return version  # the rest of a document of no version we know says little
    if problems:
        return problems  # semantic checks assume the shape is right
    return semantic_problems(doc)

"""Validation: the JSON Schema first, then what a schema cannot say.

Every problem names its path and, for a broken reference, what exists instead, e.g.
``mcp.turns[0].model: unknown model 'gpt-5' (defined: default)``. Checked: unresolved model,
tool, resource, prompt, task, turn and step references; duplicate names in a section;
``tools_allowed`` naming unknown tools; template syntax and unknown template names; missing
``start``; cycles; unreachable steps; turns no step uses; ``mcp.<section>.<name>`` and
``prompts.<name>`` references in templates that name nothing declared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from jinja2 import TemplateError, meta

from app.core import tool_catalog
from app.workflows.document import Problem, join
from app.workflows.schema import SCHEMA, V2_VERSIONS, task_spec
from app.workflows.templating import expand, parse, sql_template_problem

# Names a template may start from (``args`` only inside tools the model calls).
CONTEXT_NAMES = ("workload", "input", "steps", "resources", "turns", "run", "args", "result",
                 "secrets", "mcp", "prompts", "context")
MCP_SECTIONS = ("models", "tools", "resources", "prompts", "turns")
_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
_MCP_REF = re.compile(r"""(?<![\w.'"])mcp\.(\w+)(?:\.(\w+)|\[['"]([^'"]+)['"]\])?""")
_PROMPT_REF = re.compile(r"""(?<![\w.'"])prompts(?:\.(\w+)|\[['"]([^'"]+)['"]\])""")

_validator: Any = None


def _schema_validator() -> Any:
    global _validator
    if _validator is None:
        from jsonschema import Draft202012Validator

        _validator = Draft202012Validator(SCHEMA)
    return _validator


def _path_of(parts: Iterable[Any]) -> str:
    path = ""
    for part in parts:
        path = join(path, part)
    return path or "(document)"


def schema_problems(doc: dict[str, Any]) -> list[Problem]:
    problems = []
    for err in sorted(_schema_validator().iter_errors(doc), key=lambda e: list(map(str, e.path))):
        where = _path_of(err.path)
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else err.message
            present = ", ".join(sorted(err.instance)) if isinstance(err.instance, dict) else ""
            problems.append(Problem(join("" if where == "(document)" else where, missing),
                                    f"required (present: {present or 'nothing'})"))
        elif err.validator == "additionalProperties":
            allowed = ", ".join(err.schema.get("properties", {}))
            problems.append(Problem(where, f"{err.message} (allowed: {allowed})"))
        elif err.validator == "enum":
            allowed = ", ".join(map(str, err.validator_value))
            problems.append(Problem(where, f"{err.instance!r} is not one of: {allowed}"))
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


def _names(items: list[dict[str, Any]], base: str, what: str,
           problems: list[Problem]) -> dict[str, int]:
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        name: str = item["name"]  # the schema ran first: every item is named
        if name in seen:
            problems.append(Problem(join(join(base, i), "name"),
                                    f"duplicate {what} '{name}' (first at {base}[{seen[name]}])"))
        else:
            seen[name] = i
    return seen


def _defined(names: Iterable[str]) -> str:
    listed = ", ".join(names)
    return f"(defined: {listed})" if listed else "(none defined)"


def _templates(value: Any, where: str, problems: list[Problem], extra: tuple[str, ...] = ()
               ) -> None:
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return
        try:
            names = meta.find_undeclared_variables(parse(value))
        except TemplateError as exc:
            problems.append(Problem(where, f"template syntax error: {exc}"))
            return
        allowed = {n for n in CONTEXT_NAMES if n not in ("args", "result")} | set(extra)
        for name in sorted(names - allowed):
            problems.append(Problem(where, f"unknown name '{name}' in template "
                                           f"(available: {', '.join(sorted(allowed))})"))
    elif isinstance(value, dict):
        for key, item in value.items():
            _templates(item, join(where, str(key)), problems, extra)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _templates(item, join(where, i), problems, extra)


def _mcp_tool_names() -> list[str] | None:
    """Our registered MCP tools, or None when the registry is not loaded (no check then)."""
    return tool_catalog.tool_names() or None


def _references(value: Any, where: str, declared: dict[str, dict[str, int]],
                problems: list[Problem]) -> None:
    """``mcp.<section>.<name>`` and ``prompts.<name>`` in templates must name declarations."""
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return
        for tag in _TAG.findall(expand(value)):
            for match in _MCP_REF.finditer(tag):
                section, name = match.group(1), match.group(2) or match.group(3)
                if section not in MCP_SECTIONS:
                    problems.append(Problem(where, f"unknown section 'mcp.{section}' "
                                                   f"(sections: {', '.join(MCP_SECTIONS)})"))
                elif name and name not in declared[section]:
                    problems.append(Problem(where, f"unknown {section[:-1]} '{name}' in "
                                                   f"mcp.{section} {_defined(declared[section])}"))
            for match in _PROMPT_REF.finditer(tag):
                name = match.group(1) or match.group(2)
                if name not in declared["prompts"]:
                    problems.append(Problem(where, f"unknown prompt '{name}' "
                                                   f"{_defined(declared['prompts'])}"))
    elif isinstance(value, dict):
        for key, item in value.items():
            _references(item, join(where, str(key)), declared, problems)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _references(item, join(where, i), declared, problems)


REQUIRED_SPEC = {"mcp": ("tool",), "page": ("path",), "http": ("url",), "rpc": ("method",),
                 "sql": ("query",), "postgres": ("dsn", "sql"), "duckdb": ("sql",),
                 "python": ("function",)}
_PYTHON_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")


def _tool_specs(items: list[dict[str, Any]], base: str, problems: list[Problem],
                extra: tuple[str, ...], spec_path: bool = True) -> None:
    known = _mcp_tool_names()
    for i, item in enumerate(items):
        where = join(base, i) if spec_path else base
        if "spec" in item:
            where = join(where, "spec")
        spec = task_spec(item)
        missing = [key for key in REQUIRED_SPEC[item["type"]] if key not in spec]
        for key in missing:
            problems.append(Problem(join(where, key),
                                    f"required for type {item['type']} "
                                    f"(present: {', '.join(spec) or 'nothing'})"))
        key = REQUIRED_SPEC[item["type"]][0]
        if item["type"] == "mcp" and key in spec and known is not None \
                and spec[key] not in known:
            problems.append(Problem(join(where, key), f"unknown MCP tool '{spec[key]}' "
                                                      f"{_defined(known)}"))
        if item["type"] in ("postgres", "duckdb") and "sql" in spec:
            sql = str(spec["sql"])
            head = sql.lstrip().lower()
            if not (head.startswith("select") or head.startswith("with")):
                problems.append(Problem(join(where, "sql"), "only SELECT queries are allowed"))
            problem = sql_template_problem(sql)
            if problem:
                problems.append(Problem(join(where, "sql"), problem))
        if item["type"] == "python" and "function" in spec and not (
                isinstance(spec["function"], str) and _PYTHON_FUNCTION.match(spec["function"])):
            problems.append(Problem(join(where, "function"),
                                    "a registered function's name, or module:function"))
        if item["type"] == "sql" and "query" in spec:
            query = str(spec["query"]).lstrip().lower()
            if not (query.startswith("select") or query.startswith("with")):
                problems.append(Problem(join(where, "query"), "only SELECT queries are allowed"))
            if "{{" in str(spec["query"]):
                problems.append(Problem(join(where, "query"),
                                        "no templates in SQL: use :name placeholders and "
                                        "spec.params"))
        _templates(spec, where, problems, extra)


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
            _tool_specs([step["task"]], join(where, "task"), problems, (), spec_path=False)
            for turn in _materialized_turns(step, turns):
                placed.setdefault(turn, step["step"])
        elif "task" in step and step["task"] not in tasks:
            problems.append(Problem(join(where, "task"), f"unknown task '{step['task']}' "
                                                         f"{_defined(tasks)}"))
        if "turn" in step:
            if step["turn"] not in turns:
                problems.append(Problem(join(where, "turn"), f"unknown turn '{step['turn']}' "
                                                             f"{_defined(turns)}"))
            elif step["turn"] in placed:
                problems.append(Problem(join(where, "turn"),
                                        f"turn '{step['turn']}' is already used by step "
                                        f"'{placed[step['turn']]}'"))
            else:
                placed[step["turn"]] = step["step"]
        _templates(step.get("args"), join(where, "args"), problems)
        for j, target in enumerate(step.get("next") or []):
            name = target if isinstance(target, str) else target["step"]
            if isinstance(target, dict) and "when" in target:
                _templates(target["when"], join(join(join(where, "next"), j), "when"), problems,
                           ("result",))
            if name not in index:
                problems.append(Problem(join(join(where, "next"), j),
                                        f"unknown step '{name}' {_defined(index)}"))
            elif step["step"] in edges:
                edges[step["step"]].append(name)
    for name in turns:
        if name not in placed:
            i = turns.index(name)
            problems.append(Problem(join("mcp.turns", i),
                                    f"turn '{name}' is not used by any workflow step "
                                    f"(add a step with 'turn: {name}', or a workbook step "
                                    f"'mcp_{name}')"))
    cycle = _find_cycle(edges)
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


def _find_cycle(edges: dict[str, list[str]]) -> list[str] | None:
    color: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        color[node] = 1
        stack.append(node)
        for nxt in edges.get(node, []):
            if color.get(nxt) == 1:
                return stack[stack.index(nxt):]
            if color.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        color[node] = 2
        return None

    for node in edges:
        if color.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def semantic_problems(doc: dict[str, Any]) -> list[Problem]:
    problems = mcp_problems(doc)
    mcp = doc.get("mcp") or {}
    _names(doc.get("workbook") or [], "workbook", "task", problems)
    _tool_specs(doc.get("workbook") or [], "workbook", problems, ("args",))
    if doc.get("workflow"):
        _graph_problems(doc, problems)
    elif not mcp.get("turns"):
        problems.append(Problem("workflow", "nothing to run: add workflow steps or mcp.turns"))
    return problems


def mcp_problems(doc: dict[str, Any]) -> list[Problem]:
    """The problems of a document's ``mcp`` section, and of the references to it anywhere."""
    problems: list[Problem] = []
    mcp = doc.get("mcp") or {}
    models = _names(mcp.get("models") or [], "mcp.models", "model", problems)
    tools = _names(mcp.get("tools") or [], "mcp.tools", "tool", problems)
    resources = _names(mcp.get("resources") or [], "mcp.resources", "resource", problems)
    prompts = _names(mcp.get("prompts") or [], "mcp.prompts", "prompt", problems)
    turns = _names(mcp.get("turns") or [], "mcp.turns", "turn", problems)
    _tool_specs(mcp.get("tools") or [], "mcp.tools", problems, ("args",))
    _tool_specs(mcp.get("resources") or [], "mcp.resources", problems, ())
    _references(doc, "", {"models": models, "tools": tools, "resources": resources,
                          "prompts": prompts, "turns": turns}, problems)
    for i, prompt in enumerate(mcp.get("prompts") or []):
        _templates(prompt["template"], join(join("mcp.prompts", i), "template"), problems,
                   ("args",))
    for i, turn in enumerate(mcp.get("turns") or []):
        where = join("mcp.turns", i)
        if turn["model"] not in models:
            problems.append(Problem(join(where, "model"), f"unknown model '{turn['model']}' "
                                                          f"{_defined(models)}"))
        for j, tool in enumerate(turn.get("tools_allowed") or []):
            if tool not in tools:
                problems.append(Problem(join(join(where, "tools_allowed"), j),
                                        f"unknown tool '{tool}' {_defined(tools)}"))
        _templates(turn.get("system"), join(where, "system"), problems)
        for j, part in enumerate(turn["user"]):
            part_where = join(join(where, "user"), j)
            if "text" in part:
                _templates(part["text"], join(part_where, "text"), problems)
            if "use" in part:
                kind, _, name = part["use"].partition(":")
                table = {"resource": resources, "prompt": prompts}[kind]
                if name not in table:
                    problems.append(Problem(join(part_where, "use"),
                                            f"unknown {kind} '{name}' {_defined(table)}"))
                _templates(part.get("with"), join(part_where, "with"), problems)
    return problems


def validate(doc: dict[str, Any]) -> list[Problem]:
    """All problems of a parsed document; an empty list means it compiles and can run."""
    if doc.get("apiVersion") in V2_VERSIONS:
        from app.workflows.v2.validate import validate_v2

        return validate_v2(doc)
    problems = schema_problems(doc)
    version = [p for p in problems if p.path == "apiVersion"]
    if version:
        return version  # the rest of a document of no version we know says little
    if problems:
        return problems  # semantic checks assume the shape is right
    return semantic_problems(doc)

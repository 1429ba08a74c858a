"""The checks both DSLs share: a document's ``mcp`` section and every reference to it
(``mcp_problems``), names declared once (``declared_names``), templates that read only names a
run has (``template_problems``), tool specs (``tool_spec_problems``) and a cycle in a step graph
(``find_cycle``). ``validate`` (the first DSL) and ``v2.validate`` (``noetl.io/v2``) both build
on them, so neither imports the other's checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from jinja2 import TemplateError, meta

from app.core import tool_catalog
from app.workflows.document import Problem, join
from app.workflows.schema import task_spec
from app.workflows.templating import TAG, expand, parse, sql_template_problem, strings_at

# Names a template may start from (``args`` only inside tools the model calls).
CONTEXT_NAMES = ("workload", "input", "steps", "resources", "turns", "run", "args", "result",
                 "secrets", "mcp", "prompts", "context")
MCP_SECTIONS = ("models", "tools", "resources", "prompts", "turns")
_MCP_REF = re.compile(r"""(?<![\w.'"])mcp\.(\w+)(?:\.(\w+)|\[['"]([^'"]+)['"]\])?""")
_PROMPT_REF = re.compile(r"""(?<![\w.'"])prompts(?:\.(\w+)|\[['"]([^'"]+)['"]\])""")

def declared_names(items: list[dict[str, Any]], base: str, what: str,
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


def path_of(parts: Iterable[Any]) -> str:
    """A JSON Schema error's path as problems name it (``workflow[2].next``)."""
    path = ""
    for part in parts:
        path = join(path, part)
    return path or "(document)"


def sorted_errors(validator: Any, doc: dict[str, Any]) -> list[Any]:
    """A document's schema errors in the order of their paths (problems read top to bottom)."""
    return sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.path)))


def shared_schema_problem(err: Any, where: str) -> Problem | None:
    """The words for a schema error both document forms say alike (a missing key, a value
    outside its enum); None for the others, which each form words itself."""
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        present = ", ".join(sorted(err.instance)) if isinstance(err.instance, dict) else ""
        return Problem(join("" if where == "(document)" else where, missing),
                       f"required (present: {present or 'nothing'})")
    if err.validator == "enum":
        allowed = ", ".join(map(str, err.validator_value))
        return Problem(where, f"{err.instance!r} is not one of: {allowed}")
    return None


def defined(names: Iterable[str]) -> str:
    listed = ", ".join(names)
    return f"(defined: {listed})" if listed else "(none defined)"


def templates_at(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """The templates among a value's strings (those with a tag), each with its path."""
    return ((at, text) for at, text in strings_at(value, where)
            if "{{" in text or "{%" in text)


def template_problems(value: Any, where: str, problems: list[Problem],
                      extra: tuple[str, ...] = ()) -> None:
    allowed = {n for n in CONTEXT_NAMES if n not in ("args", "result")} | set(extra)
    for at, template in templates_at(value, where):
        try:
            names = meta.find_undeclared_variables(parse(template))
        except TemplateError as exc:
            problems.append(Problem(at, f"template syntax error: {exc}"))
            continue
        for name in sorted(names - allowed):
            problems.append(Problem(at, f"unknown name '{name}' in template "
                                        f"(available: {', '.join(sorted(allowed))})"))


def mcp_tool_names() -> list[str] | None:
    """Our registered MCP tools, or None when the registry is not loaded (no check then)."""
    return tool_catalog.tool_names() or None


def reference_problems(value: Any, where: str, declared: dict[str, dict[str, int]],
                       problems: list[Problem]) -> None:
    """``mcp.<section>.<name>`` and ``prompts.<name>`` in templates must name declarations."""
    for at, template in templates_at(value, where):
        for tag in TAG.findall(expand(template)):
            for match in _MCP_REF.finditer(tag):
                section, name = match.group(1), match.group(2) or match.group(3)
                if section not in MCP_SECTIONS:
                    problems.append(Problem(at, f"unknown section 'mcp.{section}' "
                                                f"(sections: {', '.join(MCP_SECTIONS)})"))
                elif name and name not in declared[section]:
                    problems.append(Problem(at, f"unknown {section[:-1]} '{name}' in "
                                                f"mcp.{section} {defined(declared[section])}"))
            for match in _PROMPT_REF.finditer(tag):
                name = match.group(1) or match.group(2)
                if name not in declared["prompts"]:
                    problems.append(Problem(at, f"unknown prompt '{name}' "
                                                f"{defined(declared['prompts'])}"))


REQUIRED_SPEC = {"mcp": ("tool",), "page": ("path",), "http": ("url",), "rpc": ("method",),
                 "sql": ("query",), "postgres": ("dsn", "sql"), "duckdb": ("sql",),
                 "python": ("function",)}
_PYTHON_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")


def tool_spec_problems(items: list[dict[str, Any]], base: str, problems: list[Problem],
                       extra: tuple[str, ...], spec_path: bool = True) -> None:
    known = mcp_tool_names()
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
                                                      f"{defined(known)}"))
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
        template_problems(spec, where, problems, extra)


def mcp_problems(doc: dict[str, Any]) -> list[Problem]:
    """The problems of a document's ``mcp`` section, and of the references to it anywhere."""
    problems: list[Problem] = []
    mcp = doc.get("mcp") or {}
    models = declared_names(mcp.get("models") or [], "mcp.models", "model", problems)
    tools = declared_names(mcp.get("tools") or [], "mcp.tools", "tool", problems)
    resources = declared_names(mcp.get("resources") or [], "mcp.resources", "resource", problems)
    prompts = declared_names(mcp.get("prompts") or [], "mcp.prompts", "prompt", problems)
    turns = declared_names(mcp.get("turns") or [], "mcp.turns", "turn", problems)
    tool_spec_problems(mcp.get("tools") or [], "mcp.tools", problems, ("args",))
    tool_spec_problems(mcp.get("resources") or [], "mcp.resources", problems, ())
    reference_problems(doc, "", {"models": models, "tools": tools, "resources": resources,
                                 "prompts": prompts, "turns": turns}, problems)
    for i, prompt in enumerate(mcp.get("prompts") or []):
        template_problems(prompt["template"], join(join("mcp.prompts", i), "template"),
                          problems, ("args",))
    for i, turn in enumerate(mcp.get("turns") or []):
        where = join("mcp.turns", i)
        if turn["model"] not in models:
            problems.append(Problem(join(where, "model"), f"unknown model '{turn['model']}' "
                                                          f"{defined(models)}"))
        for j, tool in enumerate(turn.get("tools_allowed") or []):
            if tool not in tools:
                problems.append(Problem(join(join(where, "tools_allowed"), j),
                                        f"unknown tool '{tool}' {defined(tools)}"))
        template_problems(turn.get("system"), join(where, "system"), problems)
        for j, part in enumerate(turn["user"]):
            part_where = join(join(where, "user"), j)
            if "text" in part:
                template_problems(part["text"], join(part_where, "text"), problems)
            if "use" in part:
                kind, _, name = part["use"].partition(":")
                table = {"resource": resources, "prompt": prompts}[kind]
                if name not in table:
                    problems.append(Problem(join(part_where, "use"),
                                            f"unknown {kind} '{name}' {defined(table)}"))
                template_problems(part.get("with"), join(part_where, "with"), problems)
    return problems


def find_cycle(edges: dict[str, list[str]]) -> list[str] | None:
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

"""Templates in playbooks: Jinja2's sandbox, undefined names are errors, values keep types.

``render_value`` walks dicts and lists; a string that is exactly one ``{{ expr }}`` yields the
expression's value (a list stays a list), anything else renders to text.

Declared names may hold a hyphen (``gpt-4o``), which Jinja would read as a subtraction: inside
tags, ``mcp.<section>.<name-with-hyphen>`` and ``prompts.<name-with-hyphen>`` are rewritten to
subscripts (``mcp.models['gpt-4o']``) before parsing; likewise a bare key in a dict literal
(``{ input: context.input }``) is a string key, as in YAML, not a variable.

The ``render`` filter renders a prompt template (a string, or structured messages) with the
variables it is given and nothing else.
``bind_sql`` turns the templates of a SQL statement into bound parameters: their values are
never pasted into the statement's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from jinja2 import StrictUndefined, TemplateError, Undefined, nodes
from jinja2.sandbox import SandboxedEnvironment

from app.workflows.document import join


class ResultEnvironment(SandboxedEnvironment):
    """The sandbox as NoETL's templates read results (``noetl.io/v2`` documents): a dict's key
    wins over a dict method of the same name (``row.items``, ``page.keys``); ``.data`` of a
    dict without a ``data`` key is the dict itself (a step's result read as its envelope's
    data); and a key missing from a dict that holds a ``data`` dict is read there (an outcome
    ``{status, data}`` read as its data)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, dict):
            if attribute in obj:
                return obj[attribute]
            if attribute == "data":
                return obj
            inner = obj.get("data")
            if isinstance(inner, dict) and attribute in inner:
                return inner[attribute]
        return super().getattr(obj, attribute)


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
_ENV.filters["tojson"] = _tojson
RESULTS_ENV = ResultEnvironment(undefined=StrictUndefined, autoescape=False)
RESULTS_ENV.filters["tojson"] = _tojson
SINGLE = re.compile(r"^\s*\{\{(.*)\}\}\s*$", re.S)
TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
# ``{ input: context.input }``: a bare key in a dict literal is a name, as in YAML or JavaScript.
_BARE_KEY = re.compile(r"(?<!\{)([{,]\s*)([A-Za-z_]\w*)(\s*:(?!:))")
_HYPHENATED = re.compile(r"(?<![\w.'\"\]])(mcp\.[A-Za-z_]\w*|prompts)\.([A-Za-z_]\w*(?:-\w+)+)")


class RenderError(Exception):
    """A template failed: an undefined name, a syntax error, or a sandbox refusal."""


def _subscripts(code: str) -> str:
    code = _HYPHENATED.sub(lambda m: f"{m.group(1)}['{m.group(2)}']", code)
    return _BARE_KEY.sub(lambda m: f"{m.group(1)}'{m.group(2)}'{m.group(3)}", code)


def expand(template: str) -> str:
    """``template`` with hyphenated declared names turned into subscripts, inside tags only."""
    if "{" not in template:
        return template
    return TAG.sub(lambda m: _subscripts(m.group(0)), template)


def parse(template: str, env: SandboxedEnvironment = _ENV) -> Any:
    """The Jinja AST of a template (validation reads its names); TemplateError if broken."""
    return env.parse(expand(template))


def _render_filter(template: Any, variables: Any = None) -> Any:
    """``prompts.<p>.template | render({...})``: the prompt rendered with those variables only."""
    scope = dict(variables) if isinstance(variables, dict) else {}
    if isinstance(template, str):
        return render_text(template, scope)
    if isinstance(template, list):  # structured messages: each content renders
        return [{**m, "content": render_value(m.get("content"), scope)}
                if isinstance(m, dict) else m for m in template]
    raise RenderError("render: a prompt template is a string or a list of messages")


_ENV.filters["render"] = _render_filter
RESULTS_ENV.filters["render"] = _render_filter


def render_text(template: str, context: dict[str, Any],
                env: SandboxedEnvironment = _ENV) -> str:
    try:
        return env.from_string(expand(template)).render(context)
    except TemplateError as exc:
        raise RenderError(f"template {template!r}: {exc}") from None


def evaluate(expression: str, context: dict[str, Any],
             env: SandboxedEnvironment = _ENV) -> Any:
    try:
        result = env.compile_expression(_subscripts(expression),
                                        undefined_to_none=False)(context)
    except TemplateError as exc:
        raise RenderError(f"expression {expression!r}: {exc}") from None
    if isinstance(result, Undefined):
        try:
            str(result)  # StrictUndefined raises here, naming what is missing
        except TemplateError as exc:
            raise RenderError(f"expression {expression!r}: {exc}") from None
    return result


def render_value(value: Any, context: dict[str, Any],
                 env: SandboxedEnvironment = _ENV) -> Any:
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return value
        single = SINGLE.match(value)
        if single and "}}" not in single.group(1) and "{{" not in single.group(1):
            return evaluate(single.group(1).strip(), context, env)
        return render_text(value, context, env)
    if isinstance(value, dict):
        return {k: render_value(v, context, env) for k, v in value.items()}
    if isinstance(value, list):
        return [render_value(v, context, env) for v in value]
    return value


def render_url(template: str, context: dict[str, Any],
               env: SandboxedEnvironment = _ENV) -> str:
    """An http tool's URL: a template that starts the URL (a base URL such as
    ``{{ secrets.llm_gateway }}``) is pasted as it is; every other value is percent-encoded, so
    ``?q={{ input.query }}`` with "a&b=c" stays one query value instead of adding a parameter."""
    if "{%" in template:
        return render_text(template, context, env)  # blocks: no value-by-value encoding

    def one(match: re.Match[str]) -> str:
        value = evaluate(match.group(1).strip(), context, env)
        text = "" if value is None else str(value)
        return text if match.start() == 0 else quote(text, safe="")

    return _SQL_TEMPLATE.sub(one, template)


def truthy(when: str | bool, context: dict[str, Any],
           env: SandboxedEnvironment = _ENV) -> bool:
    """A ``when`` condition: a bare expression or one wrapped in ``{{ }}`` (or YAML's own
    true or false)."""
    if isinstance(when, bool):
        return when
    single = SINGLE.match(when)
    expression = single.group(1).strip() if single else when
    value = evaluate(expression, context, env)
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "none")
    return bool(value)


_SQL_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)


def sql_template_problem(sql: str) -> str | None:
    """Why the templates of ``sql`` cannot become bound parameters, or None."""
    if "{%" in sql:
        return "no {% %} blocks in SQL: only {{ expression }} values, which become parameters"
    for match in _SQL_TEMPLATE.finditer(sql):
        # An odd number of quotes before it: the template sits inside a string literal.
        before = sql[:match.start()]
        if before.count("'") % 2 or before.count('"') % 2:
            return ("write {{ … }} outside quotes in SQL: it becomes a bound parameter, "
                    "not text pasted into a string")
    return None


def bind_sql(sql: str, context: dict[str, Any], style: str = ":") -> tuple[str, dict[str, Any]]:
    """``sql`` with each ``{{ expr }}`` replaced by a placeholder (``:p0`` or ``$p0``) and the
    values of those expressions as parameters; RenderError if a template cannot be bound."""
    problem = sql_template_problem(sql)
    if problem:
        raise RenderError(problem)
    params: dict[str, Any] = {}

    def placeholder(match: re.Match[str]) -> str:
        name = f"p{len(params)}"
        params[name] = evaluate(match.group(1).strip(), context)
        return f"{style}{name}"

    return _SQL_TEMPLATE.sub(placeholder, sql), params


def keys_read(template: str, roots: tuple[str, ...]) -> set[str]:
    """The keys a template reads from any of ``roots`` (``input.topic``, ``workload['topic']``,
    ``context.input.topic``): the names a workflow expects its workload to hold."""
    if "{{" not in template and "{%" not in template:
        return set()
    try:
        tree = parse(template)
    except TemplateError:
        return set()  # validation reports the syntax error
    found: set[str] = set()

    def is_root(node: nodes.Node) -> bool:
        if isinstance(node, nodes.Name):
            return node.name in roots
        # context.input / context.workload: NoETL's spelling of the same thing
        return (isinstance(node, nodes.Getattr) and node.attr in roots
                and isinstance(node.node, nodes.Name) and node.node.name == "context")

    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        if not is_root(node.node):
            continue
        if isinstance(node, nodes.Getattr):
            found.add(node.attr)
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            found.add(node.arg.value)
    return found


def strings_at(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a value (dict values, list items), in order, with its path under
    ``where``: a document's templates."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_at(item, join(where, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from strings_at(item, join(where, i))

"""SQL statements of ``postgres`` and ``duckdb`` tasks: rendered as NoETL renders them, except
what a run was given, which goes in as data.

A workflow file is code its operator installed: its SQL templates render to text, so a step
may build a statement that a later step runs (NoETL's own fixtures do). A value given when a
run starts (by a person, an agent or an automation) is data: wherever a template of the SQL
puts text that came from it, the text goes in as a quoted literal (inside quotes the template
already wrote, it is escaped as a literal's content), whatever filters or concatenations made
it. Numbers and booleans go in as they are (they cannot change a statement). An input the
workflow lists in ``sql_inputs`` is SQL by its own declaration (only an admin may set it): it
goes in as written.

How a value is known to come from what was given: the statement renders twice, once as it
is and once with every given string changed (each character followed by an invisible mark).
An ``{{ … }}`` whose text differs between the two depends on given text. Should the two
renders differ in anything else (a ``{% if %}`` deciding on a given value), the step fails
rather than guess; such a workflow compares the value in SQL, or declares the input as SQL.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jinja2 import TemplateError, meta, pass_context
from jinja2.runtime import Context

from app.workflows.templating import RESULTS_ENV, RenderError, ResultEnvironment, expand

MARK = "\u2063"  # INVISIBLE SEPARATOR: what a given string's characters are followed by
_SLOT = re.compile("\x00(\\d+)\x00")
_CHUNKS = "__sql_chunks__"


@pass_context
def _collect(context: Context, value: Any) -> str:
    """Each ``{{ … }}`` of a statement: its value is kept, a numbered slot takes its place."""
    chunks = context.get(_CHUNKS)
    if chunks is None:  # not a statement being rendered: as Jinja would
        return str(value)
    chunks.append(value)
    return f"\x00{len(chunks) - 1}\x00"


_SQL_ENV = ResultEnvironment(undefined=RESULTS_ENV.undefined, autoescape=False,
                             finalize=_collect)
_SQL_ENV.filters.update(RESULTS_ENV.filters)


def _marked(text: str) -> str:
    return "".join(char + MARK for char in text) or MARK


def _changed(value: Any, given: frozenset[str]) -> Any:
    """``value`` with every given string marked (dicts keep their keys, lists their order)."""
    if isinstance(value, str):
        return _marked(value) if value in given else value
    if isinstance(value, dict):
        return {k: _changed(v, given) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_changed(v, given) for v in value]
    return value


def _render(template: str, scope: dict[str, Any]) -> tuple[str, list[Any]]:
    chunks: list[Any] = []
    try:
        text = _SQL_ENV.from_string(expand(template)).render({**scope, _CHUNKS: chunks})
    except TemplateError as exc:
        raise RenderError(f"template {template!r}: {exc}") from None
    return text, chunks


def literal(value: Any, inside_quotes: bool) -> str:
    """``value`` as SQL text that can only be data: a string literal (or its content, where
    the statement's own quotes surround it); numbers and booleans as written; null."""
    if value is None:
        return "" if inside_quotes else "NULL"
    if isinstance(value, bool):
        return str(value).lower() if inside_quotes else ("TRUE" if value else "FALSE")
    if isinstance(value, int | float):
        return repr(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    escaped = text.replace("'", "''")
    return escaped if inside_quotes else f"'{escaped}'"


# What SQL text is made of, to know where its end stands: whole literals, quoted identifiers,
# dollar quotes and comments, or the start of one that is not closed yet (groups 2 to 6).
_SCAN = re.compile(
    r"'(?:''|[^'])*'|\"(?:\"\"|[^\"])*\"|\$([A-Za-z0-9_]*)\$.*?\$\1\$|--[^\n]*\n|/\*.*?\*/"
    r"|(')|(\")|(\$[A-Za-z0-9_]*\$)|(--)|(/\*)|[^'\"$/-]+|.", re.DOTALL)


def _inside_literal(text: str) -> bool:
    """Whether the end of ``text`` is inside a string literal (True) or in plain SQL (False);
    RenderError when it is inside a quoted identifier, a dollar quote or a comment, where a
    given value has no safe form."""
    for match in _SCAN.finditer(text):
        if match.group(2):
            return True  # a quote that no later quote closes
        if any(match.group(i) for i in (3, 4, 5, 6)):
            raise RenderError("a value given when the run started may not go into a quoted "
                              "identifier, a dollar-quoted string or a comment of SQL")
    return False


def render_sql(template: str, scope: dict[str, Any], given: frozenset[str]) -> str:
    """The statement text of ``template`` in ``scope``, given text as literals (see above)."""
    if "{{" not in template and "{%" not in template:
        return template
    text, chunks = _render(template, scope)
    if given:
        try:
            names = meta.find_undeclared_variables(_SQL_ENV.parse(expand(template)))
        except TemplateError as exc:
            raise RenderError(f"template {template!r}: {exc}") from None
        altered = {**scope, **{n: _changed(scope[n], given) for n in names if n in scope}}
        other_text, other_chunks = _render(template, altered)
        if other_text != text or len(other_chunks) != len(chunks):
            raise RenderError("a value given when the run started decides the shape of this "
                              "SQL ({% if %} or {% for %} on it): compare it in SQL instead, "
                              "or list the input in the workflow's sql_inputs")
        tainted = {i for i, (a, b) in enumerate(zip(chunks, other_chunks, strict=True))
                   if a != b and not isinstance(a, bool | int | float)}
    else:
        tainted = set()
    out: list[str] = []
    at = 0
    for match in _SLOT.finditer(text):
        out.append(text[at:match.start()])
        index = int(match.group(1))
        value = chunks[index]
        if index in tainted:
            out.append(literal(value, _inside_literal("".join(out))))
        else:
            out.append(str(value))
        at = match.end()
    out.append(text[at:])
    return "".join(out)


_STATEMENT_PARTS = re.compile(
    r"('(?:''|[^'])*')"            # a string literal
    r'|("(?:""|[^"])*")'           # a quoted identifier
    r"|(\$([A-Za-z0-9_]*)\$.*?\$\4\$)"  # a dollar-quoted body
    r"|(--[^\n]*)"                 # a line comment
    r"|(/\*.*?\*/)"                # a block comment
    r"|(;)"                        # the end of a statement
    r"|([^;'\"$/-]+|.)",           # anything else
    re.DOTALL)


def statements(text: str) -> list[str]:
    """The statements of a script, split at semicolons outside literals, quoted identifiers,
    dollar quotes and comments (comments dropped)."""
    found: list[str] = []
    current: list[str] = []
    for match in _STATEMENT_PARTS.finditer(text):
        if match.group(7):
            statement = "".join(current).strip()
            if statement:
                found.append(statement)
            current = []
        elif match.group(5) or match.group(6):
            current.append(" ")
        else:
            current.append(match.group(0))
    statement = "".join(current).strip()
    if statement:
        found.append(statement)
    return found

"""Templates in playbooks: Jinja2's sandbox, undefined names are errors, values keep types.

``render_value`` walks dicts and lists; a string that is exactly one ``{{ expr }}`` yields the
expression's value (a list stays a list), anything else renders to text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jinja2 import StrictUndefined, TemplateError, Undefined
from jinja2.sandbox import SandboxedEnvironment

_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
_ENV.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False, default=str)
SINGLE = re.compile(r"^\s*\{\{(.*)\}\}\s*$", re.S)


class RenderError(Exception):
    """A template failed: an undefined name, a syntax error, or a sandbox refusal."""


def render_text(template: str, context: dict[str, Any]) -> str:
    try:
        return _ENV.from_string(template).render(context)
    except TemplateError as exc:
        raise RenderError(f"template {template!r}: {exc}") from None


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    try:
        result = _ENV.compile_expression(expression, undefined_to_none=False)(context)
    except TemplateError as exc:
        raise RenderError(f"expression {expression!r}: {exc}") from None
    if isinstance(result, Undefined):
        try:
            str(result)  # StrictUndefined raises here, naming what is missing
        except TemplateError as exc:
            raise RenderError(f"expression {expression!r}: {exc}") from None
    return result


def render_value(value: Any, context: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return value
        single = SINGLE.match(value)
        if single and "}}" not in single.group(1) and "{{" not in single.group(1):
            return evaluate(single.group(1).strip(), context)
        return render_text(value, context)
    if isinstance(value, dict):
        return {k: render_value(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [render_value(v, context) for v in value]
    return value


def truthy(when: str, context: dict[str, Any]) -> bool:
    """A ``when`` condition: a bare expression or one wrapped in ``{{ }}``."""
    single = SINGLE.match(when)
    expression = single.group(1).strip() if single else when
    value = evaluate(expression, context)
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "none")
    return bool(value)

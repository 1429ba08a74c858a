"""Apply a list of modification operations to DSL text, in order, each with its own result.

Every operation is checked against its parameter schema, applied as span edits to the current
text and the result is analysed again. An operation that fails — bad parameters, unknown room,
or an edit that would add validation errors the plan did not have — changes nothing. The final
text is validated, and its remaining errors are reported with ``operation: null``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import jsonschema

from .edit_context import Context, OperationError
from .language import Language, default_language
from .operations import find_operation
from .validate import Analysis, analyze


def modify(text: str, operations: list[Any], language: Language | None = None) -> dict[str, Any]:
    language = language or default_language()
    analysis = analyze(text, language)
    if analysis.plan is None:
        return {"success": False, "dsl": text, "changes": [],
                "errors": [{**e.to_dict(), "operation": None} for e in analysis.errors]}
    current = text
    changes: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for index, op in enumerate(operations):
        action, target, outcome = _apply_one(current, analysis, op, language)
        if isinstance(outcome, str):
            changes.append({"action": action, "target": target, "result": "error",
                            "message": outcome})
            errors.append({"message": outcome, "operation": index})
            continue
        current, analysis, message = outcome
        changes.append({"action": action, "target": target, "result": "applied",
                        "message": message})
    for diag in analysis.errors:
        errors.append({**diag.to_dict(), "operation": None})
    result: dict[str, Any] = {"success": not errors, "dsl": current, "changes": changes}
    if errors:
        result["errors"] = errors
    if analysis.warnings:
        result["warnings"] = [w.to_dict() for w in analysis.warnings]
    return result


def _apply_one(text: str, analysis: Analysis, op: Any, language: Language
               ) -> tuple[str, str, tuple[str, Analysis, str] | str]:
    if not isinstance(op, dict):
        return "unknown", "unknown", "Each operation must be an object with an 'action'"
    action = op.get("action")
    given = op.get("params")
    params = given if given is not None else {}
    target = op.get("target")
    label = _target_label(target, params)
    definition = find_operation(action) if isinstance(action, str) else None
    if definition is None:
        return str(action), label, f"Unknown action {action!r}"
    if definition.takes_target and not isinstance(target, str):
        return definition.name, label, f"Action {definition.name} needs a 'target' room name"
    schema = definition.params(language.vocabulary)
    problem = _schema_problem(params, schema)
    if problem:
        return definition.name, label, f"Invalid params for {definition.name}: {problem}"
    ctx = Context(text, analysis, language)
    try:
        new_text, message = definition.handler(ctx, target, params)
    except OperationError as exc:
        return definition.name, label, str(exc)
    after = analyze(new_text, language)
    if after.plan is None:
        first = after.errors[0]
        return definition.name, label, (f"The edit would produce invalid DSL at line "
                                        f"{first.line}: {first.message}")
    added = Counter(d.type for d in after.errors) - Counter(d.type for d in analysis.errors)
    if added:
        new = [d.message for d in after.errors if d.type in added]
        return definition.name, label, f"Not applied: it would introduce {'; '.join(new)}"
    return definition.name, label, (new_text, after, message)


def _target_label(target: Any, params: Any) -> str:
    """What ``changes[].target`` shows: the target, else the room the params name."""
    if isinstance(target, str):
        return target
    if not isinstance(params, dict):
        return "unknown"
    for key in ("name", "anchorRoom"):
        if isinstance(params.get(key), str):
            return params[key]
    ends = [params.get(k) for k in ("from", "to")]
    ends = [e.get("room") if isinstance(e, dict) else e for e in ends]
    if all(isinstance(e, str) for e in ends):
        return f"{ends[0]} -> {ends[1]}"
    return "unknown"


def _schema_problem(params: Any, schema: dict[str, Any]) -> str | None:
    validator = jsonschema.Draft202012Validator(schema)
    problems = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
    if not problems:
        return None
    first = problems[0]
    where = ".".join(str(p) for p in first.absolute_path)
    return f"{where + ': ' if where else ''}{first.message}"

"""The JSON Schema of a workflow document (the shape; ``validate`` adds the meaning).

Published at /workflows/schema.json so editors can check playbooks as they are typed.
"""

from __future__ import annotations

from typing import Any

# NoETL's current DSL (``app.workflows.v2``); v10 is NoETL's other name for the same shape.
V2_VERSIONS = ("noetl.io/v2", "noetl.io/v10")
TOOL_TYPES = ("mcp", "page", "http", "rpc", "sql", "postgres", "duckdb", "python")
STEP_TYPES = ("workbook",)
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$"

_NAME = {"type": "string", "pattern": NAME_PATTERN}
_NEXT_ITEM = {
    "oneOf": [
        _NAME,
        {"type": "object", "required": ["step"], "additionalProperties": False,
         "properties": {"step": _NAME, "when": {"type": "string"}}},
    ]
}
_TOOL_PROPERTIES = {
    "name": _NAME,
    "type": {"enum": list(TOOL_TYPES)},
    "description": {"type": "string"},
    "spec": {"type": "object"},
    "input_schema": {"type": "object"},
}
_TOOLISH = {
    "type": "object",
    "required": ["name", "type", "spec"],
    "additionalProperties": False,
    "properties": _TOOL_PROPERTIES,
}

# A workbook task, or a step's inline task: ``{name, type, spec}``, or the spec's keys written
# beside name and type (``{name, type: http, url, method, data}``), as NoETL playbooks do.
_TASK = {
    "type": "object",
    "required": ["type"],
    "properties": _TOOL_PROPERTIES,
}
_MESSAGES = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["role", "content"],
        "additionalProperties": False,
        "properties": {"role": {"enum": ["system", "user", "assistant"]},
                       "content": {"type": "string"}},
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Harmonic workflow",
    "type": "object",
    "required": ["apiVersion", "kind"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"enum": ["harmonic/v1", "noetl.io/v1", *V2_VERSIONS]},
        "kind": {"enum": ["Playbook", "Workflow"]},
        "metadata": {
            "type": "object",
            "required": ["name", "path"],
            "additionalProperties": False,
            "properties": {
                "name": _NAME,
                "path": {"type": "string", "minLength": 1, "maxLength": 300},
                "version": {"type": ["string", "number"]},
                "description": {"type": "string"},
            },
        },
        "workload": {"type": "object"},
        "workbook": {"type": "array", "items": {**_TASK, "required": ["name", "type"]}},
        "workflow": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["step"],
                "additionalProperties": False,
                "properties": {
                    "step": _NAME,
                    "desc": {"type": "string"},
                    "type": {"enum": list(STEP_TYPES)},
                    "task": {"oneOf": [_NAME, _TASK]},
                    "turn": _NAME,
                    "args": {"type": "object"},
                    "next": {"type": "array", "items": _NEXT_ITEM},
                    "retries": {"type": "integer", "minimum": 0, "maximum": 10},
                    "save": {"type": "object"},
                },
                "not": {"required": ["task", "turn"]},
                "dependentRequired": {"type": ["task"]},
            },
        },
        "mcp": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "models": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "additionalProperties": False,
                        "properties": {
                            "name": _NAME,
                            "provider": {"type": "string"},
                            "model": {"type": "string"},
                            "params": {"type": "object"},
                        },
                    },
                },
                "tools": {"type": "array", "items": _TOOLISH},
                "resources": {"type": "array", "items": _TOOLISH},
                "prompts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name", "template"],
                        "additionalProperties": False,
                        "properties": {"name": _NAME, "description": {"type": "string"},
                                       "template": {"oneOf": [{"type": "string"},
                                                              _MESSAGES]}},
                    },
                },
                "turns": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name", "model", "user"],
                        "additionalProperties": False,
                        "properties": {
                            "name": _NAME,
                            "model": _NAME,
                            "system": {"type": "string"},
                            "user": {
                                "type": "array",
                                "minItems": 1,
                                "items": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "minProperties": 1,
                                    "maxProperties": 2,
                                    "properties": {
                                        "text": {"type": "string"},
                                        "use": {"type": "string",
                                                "pattern": r"^(resource|prompt):"},
                                        "with": {"type": "object"},
                                    },
                                },
                            },
                            "tools_allowed": {"type": "array", "items": _NAME},
                            "max_rounds": {"type": "integer", "minimum": 1, "maximum": 20},
                            "save": {"type": "object"},
                        },
                    },
                },
            },
        },
    },
}


_TASK_KEYS = ("name", "type", "description", "spec", "input_schema")


def task_spec(item: dict[str, Any]) -> dict[str, Any]:
    """A task's spec: its ``spec``, or the keys written beside name and type (both merge)."""
    inline = {k: v for k, v in item.items() if k not in _TASK_KEYS}
    return {**inline, **(item.get("spec") or {})}

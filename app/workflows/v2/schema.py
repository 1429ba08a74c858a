"""The JSON Schema of a ``noetl.io/v2`` document: its shape (``validate`` adds the meaning).

Tools and tasks keep NoETL's open shape (a kind's own keys sit beside ``kind``); steps, arcs,
loops and policies are closed, so a misspelled or retired key (``type``, ``when`` on a step,
``args``, ``eval``, ``set_ctx``) is named instead of ignored.
"""

from __future__ import annotations

from typing import Any

from app.workflows.schema import SCHEMA as V1_SCHEMA
from app.workflows.schema import V2_VERSIONS

# A step or task name: anything but spaces, brackets and ``#`` (job names add those), the
# length a job's name can carry with a loop's index after it.
NAME_PATTERN = r"^[^\s\[\]#{}]{1,150}$"
KINDS = ("noop", "python", "http", "postgres", "duckdb", "workbook", "playbook",
         "mcp", "page", "rpc")
ACTIONS = ("continue", "retry", "break", "jump", "fail")
# Keys of a keychain entry that would hold a credential's material (or build it from values
# the document holds): the material is the operator's, stored as a secret of that name.
KEYCHAIN_MATERIAL = ("token", "map", "api_key", "password", "secret", "value", "client_secret",
                     "private_key", "key", "data", "headers", "auth", "username")

_NAME = {"type": "string", "pattern": NAME_PATTERN}
_TEMPLATE_OR_BOOL = {"type": ["string", "boolean"]}
_SET = {"type": "object"}
_THEN = {
    "type": "object",
    "required": ["do"],
    "additionalProperties": False,
    "properties": {
        "do": {"enum": list(ACTIONS)},
        "attempts": {"type": "integer", "minimum": 1, "maximum": 20},
        "backoff": {"enum": ["none", "fixed", "linear", "exponential"]},
        "delay": {"type": "number", "minimum": 0, "maximum": 60},
        "to": {"type": "string"},
        "set": _SET,
    },
}
_RULE = {
    "type": "object",
    "oneOf": [
        {"required": ["when", "then"], "not": {"required": ["else"]}},
        {"required": ["else"], "not": {"required": ["when"]}},
    ],
    "additionalProperties": False,
    "properties": {
        "when": _TEMPLATE_OR_BOOL,
        "then": _THEN,
        # NoETL also reads ``else: {do: …}`` as ``else: {then: {do: …}}``
        "else": {"oneOf": [{"type": "object", "required": ["then"],
                            "additionalProperties": False, "properties": {"then": _THEN}},
                           _THEN]},
    },
}
_POLICY = {
    "type": "object",
    "required": ["rules"],
    "properties": {
        "rules": {"type": "array", "items": _RULE},
        "mode": {"enum": ["exclusive", "inclusive"]},
        "on_unmatched": {"enum": ["continue", "fail"]},
    },
}
_TASK = {
    "type": "object",
    "required": ["kind"],
    "properties": {
        "name": _NAME,
        "kind": {"type": "string"},
        "input": {"type": "object"},
        "set": _SET,
        "spec": {"type": "object", "properties": {"policy": _POLICY}},
    },
}
# A step's or a workbook entry's ``tool``: one task, or a list of them run in turn.
_TOOL = {"oneOf": [_TASK, {"type": "array", "minItems": 1, "items": _TASK}]}
_ADMIT = {
    "type": "object",
    "properties": {"rules": {"type": "array", "items": {
        "type": "object",
        "properties": {"when": _TEMPLATE_OR_BOOL,
                       "then": {"type": "object", "required": ["allow"],
                                "properties": {"allow": {"type": "boolean"}}},
                       "else": {"type": "object"}}}}},
}
_NEXT = {
    "type": "object",
    "required": ["arcs"],
    "additionalProperties": False,
    "properties": {
        "spec": {"type": "object", "properties": {"mode": {"enum": ["exclusive", "inclusive"]}}},
        "arcs": {"type": "array", "items": {
            "type": "object",
            "required": ["step"],
            "additionalProperties": False,
            "properties": {"step": _NAME, "when": _TEMPLATE_OR_BOOL, "set": _SET,
                           "spec": {"type": "object"}},
        }},
    },
}
_LOOP = {
    "type": "object",
    "required": ["in", "iterator"],
    "additionalProperties": False,
    "properties": {
        "in": {"type": ["string", "array"]},
        "iterator": _NAME,
        "spec": {"type": "object", "properties": {
            "mode": {"enum": ["sequential", "parallel"]},
            "max_in_flight": {"type": ["integer", "string"]},
        }},
    },
}
STEP = {
    "type": "object",
    "required": ["step"],
    "additionalProperties": False,
    "properties": {
        "step": _NAME,
        "desc": {"type": "string"},
        "spec": {"type": "object", "properties": {"policy": {
            "type": "object", "properties": {"admit": _ADMIT}}}},
        "input": {"type": "object"},
        "loop": _LOOP,
        "tool": _TOOL,
        "next": _NEXT,
        "set": _SET,
        "turn": _NAME,  # ours: the step runs a turn of the mcp section
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "NoETL playbook (noetl.io/v2), with Harmonic's mcp section",
    "type": "object",
    "required": ["apiVersion", "kind", "workflow"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"enum": list(V2_VERSIONS)},
        "kind": {"enum": ["Playbook"]},
        # Our own metadata keys, none required: the catalog's name, in URLs, keeps our names'
        # pattern.
        "metadata": {"type": "object",
                     "properties": V1_SCHEMA["properties"]["metadata"]["properties"]},
        "workload": {"type": "object"},
        "keychain": {"type": "array", "items": {
            "type": "object", "required": ["name"],
            "properties": {"name": _NAME, "kind": {"type": "string"}}}},
        "executor": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "entry_step": {"type": "string"}, "final_step": {"type": "string"}}}}},
        "workbook": {"type": "array", "items": {
            "type": "object", "required": ["name"],
            "properties": {"name": _NAME,
                           "tool": _TOOL,
                           "kind": {"type": "string"}}}},
        "workflow": {"type": "array", "minItems": 1, "items": STEP},
        "mcp": V1_SCHEMA["properties"]["mcp"],
        "sql_inputs": {"type": "array", "items": {"type": "string"}},
    },
}

# What a key the schema refuses meant, and what to write instead.
HINTS = {
    "type": "'type' is the harmonic/v1 form: a noetl.io/v2 step runs tool: {kind: …}",
    "when": "a step has no 'when': route with next.arcs[].when, or admit it with "
            "spec.policy.admit.rules",
    "case": "'case' blocks are retired: route with next.arcs[].when, handle a task's outcome "
            "with its spec.policy.rules",
    "args": "'args' is retired: bind values with 'input', write ctx with 'set'",
    "task": "'task' is the harmonic/v1 form: write tool: {kind: workbook, name: <task>}",
    "retries": "retry a task with its spec.policy.rules (then: {do: retry, attempts: N})",
    "save": "'save' is the harmonic/v1 form: a storage task of the pipeline keeps a result",
    "vars": "root 'vars' is retired: write ctx with 'set' (arcs, steps, task policies)",
    "set_ctx": "write 'set: {ctx.<key>: …}' instead",
    "set_iter": "write 'set: {iter.<key>: …}' instead",
    "expr": "'when' is the only condition keyword",
    "cursor": "cursor loops (workers claiming rows of a database) are not run here: loop over "
              "a list with loop.in",
    "output": "result storage tiers are not run here: a step's result is kept with the run",
}

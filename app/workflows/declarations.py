"""The declarations both DSLs compile the same way: a tool, resource or task (``compile_tool``)
and a model turn (``compile_turn``). ``compile`` (the first DSL) and ``v2.compile``
(``noetl.io/v2``) both use them, so neither imports the other's.
"""

from __future__ import annotations

from typing import Any

from app.workflows.schema import task_spec

DEFAULT_ROUNDS = 5
UNNAMED = "workflow"  # the name of a document without metadata, read from no file


def compile_tool(item: dict[str, Any], kind: str) -> dict[str, Any]:
    return {"name": item["name"], "kind": kind, "type": item["type"], "spec": task_spec(item),
            "description": item.get("description", ""),
            "input_schema": item.get("input_schema")}


def compile_turn(turn: dict[str, Any], models: dict[str, Any], tools: dict[str, Any],
                 prompts: dict[str, str]) -> dict[str, Any]:
    model = models[turn["model"]]
    user = []
    used: list[str] = []
    for part in turn["user"]:
        if "use" in part:
            kind, _, name = part["use"].partition(":")
            if kind == "resource":
                user.append({"resource": name})
                used.append(name)
            else:
                user.append({"prompt": name, "template": prompts[name],
                             "with": part.get("with") or {}})
        if "text" in part:
            user.append({"text": part["text"]})
    return {"name": turn["name"], "model": {"name": model["name"],
                                            "model": model.get("model") or model["name"],
                                            "provider": model.get("provider", ""),
                                            "params": model.get("params") or {}},
            "system": turn.get("system", ""), "user": user, "resources": used,
            "tools_allowed": list(turn.get("tools_allowed") or []),
            "tools": [tools[t] for t in turn.get("tools_allowed") or []],
            "max_rounds": turn.get("max_rounds", DEFAULT_ROUNDS),
            "save": turn.get("save")}

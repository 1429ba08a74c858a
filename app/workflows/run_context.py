"""What a step of a run sees: the identity it acts as (``identity_for``) and the names its
templates read (``build_context``). Below the runner, so that the steps of either DSL and a
sub-run's start read them without importing the runner."""

from __future__ import annotations

from typing import Any

from app.core import token_cache
from app.core.identity import Identity
from app.workflows import secrets
from app.workflows.compile import steps_by_name


def identity_for(run: dict[str, Any]) -> Identity | None:
    if run.get("user_id") is None:
        return None
    # The kind, token and grant of whoever started it: a run never acts as more than they may.
    # Started in a representation session, it acts as the representative in that session (for
    # the principal, within the grant), whoever the run is listed for.
    session = run.get("representation_id")
    representing = token_cache.representing_in(session) if session is not None else None
    caller = representing.representative_id if representing is not None else None
    return Identity(user_id=caller or run["user_id"], scopes=("read", "write"), via="workflow",
                    kind=run.get("caller_kind") or "person", token_id=run.get("made_by_token_id"),
                    grant_id=run.get("made_by_grant_id"), run_id=run.get("id"),
                    representing=representing)


def build_context(run: dict[str, Any], done: list[dict[str, Any]]) -> dict[str, Any]:
    compiled = run["compiled"]
    workload = {**(compiled.get("workload") or {}), **(run.get("inputs") or {})}
    declarations = compiled.get("declarations") or {}
    ctx: dict[str, Any] = {"workload": workload, "input": workload, "steps": {},
                           "resources": {}, "turns": {},
                           "run": {"id": str(run["id"]), "short_id": run["short_id"]},
                           "secrets": secrets.Secrets(), "mcp": declarations,
                           "prompts": declarations.get("prompts") or {}}
    steps = steps_by_name(compiled) if compiled.get("steps") else {}
    for row in done:
        result, payload = row["result"], row["payload"] or {}
        ctx["steps"][row["step"]] = result
        base = payload.get("base") or row["step"]
        step = steps.get(base) or {}
        if step.get("type") == "resource":
            ctx["resources"][step["resource"]] = result
        if step.get("type") == "turn" and isinstance(result, dict) and "answer" in result:
            ctx["steps"][base] = result
            ctx["turns"][step["turn"]["name"]] = result
    ctx["context"] = dict(ctx)  # NoETL's spelling: context.input, context.steps, ...
    return ctx

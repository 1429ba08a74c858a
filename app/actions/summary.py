"""An action as the pages' frontmatter, ``GET <page>/actions`` and MCP's navigate list it.

One function for every reader, so the three never disagree on an action's shape.
"""

from __future__ import annotations

from typing import Any

from app.actions.registry import ACTIONS, Action, Context, Result


def action_summary(act: Action) -> dict[str, Any]:
    """An action as frontmatter, ``/actions`` and MCP list it: its effect, a readable
    parameter list and the parameters' JSON Schema (``input_schema``)."""
    return {
        "name": act.name,
        "description": act.description,
        **act.effect.describe(),
        "params": [p.summary() for p in act.params],
        "input_schema": act.input_schema(),
    }


def next_steps(act: Action, ctx: Context, result: Result) -> list[dict[str, Any]]:
    """The steps a successful run of ``act`` leads to (``Action.next_steps``), each an action
    summary with the page to run it at: what every door's result carries, so an agent runs
    the next step without reading that page first."""
    if act.next_steps is None:
        return []
    where = result.location or ctx.path
    return [{**action_summary(ACTIONS[name]), "path": where}
            for name in act.next_steps(ctx, result) if name in ACTIONS]

"""An action as the pages' frontmatter, ``GET <page>/actions`` and MCP's navigate list it.

One function for every reader, so the three never disagree on an action's shape.
"""

from __future__ import annotations

from typing import Any

from app.actions.registry import Action


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

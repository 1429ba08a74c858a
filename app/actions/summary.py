"""An action as the pages' frontmatter, ``GET <page>/actions`` and MCP's navigate list it.

One function for every reader, so the three never disagree on an action's shape.
"""

from __future__ import annotations

from typing import Any

from app.actions.registry import Action


def action_summary(act: Action) -> dict[str, Any]:
    """An action as frontmatter, ``/actions`` and MCP list it: its effect included."""
    return {
        "name": act.name,
        "description": act.description,
        **act.effect.describe(),
        "params": [{"name": p.name, "type": p.display_type, "required": p.required,
                    "description": p.description} for p in act.params],
    }

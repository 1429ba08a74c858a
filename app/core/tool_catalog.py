"""The MCP tools this process serves, as domain code may know them without importing app.mcp.

A recipe step's effect ("does replaying this write?") and a workflow's check of the tool names
it calls both need the tool registry, which lives above them in app.mcp. The registry provides
itself here when it loads (``provide``); until then nothing is known and callers treat a tool
as unknown. Standard library and app.actions only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.actions.effects import Effect

Names = Callable[[], list[str]]
CallEffect = Callable[[str, Any], Effect | None]

_names: Names | None = None
_call_effect: CallEffect | None = None


def provide(names: Names, call_effect: CallEffect) -> None:
    """Called once by the tool registry: how to list the tools and what a call of one does."""
    global _names, _call_effect
    _names, _call_effect = names, call_effect


def tool_names() -> list[str] | None:
    """Every registered tool's name, or None when no registry is loaded in this process."""
    return _names() if _names is not None else None


def call_effect(tool: str, arguments: Any = None) -> Effect | None:
    """What calling ``tool`` with ``arguments`` does, or None for a tool nobody registered."""
    return _call_effect(tool, arguments) if _call_effect is not None else None


def read_only_tools() -> set[str]:
    """The tools whose declared effect only reads."""
    return {name for name in tool_names() or []
            if (effect := call_effect(name)) is not None and effect.read_only}

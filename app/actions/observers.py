"""Observers of executed actions: called inside the action's own transaction, after its handler
and the change record, just before the commit, whatever the door (HTML form, Markdown/JSON POST,
MCP ``execute_action``, a recipe or workflow step).

The slot lives here, below the feature packages; a feature fills it at import
(notifications: the inbox rows and webhook deliveries of the change). Whatever an observer
writes commits or rolls back with the action itself, so nothing it records can be lost to a
process that dies after the commit. An observer that raises fails the action: it is a bug, and
a half-recorded change is worse than a refused one.
"""

from __future__ import annotations

from collections.abc import Callable

from app.actions.registry import Action, Context, Result
from app.services.listeners import Listeners

Observer = Callable[[Context, Action, Result], None]
_observers: Listeners[Observer] = Listeners()
# Register ``observer(ctx, action, result)`` (once; usable as a decorator).
observe = _observers.add


def run(ctx: Context, act: Action, result: Result) -> None:
    for observer in list(_observers):
        observer(ctx, act, result)

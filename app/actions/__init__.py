"""THE action registry: every action's name, description, typed parameters, its effect, the
pages that offer it, when it is available, who may run it, and the handler that calls a service.

``effects`` is the one effect vocabulary (read / write / destructive, idempotent) that actions,
MCP tools and design-model methods declare; standard library only.

Everything that lists, describes, validates or executes an action reads this package: HTML
forms, Markdown frontmatter and ``## Actions``, ``GET <page>/actions[/<name>]``, ``POST
<page>/actions/<name>``, MCP ``execute_action`` and playbook recipes.
"""

from app.actions.registry import ACTIONS, Action, Context, Param, Result, action, offered_actions

__all__ = ["ACTIONS", "Action", "Context", "Param", "Result", "action", "offered_actions"]

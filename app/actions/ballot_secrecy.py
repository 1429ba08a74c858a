"""What a ballot says is never kept beside who cast it, outside the ballot tables.

An anonymous ballot is stored unlinked (``app.services.ballots``); a call that casts one still
passes places that record calls with their caller: a teaching session's capture, the MCP audit
log's message of a refused call, an MCP task's stored arguments, an automation's configured
effect, a workflow run's steps. Each of them asks here: the first two withhold the ballot, the
others refuse to cast one (a ballot is cast by its voter, at once). The ballot actions (every
kind's but acceptance's ``vote``, whose votes name their voter anyway) are named by
``app.actions.ballots`` when it registers them: the layers above read it here.

Which decision a call votes on is not looked up (a refused call may name none): the
parameters of every ballot action are withheld alike, anonymous or not.
"""

from __future__ import annotations

from typing import Any

BALLOT_ACTIONS: set[str] = set()
WITHHELD = "[withheld: a ballot's choices are not recorded]"
# The tools whose arguments name an action and carry its parameters.
ACTION_TOOLS = ("execute_action",)


def is_ballot(action: Any) -> bool:
    return isinstance(action, str) and action in BALLOT_ACTIONS


def casts_a_ballot(tool: str, args: Any) -> bool:
    """Whether a tool call (``execute_action`` with a ballot action) casts a ballot."""
    return tool in ACTION_TOOLS and isinstance(args, dict) and is_ballot(args.get("action"))


def redacted(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments as they may be recorded: a ballot's parameters withheld."""
    if not casts_a_ballot(tool, args):
        return args
    return {**args, "params": WITHHELD}

"""The one effect vocabulary: what a call does to the state it reaches.

Every action (``app.actions``), MCP tool (``app.mcp.registry``) and design-model method
(``app.design_model.registry``) declares one ``Effect`` where it is registered; everything that
must know whether a call changes anything asks that declaration:

- MCP tool annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
  ``openWorldHint``) derive from it (``Effect.annotations``), for tools and for the actions
  ``navigate`` lists;
- what a caller may run (``app.core.authorization.authorize``, the one decision every door
  asks): a read-only token (no ``write`` scope) runs only what reads (``needs_write``), and
  only the person themselves runs what manages ``credentials``;
- a playbook replay asks for confirmation before the steps that write, and a dry run only
  plans them.

The kinds, from harmless to harmful:

``read``         changes nothing (a read is idempotent by nature);
``write``        adds or changes something (creating is a write); ``idempotent`` when a repeat
                 with the same arguments has no second effect (voting the same way again,
                 joining what one has joined, confirming a read, saving the same settings);
``destructive``  deletes, revokes, closes or overwrites what cannot be had back by another
                 call.

``open_world`` marks a call that reaches beyond this app (an upstream JSON-RPC server).

``credentials`` marks a call that manages the account's credentials: creates or revokes API
tokens, agents and their tokens, connected apps (OAuth grants). Only the person themselves may
run it, never an app they connected (an OAuth grant's token) or an agent
(``app.core.authorization``).

``guess`` is the *fallback* for a method nobody here declares (a remote upstream's own
methods): it classifies by the name's verb. It is used only where no registry knows the name.

Standard library only: every layer may import this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("read", "write", "destructive")


@dataclass(frozen=True)
class Effect:
    kind: str  # read | write | destructive
    idempotent: bool = False
    open_world: bool = False
    credentials: bool = False  # manages the account's tokens, agents or connected apps

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown effect {self.kind!r}: use one of {', '.join(KINDS)}")
        if self.kind == "read" and not self.idempotent:
            object.__setattr__(self, "idempotent", True)  # reading twice changes nothing

    @property
    def read_only(self) -> bool:
        return self.kind == "read"

    @property
    def writes(self) -> bool:
        return self.kind != "read"

    @property
    def destructive(self) -> bool:
        return self.kind == "destructive"

    def annotations(self, title: str | None = None) -> dict[str, Any]:
        """The MCP tool hints this effect means (the one place they are derived)."""
        out: dict[str, Any] = {"readOnlyHint": self.read_only,
                               "destructiveHint": self.destructive,
                               "idempotentHint": self.idempotent,
                               "openWorldHint": self.open_world}
        if title:
            out["title"] = title
        return out

    def describe(self) -> dict[str, Any]:
        """How pages and MCP results show it: ``{"effect": "write", "idempotent": true}``, with
        ``"credentials": true`` for what only the person themselves may run."""
        out: dict[str, Any] = {"effect": self.kind, "idempotent": self.idempotent}
        if self.credentials:
            out["credentials"] = True
        return out

    def __str__(self) -> str:
        return f"{'idempotent ' if self.writes and self.idempotent else ''}{self.kind}"


READ = Effect("read")
WRITE = Effect("write")
IDEMPOTENT_WRITE = Effect("write", idempotent=True)
DESTRUCTIVE = Effect("destructive")
IDEMPOTENT_DESTRUCTIVE = Effect("destructive", idempotent=True)
# What makes or ends a way into the account (a token, an agent, a connected app).
CREDENTIALS = Effect("write", credentials=True)
REVOKE_CREDENTIALS = Effect("destructive", idempotent=True, credentials=True)
# The actions a representative runs as themselves during a representation session (starting
# and ending one): every other action that writes runs for the principal, if the grant has it.
SESSION_ACTIONS = frozenset({"start_representation", "end_representation"})


def needs_write(effect: Effect | None) -> bool:
    """True when a caller needs the ``write`` scope (an unknown effect is assumed to write)."""
    return effect is None or effect.writes


# The fallback, for methods no registry here declares (a remote upstream's): the verb decides.
# Names that start with none of these are taken as reads, as seed 000's recipes assume.
DESTRUCTIVE_VERBS = ("delete_", "remove_", "purge_", "clear_", "reset_", "element.delete")
WRITE_VERBS = ("create_", "update_", "set_", "move_", "apply_", "rename_", "change_",
               "duplicate_", "place_", "rotate_", "rebar_apply", "element.create")


def guess(method: str) -> Effect:
    """The fallback effect of an undeclared upstream method, from its name."""
    leaf = method.rsplit(".", 1)[-1]

    def starts(verbs: tuple[str, ...]) -> bool:
        return any(method.startswith(v) or leaf.startswith(v) for v in verbs)

    if starts(DESTRUCTIVE_VERBS):
        return DESTRUCTIVE
    if starts(WRITE_VERBS):
        return WRITE
    return READ

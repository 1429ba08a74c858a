"""The one authorization question: may this caller run something with this effect?

Every door asks it before it runs anything, and before it validates the arguments (so a
refusal never depends on them): the action POST (HTML form, Markdown/JSON, MCP
``execute_action`` and recipe or workflow steps through ``app.core.dispatch``), pages (a read),
MCP ``tools/call`` with the effect of the call itself (``Tool.call_effect``: the action
``execute_action`` runs, the method ``upstream_call`` calls, whether ``replay`` writes), the
playbook endpoints (``/teach/*``, ``/rpc`` per method, ``/replay``), the design-model door per
method, and the workflow pages. The answer depends on two things only:

- the effect the action, tool, endpoint or method declares (``app.actions.effects``): what
  reads needs the ``read`` scope, anything else ``write`` (an undeclared effect is taken to
  write);
- what the caller's credential is (``Identity.kind``): a call whose effect manages
  ``credentials`` (API tokens, agents, connected apps) is for the person themselves, never an
  app they connected through OAuth (a grant's token) nor an agent.

No identity means authentication is off, which ``app.core.netpolicy`` allows only on loopback:
then the pages' own rules (most want a signed-in person) still apply.
"""

from __future__ import annotations

from app.actions.effects import Effect, needs_write
from app.core.identity import Identity
from app.services.errors import Forbidden

HOLDERS = {"agent": "an agent's token", "grant": "an app you connected (an OAuth grant's token)",
           "automation": "an automation"}


def scope_needed(effect: Effect | None) -> str:
    """The scope a call with this effect needs: ``write`` unless it only reads."""
    return "write" if needs_write(effect) else "read"


def refusal(identity: Identity | None, effect: Effect | None,
            what: str | None = None) -> Forbidden | None:
    """Why ``identity`` may not run ``what`` (an action, tool or method) with this effect, or
    None when it may."""
    if identity is None:
        return None
    scope = scope_needed(effect)
    if scope not in identity.scopes:
        hint = "; authorize again granting write" if identity.kind == "grant" else ""
        return Forbidden(f"this token lacks the '{scope}' scope{hint}",
                         reason="insufficient_scope", scope=scope)
    if effect is not None and effect.credentials and not identity.is_person:
        subject = f"'{what}'" if what else "this"
        return Forbidden(f"{subject} manages the account's credentials (API tokens, agents, "
                         f"connected apps): only the person may run it, signed in or with "
                         f"their own API token, not {HOLDERS[identity.kind]}",
                         reason="person_only")
    return None


def authorize(identity: Identity | None, effect: Effect | None, what: str | None = None) -> None:
    """Raise Forbidden unless ``identity`` may run ``what`` with this effect."""
    refused = refusal(identity, effect, what)
    if refused is not None:
        raise refused

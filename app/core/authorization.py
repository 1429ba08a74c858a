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
  app they connected through OAuth (a grant's token) nor an agent;
- whether the caller acts for someone (``Identity.representing``, a representation session
  under a grant: ``app.services.grants``): then a call that writes runs only if it is one of
  the grant's actions, in the grant's studio, and runs as the principal (``runs_as``); anything
  else that writes is refused with the grant's terms, except starting or ending the session
  itself, which the caller does as themselves. Work started in a session and run later (an
  MCP task, a workflow run's steps) carries the session: it runs under the same rule, and once
  the session has ended nothing it runs that writes is allowed (it acted for the principal,
  never for the representative alone).

No identity means authentication is off, which ``app.core.netpolicy`` allows only on loopback:
then the pages' own rules (most want a signed-in person) still apply.
"""

from __future__ import annotations

from app.actions.effects import SESSION_ACTIONS, Effect, needs_write
from app.core.identity import Identity, Representing
from app.services.errors import Forbidden

HOLDERS = {"agent": "an agent's token", "grant": "an app you connected (an OAuth grant's token)",
           "automation": "an automation"}


def scope_needed(effect: Effect | None) -> str:
    """The scope a call with this effect needs: ``write`` unless it only reads."""
    return "write" if needs_write(effect) else "read"


def terms(rep: Representing) -> str:
    """A grant's terms in words: for whom, where, which actions, until when."""
    actions = ", ".join(repr(name) for name in rep.actions)
    return (f"you act for @{rep.principal_handle} in {rep.studio_handle} under a grant of "
            f"{actions} until {rep.grant_until.isoformat(timespec='minutes')} "
            f"(this session ends {rep.until.isoformat(timespec='minutes')})")


def _outside_grant(rep: Representing, what: str | None, studio: str | None) -> Forbidden:
    subject = f"'{what}'" if what else "this"
    where = f" in {studio}" if studio is not None and studio != rep.studio_handle else ""
    return Forbidden(f"{subject}{where} is outside your grant: {terms(rep)}; end the session "
                     f"(end_representation) to act as yourself", reason="outside_grant",
                     principal=rep.principal_handle, studio=rep.studio_handle,
                     actions=list(rep.actions), until=rep.grant_until.isoformat())


def runs_as(identity: Identity | None, what: str | None) -> Representing | None:
    """The session in which ``what`` (an action that passed ``refusal``) runs as the principal,
    or None when the caller runs it as themselves."""
    if identity is None or what in SESSION_ACTIONS:
        return None
    return identity.acting_for()


def refusal(identity: Identity | None, effect: Effect | None,
            what: str | None = None, studio: str | None = None) -> Forbidden | None:
    """Why ``identity`` may not run ``what`` (an action, tool or method) with this effect (in
    ``studio``, when the door knows it), or None when it may."""
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
    outlived = identity.outlived_session()
    if outlived is not None and needs_write(effect):
        subject = f"'{what}'" if what else "this"
        return Forbidden(f"{subject} is refused: this work was started for "
                         f"@{outlived.principal_handle} in a representation session that has "
                         f"ended, so it no longer acts for them", reason="session_ended",
                         principal=outlived.principal_handle)
    rep = identity.acting_for()
    if rep is not None and what not in SESSION_ACTIONS and (
            needs_write(effect) or (effect is not None and effect.credentials)):
        if what not in rep.actions or (studio is not None and studio != rep.studio_handle) \
                or (effect is not None and effect.credentials):
            return _outside_grant(rep, what, studio)
    return None


def authorize(identity: Identity | None, effect: Effect | None, what: str | None = None,
              studio: str | None = None) -> None:
    """Raise Forbidden unless ``identity`` may run ``what`` with this effect (in ``studio``)."""
    refused = refusal(identity, effect, what, studio)
    if refused is not None:
        raise refused

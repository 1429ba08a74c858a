"""Who is asking: ``Identity``, a Bearer token resolved to one.

An identity is the person behind a request (``user_id``), what they may do (``scopes``), the
token they came with (``token_id``), through which door (``via``: ``session`` for a browser
cookie, ``token`` for a Bearer token, ``workflow`` for a workflow run, ``task`` for an MCP task
run later, ``automation`` for an automation's effect) and what holds the credential (``kind``):

``person``  the person themselves: their browser session, or an API token they made for
            themselves;
``agent``   an agent account's token (``User.user_type == "ai_agent"``);
``grant``   an access token an app got through OAuth (``ApiToken.oauth_grant_id``): the app
            the person connected, not the person;
``automation`` a studio's automation acting as its owner (``app.automations``).

An identity in a representation session (``app.models.grants``) carries it in
``representing``: its actions within the grant then run as the principal
(``app.core.authorization``). The kind comes from the token row (``from_token``), so the
per-process token cache carries it with the rest (and forgets it when a session starts or
ends); a workflow run or an MCP task acts with the kind and token of whoever started
it. What an identity may run is decided in one place, ``app.core.authorization``.
Web, MCP, playbooks, workflows and the design model all read this one type; the Flask glue
that finds it on a request lives in ``app.web.auth``.

In-process dispatch (``app.core.dispatch``) passes its Identity through the WSGI environ under
``IDENTITY_KEY``: that environ is built by our own code, never from a remote client, so it can
be trusted.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.models import provenance

if TYPE_CHECKING:
    from app.models import ApiToken
    from app.models.grants import Representation

IDENTITY_KEY = "harmonic.identity"
# Blueprints whose views read only the identity, never the person's row (``identity_only``).
IDENTITY_ONLY: set[str] = set()


def identity_only(blueprint_name: str) -> None:
    """Mark a blueprint whose views need only ``g.identity`` (the /mcp transport: the pages it
    dispatches to load the person themselves), so its requests skip loading the person."""
    IDENTITY_ONLY.add(blueprint_name)


KINDS = ("person", "agent", "grant", "automation")
# Doors of work run later for whoever started it: an MCP task, a workflow run's steps.
DEFERRED = ("task", "workflow")


@dataclass(frozen=True)
class Representing:
    """A representation session the caller is in: for whom, under which grant's terms."""

    session_id: uuid.UUID
    principal_id: uuid.UUID
    principal_handle: str
    grant_id: uuid.UUID
    studio_handle: str
    actions: tuple[str, ...]
    grant_until: datetime
    until: datetime  # the session's end (an hour at most, never after the grant's)
    representative_id: uuid.UUID | None = None

    def active(self, now: datetime | None = None) -> bool:
        return (now or datetime.now(UTC)) < self.until

    @classmethod
    def of(cls, session: Representation) -> Representing:
        """The session as an identity carries it; one that ended early (by either side, or
        its grant revoked) ends when it did."""
        grant = session.grant
        until = min(t for t in (session.ends_at, session.ended_at, grant.revoked_at,
                                grant.expires_at) if t is not None)
        return cls(session_id=session.id, principal_id=session.principal_id,
                   principal_handle=session.principal.handle, grant_id=grant.id,
                   studio_handle=grant.studio.handle, actions=tuple(grant.action_names),
                   grant_until=grant.expires_at, until=until,
                   representative_id=session.representative_id)


@dataclass(frozen=True)
class Identity:
    user_id: uuid.UUID
    scopes: tuple[str, ...] = ("read", "write")
    token_id: uuid.UUID | None = None
    via: str = "session"  # session (cookie) | token (Bearer) | workflow | task | automation
    # The resource an OAuth access token was minted for (RFC 8707), None for a pasted API
    # token: /mcp refuses a token whose audience is not its own URL.
    audience: str | None = None
    kind: str = "person"  # person | agent | grant: who holds the credential (module docstring)
    grant_id: uuid.UUID | None = None  # the OAuth grant of a grant's token
    # An automation's effect acts as its owner with kind ``automation`` and how many automation
    # effects led here (``depth``); a workflow run's steps carry the run (``run_id``), so what
    # they cause is traced to the automation that started the run, if one did.
    depth: int = 0
    run_id: uuid.UUID | None = None
    representing: Representing | None = None  # a representation session it is in
    owner_id: uuid.UUID | None = None  # an agent account's person (its ``User.owner_id``)

    def acting_for(self) -> Representing | None:
        """The session it acts in now (None once it ended, or outside one)."""
        found = self.representing
        return found if found is not None and found.active() else None

    def session_to_carry(self) -> uuid.UUID | None:
        """The representation session that work this identity starts (a task, a run) acts
        in: the one it acts in now, or, for work started by such work, the one it carries even
        once ended (so that work never acts for the representative alone)."""
        found = self.representing
        if found is None or (self.via not in DEFERRED and not found.active()):
            return None
        return found.session_id

    def outlived_session(self) -> Representing | None:
        """Work started in a representation session (a task, a run) whose session has ended
        since: it no longer acts for the principal, and never for itself instead."""
        found = self.representing
        if found is None or self.via not in DEFERRED or found.active():
            return None
        return found

    def made_for(self) -> tuple[uuid.UUID, ...]:
        """The people a call by this identity is made for, whose budgets it spends: the
        person behind the credential (an agent's owner; the person themselves for their own
        tokens and the apps they connected) and, in a representation session, its
        principal."""
        people = [self.owner_id or self.user_id]
        session = self.acting_for()
        if session is not None and session.principal_id not in people:
            people.append(session.principal_id)
        return tuple(people)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown identity kind {self.kind!r}: use one of {KINDS}")

    @property
    def is_person(self) -> bool:
        """The person themselves, not an app they connected nor an agent."""
        return self.kind == "person"


def act_as(identity: Identity | None) -> None:
    """Rows written from now on in this context are made by this identity's token and grant
    (``app.models.provenance``; None: by nobody's token)."""
    if identity is None:
        provenance.acting(None, None)
    else:
        provenance.acting(identity.token_id, identity.grant_id)


def kind_of(token: ApiToken) -> str:
    """What holds ``token``: an app through an OAuth grant, an agent account, or the person."""
    if token.oauth_grant_id is not None:
        return "grant"
    return "agent" if token.user.user_type == "ai_agent" else "person"


def from_token(token: ApiToken, representing: Representing | None = None) -> Identity:
    """The identity of an already resolved token (its person loaded with it)."""
    return Identity(user_id=token.user_id, scopes=tuple(token.scope_list), token_id=token.id,
                    via="token", audience=token.audience, kind=kind_of(token),
                    grant_id=token.oauth_grant_id, representing=representing,
                    owner_id=token.user.owner_id if token.user.user_type == "ai_agent"
                    else None)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None for any other
    scheme or an empty token (every door reads the header through this)."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None

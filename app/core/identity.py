"""Who is asking: ``Identity``, a Bearer token resolved to one, and the scope check.

An identity is the person behind a request (``user_id``), what they may do (``scopes``), the
token they came with (``token_id``) and through which door (``via``: ``session`` for a browser
cookie, ``token`` for a Bearer token, ``workflow`` for a workflow run acting as its user).
Web, MCP, playbooks, workflows and the design model all read this one type; the Flask glue
that finds it on a request lives in ``app.web.auth``.

In-process dispatch (``app.core.dispatch``) passes its Identity through the WSGI environ under
``IDENTITY_KEY``: that environ is built by our own code, never from a remote client, so it can
be trusted.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.services.errors import Forbidden

if TYPE_CHECKING:
    from app.models import ApiToken

IDENTITY_KEY = "harmonic.identity"
# Blueprints whose views read only the identity, never the person's row (``identity_only``).
IDENTITY_ONLY: set[str] = set()


def identity_only(blueprint_name: str) -> None:
    """Mark a blueprint whose views need only ``g.identity`` (the /mcp transport: the pages it
    dispatches to load the person themselves), so its requests skip loading the person."""
    IDENTITY_ONLY.add(blueprint_name)


@dataclass(frozen=True)
class Identity:
    user_id: uuid.UUID
    scopes: tuple[str, ...] = ("read", "write")
    token_id: uuid.UUID | None = None
    via: str = "session"  # session (cookie) | token (Bearer) | workflow (a run's user)
    # The resource an OAuth access token was minted for (RFC 8707), None for a pasted API
    # token: /mcp refuses a token whose audience is not its own URL.
    audience: str | None = None


def from_token(token: ApiToken) -> Identity:
    """The identity of an already resolved token."""
    return Identity(user_id=token.user_id, scopes=tuple(token.scope_list), token_id=token.id,
                    via="token", audience=token.audience)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None for any other
    scheme or an empty token (every door reads the header through this)."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def identity_from_token(plaintext: str) -> Identity:
    """Resolve a Bearer token to an Identity or raise Unauthorized (web, /mcp and stdio);
    resolved tokens are reused for up to a second (``app.core.token_cache``)."""
    # Imported here: the type above stays importable without the models (the stdio server
    # starts answering before it loads the app).
    from app.core import token_cache

    return token_cache.resolve(plaintext)[0]


def require_scope(identity: Identity, scope: str) -> None:
    """Raise Forbidden unless ``identity`` holds ``scope`` (``read`` or ``write``)."""
    if scope not in identity.scopes:
        raise Forbidden(f"this token lacks the '{scope}' scope", reason="insufficient_scope",
                        scope=scope)

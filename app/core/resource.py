"""This server as an OAuth protected resource (RFC 9728, RFC 8707): the URLs and challenge that
``/mcp`` (app.mcp.http) and the authorization server (app.oauth) must agree on.

``base`` is the origin a client reached us at (``scheme://host[:port]``, no trailing slash).
The resource a token is minted for is ``<base>/mcp``; the protected-resource metadata lives at
``<base>/.well-known/oauth-protected-resource/mcp`` (and the root form, for older clients).
"""

from __future__ import annotations

from collections.abc import Iterable

SCOPES: tuple[str, ...] = ("read", "write")
METADATA_PATH = "/.well-known/oauth-protected-resource"


def mcp_url(base: str) -> str:
    return base.rstrip("/") + "/mcp"


def metadata_url(base: str) -> str:
    return base.rstrip("/") + METADATA_PATH + "/mcp"


def is_own(resource: str | None, bases: Iterable[str]) -> bool:
    """Whether ``resource`` names this server's /mcp at one of the origins it is reached at."""
    if not resource:
        return False
    wanted = resource.rstrip("/")
    return any(wanted == mcp_url(base) for base in bases if base)


def challenge(base: str, error: str | None = None, scope: str | None = None) -> str:
    """The ``WWW-Authenticate`` value of a 401 or 403 at /mcp (RFC 6750, RFC 9728 §5.1)."""
    parts = [f'resource_metadata="{metadata_url(base)}"', f'scope="{scope or " ".join(SCOPES)}"']
    if error:
        parts.insert(0, f'error="{error}"')
    return 'Bearer realm="harmonic", ' + ", ".join(parts)

"""Which extensions the client declared: in its session's capabilities (2025-11-25, from
initialize) or, in the stateless era, in the request's own
``_meta["io.modelcontextprotocol/clientCapabilities"]``; either way under ``extensions``.

MCP Apps (SEP-1865) is declared as ``extensions["io.modelcontextprotocol/ui"]`` with the view
types the host renders (``mimeTypes``); a host that lists them but not ours cannot show ours.
"""

from __future__ import annotations

from typing import Any

from app.mcp import era_2026
from app.mcp.context import ToolContext
from app.mcp.info import APP_MIME, UI_EXTENSION


def _extensions(caps: Any) -> dict[str, Any]:
    found = caps.get("extensions") if isinstance(caps, dict) else None
    return found if isinstance(found, dict) else {}


def declared(ctx: ToolContext, params: Any, extension: str) -> dict[str, Any] | None:
    """The settings the client declared ``extension`` with ({} when none), or None."""
    for caps in (ctx.session.client_capabilities,
                 (era_2026.meta_of(params) or {}).get(era_2026.CAPABILITIES_KEY)):
        found = _extensions(caps)
        if extension in found:
            settings = found[extension]
            return settings if isinstance(settings, dict) else {}
    return None


def shows_apps(ctx: ToolContext, params: Any) -> bool:
    """The client is an MCP Apps host that renders our views."""
    settings = declared(ctx, params, UI_EXTENSION)
    if settings is None:
        return False
    types = settings.get("mimeTypes")
    return isinstance(types, list) and APP_MIME in types

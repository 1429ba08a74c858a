"""Plugs MCP into the Flask app: the /mcp endpoint, the served registry, the audit hook and
the owner's page of agent activity at /u/<handle>/agent-activity.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from flask import Blueprint, Flask

from app.actions import Context
from app.mcp import audit, http, wire
from app.mcp.registry import REGISTRY, Registry
from app.mcp.server import McpServer
from app.web.loaders import user_page
from app.web.pages import Page, page

log = logging.getLogger("harmonic.mcp")

pages_bp = Blueprint("mcp_pages", __name__)


def conformance_enabled(app: Flask) -> bool:
    """The conformance fixtures are served only on loopback with /mcp auth off."""
    wanted = str(app.config.get("HARMONIC_MCP_CONFORMANCE",
                                os.environ.get("HARMONIC_MCP_CONFORMANCE", ""))) in ("1", "True")
    if wanted and http.auth_required(app):
        log.warning("HARMONIC_MCP_CONFORMANCE=1 ignored: it needs HARMONIC_MCP_AUTH=off "
                    "and a loopback HOST")
        return False
    return wanted


class _LazyServer(McpServer):
    """Builds the served registry on first use, after every feature has registered."""

    def __init__(self, app: Flask) -> None:
        super().__init__()
        self._app_conformance = conformance_enabled(app)

    def _registry(self) -> Registry:
        if self.registry is None:
            if self._app_conformance:
                import harmonic_conformance

                self.registry = REGISTRY.merged(harmonic_conformance.REGISTRY)
            else:
                self.registry = REGISTRY
        return self.registry


def init_app(app: Flask) -> None:
    from app.extensions import csrf
    from app.mcp import harmonic  # noqa: F401  (registers navigate, execute_action, ...)

    server = _LazyServer(app)
    server.on_tool_call = audit.record  # features may chain more observers onto this
    app.extensions["mcp"] = server
    wire.configure()  # MCP_DEBUG=1: every /mcp message in and out, redacted, in the server log
    if not app.config.get("HARMONIC_MCP_AUTH", True) and http.auth_required(app):
        log.warning("HARMONIC_MCP_AUTH=off ignored: HOST %s is not loopback",
                    app.config.get("HARMONIC_HOST"))
    # /mcp has its own Origin, Host and token checks, so cookie CSRF does not apply.
    csrf.exempt(http.bp)
    app.register_blueprint(http.bp)
    app.register_blueprint(pages_bp)


def _load(user: Any, user_handle: str, **args: Any) -> Context:
    from app.services.errors import Forbidden

    ctx = user_page("agent_activity", "/agent-activity")(user=user, user_handle=user_handle,
                                                          **args)
    if user is None or user.id != ctx.item.id:
        raise Forbidden("only the owner sees what their agents did")
    return ctx


@page(pages_bp, "agent_activity", "/u/<user_handle>/agent-activity", _load)
def agent_activity(ctx: Context) -> Page:
    calls = audit.recent_calls(ctx.item.id)
    return Page(ctx=ctx, title=f"Agent activity of {ctx.item.handle}",
                template="mcp/agent_activity", data={"calls": calls, "subject": ctx.item},
                nav=[(ctx.item.handle, f"/u/{ctx.item.handle}")])

"""Plugs MCP into the Flask app: the /mcp endpoint and the served registry (the owner's page
of agent activity is a web page: app.web.agent_activity).
"""

from __future__ import annotations

import logging
import os

from flask import Flask

from app.extensions import csrf
from app.mcp import (
    apps,  # noqa: F401  (registers the Apps views)
    audit,  # noqa: F401  (observes every call)
    harmonic,  # noqa: F401  (registers navigate, execute_action, ...)
    http,
    wire,
)
from app.mcp.registry import REGISTRY, Registry
from app.mcp.server import McpServer

log = logging.getLogger("harmonic.mcp")

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
                import harmonic_conformance  # lazy: only when the kit is on

                self.registry = REGISTRY.merged(harmonic_conformance.REGISTRY)
            else:
                self.registry = REGISTRY
        return self.registry


def init_app(app: Flask) -> None:
    server = _LazyServer(app)
    app.extensions["mcp"] = server
    wire.configure()  # MCP_DEBUG=1: every /mcp message in and out, redacted, in the server log
    if not app.config.get("HARMONIC_MCP_AUTH", True) and http.auth_required(app):
        log.warning("HARMONIC_MCP_AUTH=off ignored: HOST %s is not loopback",
                    app.config.get("HARMONIC_HOST"))
    # /mcp has its own Origin, Host and token checks, so cookie CSRF does not apply.
    csrf.exempt(http.bp)
    app.register_blueprint(http.bp)


"""Plugs playbooks into the app: the seed-compatible JSON endpoints, the pages, the MCP tools
(and capture of MCP tool calls while teaching), and the ``flask playbooks`` commands.
"""

from __future__ import annotations

from flask import Flask

from app.extensions import csrf
from app.playbooks import api, catalog, cli, mcp_tools, pages, queued, revoked  # noqa: F401


def init_app(app: Flask) -> None:
    # mcp_tools registers tools and an observer; queued registers the queued replay's step.

    csrf.exempt(api.bp)  # JSON endpoints for agents: token-authenticated, never cookie-driven
    app.register_blueprint(api.bp)
    app.register_blueprint(pages.bp)
    cli.register(app)
    with app.app_context():  # the upstream this app is configured with (no call made here)
        catalog.sync_schema(mcp_tools.UPSTREAM_SCHEMA)


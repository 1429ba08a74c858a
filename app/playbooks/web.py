"""Plugs playbooks into the app: the seed-compatible JSON endpoints, the pages, the MCP tools
(and capture of MCP tool calls while teaching), and the ``flask playbooks`` commands.
"""

from __future__ import annotations

from typing import Any

from flask import Flask


def init_app(app: Flask) -> None:
    from app.extensions import csrf
    from app.playbooks import api, catalog, cli, mcp_tools, pages

    csrf.exempt(api.bp)  # JSON endpoints for agents: token-authenticated, never cookie-driven
    app.register_blueprint(api.bp)
    app.register_blueprint(pages.bp)
    cli.register(app)
    with app.app_context():  # the upstream this app is configured with (no call made here)
        catalog.sync_schema(mcp_tools.UPSTREAM_SCHEMA)
    server = app.extensions.get("mcp")
    if server is not None:
        server.on_tool_call = _chain(server.on_tool_call, mcp_tools.capture_tool_call)


def _chain(first: Any, second: Any) -> Any:
    """Call the existing hook (the audit log), then ours; each failure stays its own."""
    if first is None:
        return second

    def both(*args: Any) -> None:
        try:
            first(*args)
        finally:
            second(*args)

    return both

"""Entry points that build an app and serve it through one door, on the top layer with
``create_app``: the modules of the doors they serve take the app (or its factory) from here and
never import ``app`` themselves.

``mcp_server``  ``harmonic-mcp-server``, the stdio MCP server as an installed command (what the
                registry entry in server.json runs); ``bin/mcp-server`` is the same server from
                a checkout, with a faster start.
``stream_app``  the ASGI app of the ``GET /mcp`` stream endpoint on a port of its own
                (``uvicorn --factory app.entrypoints:stream_app``, as ``bin/serve`` runs it;
                settings from the environment, as ``wsgi:app``).
"""

from __future__ import annotations

from app import create_app
from app.mcp.stdio import main
from app.mcp.stream import StreamApp


def mcp_server() -> int:
    return main(create_app)


def stream_app() -> StreamApp:
    return StreamApp(create_app())

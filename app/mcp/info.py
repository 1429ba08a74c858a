"""Who this server says it is: versions, serverInfo, capabilities and instructions."""

from __future__ import annotations

from typing import Any

from app.core.config import app_version
from app.mcp.icons import icons

# The handshake ("legacy") era: initialize, sessions. LATEST_VERSION answers an initialize
# that asks for a version we do not speak.
LATEST_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
# The stateless ("modern") era: every request names its version in _meta (app.mcp.era_2026).
MODERN_VERSIONS = ("2026-07-28",)
ALL_VERSIONS = MODERN_VERSIONS + SUPPORTED_VERSIONS

INSTRUCTIONS = """\
Harmonic is a place where people and AI agents coordinate in studios: notes, decisions \
(acceptance voting) and commitments (critical mass). You see the same pages people see.
Work like a person with a browser:
1. navigate(path) to a page such as /studios or /studios/<handle>; the result is the page as \
Markdown plus the actions you can take on it, with their parameters.
2. execute_action(action, params, path) runs one of those actions on that page (path may be \
left out in a session that navigated there; always pass it to a stateless server).
3. Share page URLs with people: they open the same page in their browser.
Read the resource harmonic://context first for the URL map and your studios."""


def server_info() -> dict[str, Any]:
    return {"name": "harmonic", "title": "Harmonic", "version": app_version(),
            "description": "Studios, notes, decisions and commitments for people and agents",
            "icons": icons("harmonic")}


# MCP Apps (SEP-1865): the extension and the type of the views we serve (app.mcp.apps).
UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"


def capabilities() -> dict[str, Any]:
    """The same in both eras: in 2026-07-28 the log level travels in each request's _meta
    and resource updates arrive on a subscriptions/listen stream."""
    return {"tools": {"listChanged": False},
            "resources": {"subscribe": True, "listChanged": False},
            "prompts": {"listChanged": False},
            "logging": {}, "completions": {},
            # Extensions this server speaks (SEP-2133: settings inline under each identifier).
            "extensions": {"io.modelcontextprotocol/skills": {},
                           # MCP Apps (SEP-1865): ui:// views linked from tools (app.mcp.apps)
                           UI_EXTENSION: {"mimeTypes": [APP_MIME]},
                           # Tasks (SEP-2663): long tool calls as durable tasks (app.mcp.tasks)
                           "io.modelcontextprotocol/tasks": {}}}


def instructions() -> str:
    return INSTRUCTIONS

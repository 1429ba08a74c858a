"""Seed 003's option B as its design describes it: a separate MCP service built on the official
SDK (``MCPServer``, stdio) that keeps the agent's current URL and reaches the app over HTTP with
``Accept: text/markdown``. bench/mcp_bench.py runs it beside bin/mcp-server and the lean
hand-written wrapper (mcp_wrapper_server.py), so the table separates what the HTTP hop costs
from what the SDK adds.

Usage: mcp_sdk_wrapper_server.py BASE_URL   (HARMONIC_API_TOKEN in the environment)
"""

from __future__ import annotations

import os
import sys
from typing import Any

import httpx
from mcp.server.mcpserver import MCPServer

BASE = sys.argv[1].rstrip("/")
CLIENT = httpx.Client(base_url=BASE, timeout=30,
                      headers={"Authorization": f"Bearer {os.environ['HARMONIC_API_TOKEN']}"})
CURRENT = {"path": "/"}
server = MCPServer("harmonic-wrapper")


@server.tool()
def navigate(path: str) -> str:
    """Open a Harmonic page and read it as Markdown."""
    response = CLIENT.get(path, headers={"Accept": "text/markdown"})
    response.raise_for_status()
    CURRENT["path"] = path
    return f"Current URL: {path}\n\n{response.text}"


@server.tool()
def execute_action(action: str, params: dict[str, Any] | None = None,
                   path: str | None = None) -> str:
    """Run an action offered by the current page (or by ``path``)."""
    page = path or CURRENT["path"]
    response = CLIENT.post(f"{page}/actions/{action}", json=params or {},
                           headers={"Accept": "application/json"})
    response.raise_for_status()
    return response.text


if __name__ == "__main__":
    server.run()

"""Calling our own MCP tools in-process, as a run's user.

The MCP package serves tools to remote clients; a workflow step is a local client. This adapter
sends a real ``tools/call`` through ``app.mcp.server.McpServer`` (so argument validation, error
mapping and output-schema checks are the served ones) with a memory session and a channel that
drops notifications and refuses server-to-client requests (a queued step has nobody to ask).
"""

from __future__ import annotations

import itertools
from typing import Any

from app.actions import ballot_secrecy
from app.core.identity import Identity
from app.mcp import harmonic  # noqa: F401  (registers navigate, execute_action, ...)
from app.mcp.context import QuietChannel, SessionState
from app.mcp.registry import REGISTRY
from app.mcp.server import McpServer

_ids = itertools.count(1)
_server: Any = None


def _mcp_server() -> Any:
    global _server
    if _server is None:
        _server = McpServer(REGISTRY)
    return _server


def tool_schema(name: str) -> dict[str, Any] | None:
    tool = _mcp_server().registry.tools.get(name)
    return dict(tool.input_schema) if tool else None


def call_tool(name: str, arguments: dict[str, Any], identity: Identity | None,
              session_id: str = "workflow") -> dict[str, Any]:
    """``tools/call`` as ``identity``; returns the CallToolResult dict (may have isError).

    Raises LookupError for an unknown tool and ValueError for a protocol-level error.
    """
    if ballot_secrecy.casts_a_ballot(name, arguments):
        # A run keeps its steps' arguments with whoever started it: a ballot is cast by hand.
        raise ValueError("a ballot is cast by its voter, not by a workflow step")
    server = _mcp_server()
    if name not in server.registry.tools:
        raise LookupError(f"unknown MCP tool '{name}' "
                          f"(defined: {', '.join(sorted(server.registry.tools))})")
    session = SessionState(session_id)
    session.initialized = True
    message = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call",
               "params": {"name": name, "arguments": arguments}}
    response = server.handle(message, session, QuietChannel("not available to a workflow step"),
                             identity)
    if response is None:
        raise ValueError(f"{name} was cancelled")
    if "error" in response:
        raise ValueError(f"{name}: {response['error'].get('message')}")
    return response["result"]


def result_text(result: dict[str, Any]) -> str:
    parts = [block.get("text", "") for block in result.get("content") or []
             if isinstance(block, dict) and block.get("type") == "text"]
    return "\n".join(p for p in parts if p)

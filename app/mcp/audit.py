"""The tool-call audit log: who called which tool where, with which parameter names, and how
it went. Values are never stored; the owner of the token reads it at /u/<handle>/agent-activity.
"""

from __future__ import annotations

import logging
from typing import Any

from app.extensions import db
from app.mcp.context import ToolContext
from app.models.mcp import McpToolCall

log = logging.getLogger("harmonic.mcp")

def _outcome(result: dict[str, Any] | None) -> tuple[str, str | None]:
    if result is None:
        return "cancelled", None
    if result.get("isError"):
        texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
        return "tool_error", (texts[0][:500] if texts else None)
    return "ok", None


def record(ctx: ToolContext, tool: str, args: dict[str, Any], result: dict[str, Any] | None,
           seconds: float) -> None:
    """The ``McpServer.on_tool_call`` hook: one McpToolCall row per call, on both transports."""
    identity = ctx.identity
    if identity is None:  # /mcp with auth off (loopback development): nobody to show it to
        return
    params = args.get("params")
    names = sorted(params) if isinstance(params, dict) else sorted(args)
    outcome, message = _outcome(result)
    path = ctx.audit.get("path") or _text(args.get("path"))
    action = ctx.audit.get("action") or _text(args.get("action"))
    try:
        db.session.rollback()  # never commit a tool's half-done work along with the audit
        db.session.add(McpToolCall(
            user_id=getattr(identity, "user_id", None),
            token_id=getattr(identity, "token_id", None),
            session_id=None if ctx.session.stateless else ctx.session.id[:64],
            transport=getattr(ctx.session, "transport", "stdio"), tool=tool[:128],
            path=path, action=action[:128] if action else None,
            param_names=",".join(str(n) for n in names)[:2000], outcome=outcome,
            message=message, duration_ms=int(seconds * 1000)))
        db.session.commit()
    except Exception:
        db.session.rollback()
        log.exception("could not record the call of %s", tool)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def recent_calls(user_id: Any, limit: int = 100) -> list[McpToolCall]:
    return list(db.session.query(McpToolCall).filter(McpToolCall.user_id == user_id)
                .order_by(McpToolCall.created_at.desc()).limit(limit))

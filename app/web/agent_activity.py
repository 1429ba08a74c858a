"""The owner's page of what their agents did: /u/<handle>/agent-activity, read from the MCP
tool-call audit log (the web layer reads app.mcp; app.mcp never reads the web layer)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from app.actions import Context
from app.mcp import audit
from app.services.errors import Forbidden
from app.web.loaders import user_page
from app.web.pages import Page, page

bp = Blueprint("agent_activity", __name__)


def _load(user: Any, user_handle: str, **args: Any) -> Context:
    ctx = user_page("agent_activity", "/agent-activity")(user=user, user_handle=user_handle,
                                                          **args)
    if user is None or user.id != ctx.item.id:
        raise Forbidden("only the owner sees what their agents did")
    return ctx


@page(bp, "agent_activity", "/u/<user_handle>/agent-activity", _load)
def agent_activity(ctx: Context) -> Page:
    calls = audit.recent_calls(ctx.item.id)
    return Page(ctx=ctx, title=f"Agent activity of {ctx.item.handle}",
                template="mcp/agent_activity", data={"calls": calls, "subject": ctx.item},
                nav=[(ctx.item.handle, f"/u/{ctx.item.handle}")])

"""A person's call log: /u/<handle>/agent-activity, every call made for them (with their own
tokens, by their agents, by anyone acting for them in a representation session), read from
the MCP tool-call audit log and filtered by ``?agent=<handle>`` and ``?day=today|yesterday|
YYYY-MM-DD`` (the web layer reads app.mcp; app.mcp never reads the web layer)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request
from sqlalchemy import select

from app.actions import Context
from app.extensions import db
from app.mcp import audit
from app.models import User
from app.services import agents, items
from app.services.errors import Forbidden, invalid_param
from app.web.loaders import user_page
from app.web.pages import Page, page

bp = Blueprint("agent_activity", __name__)


def _load(user: Any, user_handle: str, **args: Any) -> Context:
    ctx = user_page("agent_activity", "/agent-activity")(user=user, user_handle=user_handle,
                                                          **args)
    if user is None or user.id != ctx.item.id:
        raise Forbidden("only the person sees the calls made for them")
    return ctx


def _agent(handle: str | None) -> User | None:
    handle = (handle or "").strip().lstrip("@").lower()
    if not handle:
        return None
    found = db.session.scalar(select(User).where(User.handle == handle).limit(1))
    if found is None:
        raise invalid_param("agent", f"nobody is called @{handle}")
    return found


@page(bp, "agent_activity", "/u/<user_handle>/agent-activity", _load)
def agent_activity(ctx: Context) -> Page:
    day = request.args.get("day") or ""
    try:
        audit.day_bounds(day)
    except ValueError:
        raise invalid_param("day", "use today, yesterday or a date as YYYY-MM-DD") from None
    agent = _agent(request.args.get("agent"))
    rows = audit.calls_for(ctx.item, agent=agent, day=day)
    return Page(ctx=ctx, title=f"Calls made for {ctx.item.handle}",
                template="mcp/agent_activity",
                data={"rows": rows, "subject": ctx.item, "agent": agent, "day": day,
                      "gone": items.gone_paths(row.call.path for row in rows if row.call.path),
                      "agents": [row.agent for row in agents.agents_of(ctx.item)]},
                nav=[(ctx.item.handle, f"/u/{ctx.item.handle}")])

"""Membership pages: a studio's invites, an invite link anyone can open (/invites/<code>), the
place to enter an invite code (/join), and a person's agent accounts."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from app.actions import Context
from app.core import config
from app.models import User
from app.services import agents, invites, members, permissions
from app.services.errors import Forbidden
from app.web import core_pages, loaders
from app.web.pages import Page, page

bp = Blueprint("membership", __name__)

# How a page answers an invite it cannot use: unknown 404, gone (studio deleted, revoked,
# expired, used up) 410, addressed to someone else 403. The page still explains and keeps
# the code form.
PROBLEM_STATUS = {"unknown": 404, "deleted": 410, "revoked": 410, "expired": 410,
                  "used_up": 410, "not_yours": 403}


def _admins_only(page_name: str, sub: str) -> Any:
    @loaders.joining
    def load(user: loaders.Person, handle: str, **_: Any) -> Context:
        ctx = loaders.studio_ctx(page_name, user, handle, sub)
        if ctx.member.role != "admin":
            raise Forbidden(f"only admins of {ctx.studio.name} see and manage its invites; ask "
                            f"one (the team page lists them)",
                            link=f"/studios/{ctx.studio.handle}/team")
        return ctx

    return load


@page(bp, "studio_invites", "/studios/<handle>/invites",
      _admins_only("studio_invites", "/invites"))
def studio_invites(ctx: Context) -> Page:
    rows = [(invite, invites.state(invite)) for invite in invites.of_studio(ctx.studio)]
    return Page(ctx, f"Invites to {ctx.studio.name}", "studios/invites",
                {"rows": rows, "base": config.base_url()},
                nav=core_pages.studio_nav(ctx) + [("Team", f"/studios/{ctx.studio.handle}"
                                                           "/team")])


def _invite_ctx(user: User | None, code: str, **_: Any) -> Context:
    invite = invites.find(code)
    ctx = Context(page="invite", path=f"/invites/{invites.clean_code(code)}", user=user,
                  item=invite, base_url=config.base_url())
    if invite is not None:
        ctx.studio = invite.studio
        ctx.member = permissions.membership(invite.studio, user)
    return ctx


@page(bp, "invite", "/invites/<code>", _invite_ctx, public=True)
def invite_show(ctx: Context) -> Page:
    invite = ctx.item
    problem = invites.problem(invite, ctx.user)
    if invite is not None and ctx.member is not None:
        problem = None  # a member who opens the link again is simply shown the way in
    title = f"Join {invite.studio.name}" if invite is not None else "Invite not found"
    status = PROBLEM_STATUS[problem.kind] if problem else 200
    return Page(ctx, title, "invites/show",
                {"invite": invite, "problem": problem, "code": invites.clean_code(ctx.path),
                 "member_count": members.count(invite.studio) if invite else 0,
                 "next": ctx.path},
                status=status)


@page(bp, "join_code", "/join", loaders.site_page("join_code", "/join"), public=True)
def join_code(ctx: Context) -> Page:
    code = invites.clean_code(request.args.get("code"))
    if code:
        found = _invite_ctx(ctx.user, code)
        if found.item is not None:
            return invite_show(found)  # the invite's own page (its forms post there)
        problem = invites.problem(None)
        return Page(ctx, "Invite not found", "invites/join",
                    {"problem": problem, "code": request.args.get("code", "")}, status=404)
    pending = invites.pending_for(ctx.user) if ctx.user else []
    return Page(ctx, "Join a studio", "invites/join",
                {"problem": None, "code": "", "pending": pending})


@page(bp, "user_agents", "/u/<user_handle>/settings/agents",
      loaders.user_page("user_agents", "/settings/agents"))
def user_agents(ctx: Context) -> Page:
    return Page(ctx, "Your agents", "users/agents",
                {"subject": ctx.item, "rows": agents.agents_of(ctx.item)},
                nav=core_pages.settings_nav(ctx))

"""Membership actions: roles, removing and leaving, invite links and invitations, and the
agent accounts a person owns."""

from __future__ import annotations

from typing import Any

from app.actions import rules
from app.actions.effects import (
    CREDENTIALS,
    DESTRUCTIVE,
    IDEMPOTENT_DESTRUCTIVE,
    IDEMPOTENT_WRITE,
    REVOKE_CREDENTIALS,
    WRITE,
)
from app.actions.registry import Context, Param, Result, action
from app.models.studios import INVITE_ROLES, ROLES
from app.services import agents, invites, members

HANDLE = Param("handle", "string", "The person's handle (with or without @)", required=True,
               max_length=41)
EXPIRES = Param("expires", "string", "Lifetime like 7d, 12h or 'never'", max_length=16,
                default="7d")
SCOPES = Param("scopes", "string", "Comma list of read, write", max_length=32,
               default="read,write")
AGENT = Param("handle", "string", "Your agent's handle", required=True, max_length=41)
TOKEN_EXPIRES = Param("expires", "string", "Token lifetime like 30d, 1y or 'never'",
                      max_length=16, default="90d")


def _team(ctx: Context) -> str:
    return f"/studios/{ctx.studio.handle}/team"


def _invite_data(ctx: Context, invite: Any) -> dict[str, Any]:
    return {"code": invite.code, "url": f"{ctx.base_url.rstrip('/')}{invites.path_of(invite)}",
            "path": invites.path_of(invite), "role": invite.role, "max_uses": invite.max_uses,
            "expires_at": invite.expires_at.isoformat() if invite.expires_at else None}


# Roles, removing, leaving ---------------------------------------------------------------------

@action("change_role", "Give a member another role: admin (manages the studio and its people), "
        "member (takes part) or guest (reads only); a studio always keeps one admin",
        "studio_team", rules.admin,
        params=(HANDLE, Param("role", "string", "The new role", required=True, enum=ROLES)),
        effect=IDEMPOTENT_WRITE)
def change_role(ctx: Context, p: dict[str, Any]) -> Result:
    member = members.change_role(ctx.studio, p["handle"], p["role"])
    return Result(f"@{member.user.handle} is now {member.role}.", _team(ctx),
                  data={"handle": member.user.handle, "role": member.role})


@action("remove_member", "Remove a member from this studio (what they wrote stays)",
        "studio_team", rules.admin, params=(HANDLE,), effect=DESTRUCTIVE)
def remove_member(ctx: Context, p: dict[str, Any]) -> Result:
    person = members.remove(ctx.studio, ctx.user, p["handle"])
    return Result(f"Removed @{person.handle} from {ctx.studio.name}.", _team(ctx),
                  data={"handle": person.handle})


@action("leave_studio", "Leave this studio (the last admin hands it over first)",
        "studio_team", rules.member, effect=DESTRUCTIVE, guests=True)
def leave_studio(ctx: Context, p: dict[str, Any]) -> Result:
    members.leave(ctx.studio, ctx.member)
    return Result(f"You left {ctx.studio.name}.", "/studios")


# Invites -------------------------------------------------------------------------------------

@action("create_invite", "Create an invite link to share: anyone who opens it can join (it "
        "explains the studio first, and signs them up if needed)",
        ("studio_invites", "studio_settings"), rules.admin,
        params=(EXPIRES,
                Param("max_uses", "integer", "How many people may join with it (empty: no "
                      "limit until it expires)", minimum=1),
                Param("role", "string", "What joining makes them", enum=INVITE_ROLES,
                      default="member")),
        effect=WRITE)
def create_invite(ctx: Context, p: dict[str, Any]) -> Result:
    invite = invites.create_link(ctx.studio, ctx.user, p.get("expires") or "7d",
                                 p.get("max_uses"), p.get("role"))
    data = _invite_data(ctx, invite)
    return Result(f"Invite link created: {data['url']}",
                  f"/studios/{ctx.studio.handle}/invites", created=True,
                  data={**data, "link": data["url"]})


@action("invite_member", "Invite a person by handle: they see the invitation in their settings "
        "and on this studio's join page, and join when they accept it",
        ("studio_team", "studio_invites"), rules.admin,
        params=(HANDLE, Param("role", "string", "What accepting makes them", enum=INVITE_ROLES,
                              default="member")),
        effect=IDEMPOTENT_WRITE)
def invite_member(ctx: Context, p: dict[str, Any]) -> Result:
    invite, created = invites.invite_person(ctx.studio, ctx.user, p["handle"], p.get("role"))
    handle = invite.invitee.handle if invite.invitee else p["handle"]
    message = (f"Invited @{handle}: they accept it at {invites.path_of(invite)}" if created
               else f"@{handle} already has a pending invitation ({invites.path_of(invite)})")
    return Result(message, f"/studios/{ctx.studio.handle}/invites", created=created,
                  data={**_invite_data(ctx, invite), "handle": handle})


@action("revoke_invite", "Revoke an invite link or invitation: nobody can join with it any more",
        "studio_invites", rules.admin,
        params=(Param("code", "string", "The invite's code (or its link)", required=True,
                      max_length=200),),
        effect=IDEMPOTENT_DESTRUCTIVE)
def revoke_invite(ctx: Context, p: dict[str, Any]) -> Result:
    invite = invites.revoke(ctx.studio, p["code"])
    return Result(f"Invite {invite.code} revoked.", f"/studios/{ctx.studio.handle}/invites",
                  data={"code": invite.code})


def _invite_open(ctx: Context) -> bool:
    return ctx.item is not None and ctx.member is None and invites.problem(ctx.item,
                                                                           ctx.user) is None


def _invite_unavailable(ctx: Context) -> str | None:
    found = invites.problem(ctx.item, ctx.user)
    return found.message if found else None


@action("accept_invite", "Join the studio this invite is for", "invite", rules.signed_in,
        available=_invite_open, done=lambda ctx: ctx.member is not None,
        unavailable_reason=_invite_unavailable, effect=IDEMPOTENT_WRITE, guests=True)
def accept_invite(ctx: Context, p: dict[str, Any]) -> Result:
    member, created = invites.accept(ctx.item, ctx.user)
    studio = ctx.item.studio
    message = (f"Welcome to {studio.name}! You joined as {member.role}." if created
               else f"You are already a member of {studio.name}.")
    return Result(message, f"/studios/{studio.handle}",
                  data={"studio": studio.handle, "role": member.role})


# Agent accounts ------------------------------------------------------------------------------

def _agents_page(ctx: Context) -> str:
    return f"/u/{ctx.user.handle}/settings/agents"


@action("create_agent", "Create an agent account you own, with its first API token (shown "
        "once); it joins studios through invites like anyone", "user_agents", rules.self_user,
        params=(Param("handle", "string", "The agent's handle: lowercase letters, digits, - "
                      "and _", required=True, max_length=40),
                Param("name", "string", "Its display name", max_length=120),
                SCOPES, TOKEN_EXPIRES),
        effect=CREDENTIALS)
def create_agent(ctx: Context, p: dict[str, Any]) -> Result:
    agent, token, plaintext = agents.create_agent(ctx.user, p["handle"], p.get("name") or "",
                                                  p.get("scopes") or "read,write",
                                                  p.get("expires") or "90d")
    return Result(f"Agent @{agent.handle} created. Copy its token now: it is shown only once.",
                  _agents_page(ctx), created=True,
                  data={"handle": agent.handle, "token": plaintext, "prefix": token.prefix})


@action("create_agent_token", "Give one of your agents a new API token (shown once)",
        "user_agents", rules.self_user, params=(AGENT, SCOPES, TOKEN_EXPIRES),
        effect=CREDENTIALS)
def create_agent_token(ctx: Context, p: dict[str, Any]) -> Result:
    token, plaintext = agents.new_token(ctx.user, p["handle"], p.get("scopes") or "read,write",
                                        p.get("expires") or "90d")
    return Result("Token created. Copy it now: it is shown only once.", _agents_page(ctx),
                  created=True, data={"token": plaintext, "prefix": token.prefix})


@action("revoke_agent", "Revoke one of your agents: every token it holds stops working at once "
        "(what it did stays; a new token brings it back)", "user_agents", rules.self_user,
        params=(AGENT,), effect=REVOKE_CREDENTIALS)
def revoke_agent(ctx: Context, p: dict[str, Any]) -> Result:
    count = agents.revoke(ctx.user, p["handle"])
    return Result(f"Agent @{p['handle'].lstrip('@')} revoked ({count} token"
                  f"{'s' if count != 1 else ''}).", _agents_page(ctx), data={"revoked": count})

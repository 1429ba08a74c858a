"""Grant and representation actions: a person grants a member of a studio some of their
actions there until a time, and revokes it; the member starts and ends a representation
session in which those actions run for the person (``app.services.grants``; what runs in a
session is decided by ``app.core.authorization``)."""

from __future__ import annotations

from typing import Any

from app.actions import rules
from app.actions.effects import CREDENTIALS, REVOKE_CREDENTIALS, SESSION_ACTIONS, WRITE
from app.actions.registry import ACTIONS, Context, Param, Result, action
from app.services import grants
from app.services.errors import invalid_param

PAGE = "user_grants"


def grants_page(ctx: Context) -> str:
    return f"/u/{ctx.user.handle}/settings/grants"


def grantable(name: str) -> bool:
    """Whether an action may be granted: never one that manages credentials or grants, nor
    the sessions' own (only the person does those)."""
    act = ACTIONS.get(name)
    return act is not None and name not in SESSION_ACTIONS and not act.effect.credentials \
        and PAGE not in act.pages


def _action_names(value: Any) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value or [])
    names = [str(n).strip() for n in items if str(n).strip()]
    bad = [n for n in names if not grantable(n)]
    if bad:
        raise invalid_param("actions", f"not an action you can grant: {', '.join(bad)}")
    if not names:
        raise invalid_param("actions", "name at least one action")
    return names


def _terms(grant: Any) -> dict[str, Any]:
    return {"grant_id": str(grant.id), "studio": grant.studio.handle,
            "principal": grant.principal.handle, "member": grant.grantee.handle,
            "actions": grant.action_names, "until": grant.expires_at.isoformat()}


@action("grant_actions", "Let a member of one of your studios (a person or an agent) run some "
        "of your actions there for you, until a time; they act for you in a representation "
        "session, and you can revoke it at once", PAGE, rules.self_user,
        params=(Param("studio", "string", "The studio's handle", required=True, max_length=40),
                Param("member", "string", "The member's handle (a person or an agent)",
                      required=True, max_length=41),
                Param("actions", "string", "The actions they may run for you, a comma list "
                      "of action names, e.g. vote,add_comment", required=True,
                      max_length=1000),
                Param("until", "datetime", "When the grant ends", required=True)),
        effect=CREDENTIALS)
def grant_actions(ctx: Context, p: dict[str, Any]) -> Result:
    grant = grants.give(ctx.user, p["studio"], p["member"], _action_names(p["actions"]),
                        p["until"])
    return Result(f"@{grant.grantee.handle} may now act for you in {grant.studio.name}.",
                  grants_page(ctx), created=True, data=_terms(grant))


@action("revoke_grant", "Revoke a grant you gave: it ends at once, and so does any session "
        "acting under it", PAGE, rules.self_user,
        params=(Param("grant_id", "string", "The grant's id", required=True, max_length=40),),
        effect=REVOKE_CREDENTIALS)
def revoke_grant(ctx: Context, p: dict[str, Any]) -> Result:
    grant = grants.revoke(ctx.user, p["grant_id"])
    return Result(f"Grant to @{grant.grantee.handle} revoked.", grants_page(ctx),
                  data=_terms(grant))


@action("start_representation", "Start acting for a person who granted you actions: until "
        "you end it (an hour at most), the actions of the grant run as theirs, recorded with "
        "your name beside theirs", PAGE, rules.self_user,
        params=(Param("principal", "string", "The handle of the person you act for",
                      required=True, max_length=41),
                Param("studio", "string", "The studio, when they granted you actions in more "
                      "than one", max_length=40),
                Param("minutes", "integer", "How long, in minutes (60 at most)", minimum=1,
                      maximum=60, default=60)),
        effect=WRITE)
def start_representation(ctx: Context, p: dict[str, Any]) -> Result:
    session = grants.start(ctx.user, p["principal"], p.get("studio"), p.get("minutes") or 60)
    grant = session.grant
    return Result(f"You now act for @{grant.principal.handle} in {grant.studio.name} until "
                  f"{session.ends_at.isoformat(timespec='minutes')}.",
                  f"/studios/{grant.studio.handle}", created=True,
                  data={**_terms(grant), "session_ends": session.ends_at.isoformat()})


@action("end_representation", "End a representation session: your own, or (for the person "
        "acted for) the one a member runs for you", PAGE, rules.self_user,
        params=(Param("representative", "string", "Who acts for you (when you end theirs)",
                      max_length=41),),
        effect=WRITE)
def end_representation(ctx: Context, p: dict[str, Any]) -> Result:
    session = grants.end(ctx.user, p.get("representative"))
    return Result(f"@{session.representative.handle} no longer acts for "
                  f"@{session.principal.handle}.", grants_page(ctx),
                  data={"principal": session.principal.handle,
                        "representative": session.representative.handle})

"""Connected apps: the clients a person let in by signing in, with their last use, and the
``disconnect_app`` action (revokes every grant of that client and forgets the consent) on all
three doors (HTML form, ``POST …/actions/disconnect_app``, MCP ``execute_action``)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from app.actions import Context, Param, Result, action, rules
from app.actions.effects import REVOKE_CREDENTIALS
from app.oauth import store
from app.services.errors import NotFound
from app.web import loaders
from app.web.core_pages import settings_nav
from app.web.pages import Page, page

bp = Blueprint("oauth_pages", __name__)


@page(bp, "user_apps", "/u/<user_handle>/settings/apps",
      loaders.user_page("user_apps", "/settings/apps"))
def user_apps(ctx: Context) -> Page:
    return Page(ctx, "Connected apps", "users/apps",
                {"subject": ctx.item, "apps": store.connected_apps(ctx.item)},
                nav=settings_nav(ctx))


@action("disconnect_app", "Revoke a connected app: its tokens stop working at once, and it "
        "must ask you again", "user_apps", rules.self_user,
        params=(Param("client_id", "string", "The app's client id (see the list)",
                      required=True, max_length=2048),),
        effect=REVOKE_CREDENTIALS)
def disconnect_app(ctx: Context, p: dict[str, Any]) -> Result:
    if store.disconnect(ctx.user, p["client_id"]) == 0:
        raise NotFound("no connected app has this client id")
    return Result("App disconnected: its tokens no longer work.",
                  f"/u/{ctx.user.handle}/settings/apps")

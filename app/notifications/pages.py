"""Pages: the inbox (/inbox); in a person's settings, notification levels, channel preferences,
email address and digest, and personal webhooks; a studio's webhooks; one webhook with its
delivery log."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from app.actions import Context
from app.core import config
from app.models import User
from app.notifications import inbox, preferences, smtp, webhooks
from app.services.errors import Unauthorized
from app.web import loaders
from app.web.core_pages import STUDIO_SECTIONS, settings_nav, studio_nav
from app.web.pages import Page, page

bp = Blueprint("notifications", __name__)

STUDIO_SECTIONS.append(("Webhooks", "webhooks"))


@page(bp, "inbox", "/inbox", loaders.site_page("inbox", "/inbox"))
def inbox_page(ctx: Context) -> Page:
    unread_only = request.args.get("unread") in ("1", "true", "yes")
    rows, after = inbox.listing(ctx.user, request.args.get("before"), unread_only)
    return Page(ctx, "Inbox", "notifications/inbox",
                {"notifications": rows, "unread": inbox.unread_count(ctx.user),
                 "next_page": _next(after, unread_only)})


def _next(after: str | None, unread_only: bool) -> str | None:
    if after is None:
        return None
    return f"/inbox?before={after}" + ("&unread=1" if unread_only else "")


@page(bp, "notification_settings", "/u/<user_handle>/settings/notifications",
      loaders.user_page("notification_settings", "/settings/notifications"))
def notification_settings(ctx: Context) -> Page:
    return Page(ctx, "Notification settings", "notifications/settings",
                {"subject": ctx.item, "levels": inbox.studio_levels(ctx.item),
                 "preferences": preferences.table(ctx.item),
                 "kind_words": preferences.KIND_WORDS, "channel_words": preferences.CHANNEL_WORDS,
                 "mail_on": smtp.enabled()},
                nav=settings_nav(ctx))


@page(bp, "user_webhooks", "/u/<user_handle>/settings/webhooks",
      loaders.user_page("user_webhooks", "/settings/webhooks"))
def user_webhooks(ctx: Context) -> Page:
    return Page(ctx, "Your webhooks", "notifications/webhooks",
                {"hooks": webhooks.of_owner(ctx.item), "scope": "every studio you belong to"},
                nav=settings_nav(ctx))


@page(bp, "studio_webhooks", "/studios/<handle>/webhooks",
      loaders.studio_page("studio_webhooks", "/webhooks"))
def studio_webhooks(ctx: Context) -> Page:
    admin = ctx.member is not None and ctx.member.role == "admin"
    return Page(ctx, f"Webhooks of {ctx.studio.name}", "notifications/webhooks",
                {"hooks": webhooks.of_studio(ctx.studio) if admin else [], "admin": admin,
                 "scope": f"the studio {ctx.studio.name}"},
                nav=studio_nav(ctx) + [("Webhooks", f"/studios/{ctx.studio.handle}/webhooks")])


def _webhook(user: User | None, hook_id: str, **_: Any) -> Context:
    if user is None:  # (the page is not public: never reached without a user)
        raise Unauthorized("sign in or send 'Authorization: Bearer <token>'")
    hook = webhooks.find_for(user, hook_id)
    return Context(page="webhook", path=f"/webhooks/{hook.short_id}", user=user, item=hook,
                   base_url=config.base_url())


@page(bp, "webhook", "/webhooks/<hook_id>", _webhook)
def webhook_page(ctx: Context) -> Page:
    hook = ctx.item
    back = (("Webhooks", f"/studios/{hook.studio.handle}/webhooks") if hook.studio is not None
            else ("Your webhooks", f"/u/{ctx.user.handle}/settings/webhooks"))
    return Page(ctx, f"Webhook {hook.short_id}", "notifications/webhook",
                {"hook": hook, "deliveries": webhooks.deliveries(hook),
                 "retries": webhooks.schedule_words()}, nav=[back])

"""The inbox, notification-level, channel-preference, email and webhook actions (one registry,
every door)."""

from __future__ import annotations

from typing import Any

from app.actions import rules
from app.actions.effects import CREDENTIALS, DESTRUCTIVE, IDEMPOTENT_WRITE, WRITE
from app.actions.registry import Context, Param, Result, action
from app.models.notifications import CHANNELS, KINDS, LEVELS
from app.notifications import events, inbox, mailing, preferences, smtp, webhooks

# Managing one's inbox or webhooks is not news for anyone's inbox or webhooks.
events.QUIET.update({"mark_read", "mark_all_read", "set_notification_level", "create_webhook",
                     "disable_webhook", "enable_webhook", "delete_webhook",
                     "redeliver_webhook", "set_notification_preference", "set_email_digest",
                     "set_email"})


@action("mark_read", "Mark one notification read (its id is listed in the inbox)", "inbox",
        rules.signed_in,
        params=(Param("id", "string", "The notification's id, as the inbox lists it",
                      required=True, max_length=36),
                Param("open", "boolean", "Lead on to what the notification is about (its "
                      "location) instead of back to the inbox", default=False)),
        effect=IDEMPOTENT_WRITE)
def mark_read(ctx: Context, p: dict[str, Any]) -> Result:
    found = inbox.mark_read(ctx.user, p["id"])
    # Opening an entry from the inbox marks it read and goes on to it, without a word: the
    # page it opens is the news.
    return Result("" if p.get("open") else "Marked read.",
                  found.path if p.get("open") else "/inbox",
                  data={"id": found.short_id, "unread": inbox.unread_count(ctx.user),
                        "path": found.path})


@action("mark_all_read", "Mark every notification in your inbox read", "inbox", rules.signed_in,
        effect=IDEMPOTENT_WRITE)
def mark_all_read(ctx: Context, p: dict[str, Any]) -> Result:
    count = inbox.mark_all_read(ctx.user)
    return Result(f"Marked {count} notification{'s' if count != 1 else ''} read.", "/inbox",
                  data={"marked": count, "unread": 0})


@action("set_notification_level", "How much of one studio reaches your inbox: all, mentions "
                                  "(mentions and replies to your items only) or none",
        "notification_settings", rules.self_user,
        params=(Param("studio", "string", "The studio's handle", required=True, max_length=40),
                Param("level", "string", "all, mentions or none", required=True,
                      enum=LEVELS)),
        effect=IDEMPOTENT_WRITE)
def set_notification_level(ctx: Context, p: dict[str, Any]) -> Result:
    studio = inbox.set_level(ctx.user, p["studio"], p["level"])
    return Result(f"Notifications from {studio.name}: {p['level']}.", ctx.path,
                  data={"studio": studio.handle, "level": p["level"]})


@action("set_notification_preference", "Whether one type of notification reaches you by one "
                                       "channel: your inbox, email or your own webhooks",
        "notification_settings", rules.self_user,
        params=(Param("kind", "string", "The type: " + ", ".join(KINDS), required=True,
                      enum=KINDS),
                Param("channel", "string", "inbox, email or webhook", required=True,
                      enum=CHANNELS),
                Param("enabled", "boolean", "true: send it there; false: do not",
                      required=True)),
        effect=IDEMPOTENT_WRITE)
def set_notification_preference(ctx: Context, p: dict[str, Any]) -> Result:
    preferences.set_preference(ctx.user, p["kind"], p["channel"], bool(p["enabled"]))
    words = preferences.KIND_WORDS.get(p["kind"], p["kind"])
    where = preferences.CHANNEL_WORDS[p["channel"]].lower()
    return Result(f"{words}: {'sent to' if p['enabled'] else 'not sent to'} {where}.", ctx.path,
                  data={"kind": p["kind"], "channel": p["channel"],
                        "enabled": bool(p["enabled"])})


@action("set_email_digest", "Get notification emails once a day, gathered in one email (true), "
                            "or one by one as they happen (false)",
        "notification_settings", rules.self_user,
        params=(Param("daily", "boolean", "true: a daily digest; false: one by one",
                      required=True),),
        effect=IDEMPOTENT_WRITE)
def set_email_digest(ctx: Context, p: dict[str, Any]) -> Result:
    ctx.user.email_digest = bool(p["daily"])
    return Result("Emails come once a day, in one digest." if p["daily"]
                  else "Emails come one by one, as things happen.", ctx.path,
                  data={"daily": bool(p["daily"])})


# Credentials: a confirmed address lets replies by email comment as the person, so only the
# person sets it, never an app they connected or an agent.
@action("set_email", "Set the email address notifications are sent to (empty: none); a link "
                     "to confirm it is mailed there, and nothing else is until it is opened",
        ("notification_settings", "user_settings"), rules.self_user,
        params=(Param("email", "string", "The address", required=False,
                      max_length=254),),
        effect=CREDENTIALS)
def set_email(ctx: Context, p: dict[str, Any]) -> Result:
    to_confirm = preferences.set_email(ctx.user, p.get("email") or "")
    address = ctx.user.email
    if not address:
        message = "Email address removed: no notification is emailed."
    elif not to_confirm:
        message = f"{address} is your confirmed address."
    elif mailing.stage_confirmation(ctx.user) is not None:
        message = f"We sent a link to {address}: open it to confirm the address."
    else:
        message = f"{address} saved; this server sends no email, so it cannot be confirmed yet."
    return Result(message, ctx.path, data={"email": address,
                                           "confirmed": ctx.user.email_verified_at is not None,
                                           "mail": smtp.enabled()})


def _may_register(ctx: Context) -> str | None:
    return rules.admin(ctx) if ctx.studio is not None else rules.self_user(ctx)


@action("create_webhook", "Register a URL that is sent a signed JSON payload for every change "
                          "(in this studio, or in every studio you belong to); it must be on "
                          "the server's WEBHOOKS_ALLOW list. The signing secret is shown once",
        ("user_webhooks", "studio_webhooks"), _may_register,
        params=(Param("url", "string", "The http(s) URL to POST events to (for matrix: the "
                      "room's send URL, …/rooms/<room id>/send/m.room.message)", required=True,
                      max_length=2000, format="uri"),
                Param("format", "string", "The payload's shape: json (Harmonic's own, the "
                      "default), slack, discord, teams (a MessageCard) or matrix (an "
                      "m.room.message event)", enum=webhooks.FORMATS, default="json")),
        effect=WRITE)
def create_webhook(ctx: Context, p: dict[str, Any]) -> Result:
    hook = webhooks.create(ctx.user, p["url"], ctx.studio, p.get("format"))
    return Result(f"Webhook {hook.short_id} registered for {hook.url}. Keep its signing secret: "
                  "it is shown only now.", f"/webhooks/{hook.short_id}", created=True,
                  data={"id": hook.short_id, "url": hook.url, "format": hook.format,
                        "secret": hook.secret})


@action("disable_webhook", "Stop sending events to this webhook (deliveries not yet sent fail)",
        "webhook", rules.signed_in, available=lambda ctx: ctx.item.active,
        unavailable_reason=lambda ctx: "the webhook is already disabled",
        effect=IDEMPOTENT_WRITE)
def disable_webhook(ctx: Context, p: dict[str, Any]) -> Result:
    ctx.item.active = False
    return Result("Webhook disabled.", ctx.path, data={"id": ctx.item.short_id, "active": False})


@action("enable_webhook", "Send events to this webhook again", "webhook", rules.signed_in,
        available=lambda ctx: not ctx.item.active,
        unavailable_reason=lambda ctx: "the webhook is already enabled",
        effect=IDEMPOTENT_WRITE)
def enable_webhook(ctx: Context, p: dict[str, Any]) -> Result:
    webhooks.check_url(ctx.item.url)  # the allow-list may have narrowed meanwhile
    ctx.item.active = True
    return Result("Webhook enabled.", ctx.path, data={"id": ctx.item.short_id, "active": True})


@action("redeliver_webhook", "Send one of this webhook's deliveries again now, once (its id is "
                             "in the delivery log)", "webhook", rules.signed_in,
        params=(Param("delivery", "string", "The delivery's id, as the log lists it",
                      required=True, max_length=36),),
        available=lambda ctx: ctx.item.active,
        unavailable_reason=lambda ctx: "the webhook is disabled: enable it first",
        effect=WRITE)
def redeliver_webhook(ctx: Context, p: dict[str, Any]) -> Result:
    delivery = webhooks.redeliver(ctx.item, p["delivery"])
    return Result(f"Delivery {delivery.short_id} will be sent again.", ctx.path,
                  data={"id": ctx.item.short_id, "delivery": delivery.short_id,
                        "status": delivery.status})


@action("delete_webhook", "Delete this webhook and its delivery log", "webhook", rules.signed_in,
        effect=DESTRUCTIVE)
def delete_webhook(ctx: Context, p: dict[str, Any]) -> Result:
    hook = ctx.item
    back = (f"/studios/{hook.studio.handle}/webhooks" if hook.studio is not None
            else f"/u/{ctx.user.handle}/settings/webhooks")
    webhooks.delete(hook)
    return Result("Webhook deleted.", back, data={"id": hook.short_id})

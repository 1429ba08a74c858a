"""Where a notification goes: the person's inbox, their email, their own webhooks, each as
their preferences say (``preferences``), all in the transaction that caused it.

Every writer of notifications caused by a change (the action observer in ``events``) hands
its drafts here, so each channel hears of the same notifications and honours the same
choices.
"""

from __future__ import annotations

from app.extensions import db
from app.models import Studio
from app.notifications import inbox, mailing, preferences, webhooks
from app.notifications.inbox import Draft


def notify(drafts: list[Draft]) -> None:
    if not drafts:
        return
    choices = preferences.chosen({d.user_id for d in drafts}, {d.kind for d in drafts})
    inbox.write([d for d in drafts if preferences.wants(choices, d.user_id, d.kind, "inbox")])
    mailing.stage(drafts)  # checks the email channel itself, again when sending
    studios: dict[object, Studio | None] = {}
    for d in drafts:
        if preferences.wants(choices, d.user_id, d.kind, "webhook"):
            if d.studio_id not in studios:
                studios[d.studio_id] = db.session.get(Studio, d.studio_id) \
                    if d.studio_id is not None else None
            webhooks.stage_notification(d.user_id, d.kind, d.text, d.path, studios[d.studio_id])

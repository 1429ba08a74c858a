"""The one call that tells people something: ``notify(drafts)``.

Every notification goes through here, whatever caused it: an action (``events``), a close or a
"closes in 24 hours" reminder (``closings``). It runs in the causing transaction, so what it
writes commits with the cause or not at all, and it sends each notification where its person
chose (``preferences``, per type × channel): their inbox, their email (``mailing``, which
checks again when sending), their own webhooks.
"""

from __future__ import annotations

from app.extensions import db
from app.models import Studio
from app.notifications import inbox, mailing, preferences, webhooks
from app.notifications.inbox import Draft


def notify(drafts: list[Draft]) -> int:
    """Tell each draft's person on the channels they chose; returns how many inbox entries
    were new (a (person, key) already told is skipped, so telling twice tells once)."""
    if not drafts:
        return 0
    choices = preferences.chosen({d.user_id for d in drafts}, {d.kind for d in drafts})
    new = inbox.write([d for d in drafts
                       if preferences.wants(choices, d.user_id, d.kind, "inbox")])
    mailing.stage(drafts)
    studios: dict[object, Studio | None] = {}
    for d in drafts:
        if preferences.wants(choices, d.user_id, d.kind, "webhook"):
            if d.studio_id not in studios:
                studios[d.studio_id] = db.session.get(Studio, d.studio_id) \
                    if d.studio_id is not None else None
            webhooks.stage_notification(d.user_id, d.kind, d.text, d.path, studios[d.studio_id])
    return new


def send_committed() -> None:
    """Enqueue the webhook deliveries and emails that committed transactions of this session
    staged (for work outside a request, whose responses enqueue them)."""
    ids = webhooks.committed_ids()
    if ids:
        webhooks.enqueue(ids)
    emails = mailing.committed_ids()
    if emails:
        mailing.enqueue(emails)

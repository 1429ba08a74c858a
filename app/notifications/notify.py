"""The one call that tells people something: ``notify(drafts)``.

Every notification goes through here, whatever caused it: an action (``events``), a close or a
"closes in 24 hours" reminder (``closings``). It runs in the causing transaction, so what it
writes commits with the cause or not at all, and it sends each notification where its person
chose (``preferences``, per type × channel): their inbox, their email (``mailing``, which
checks again when sending), their own webhooks.
"""

from __future__ import annotations

import logging

from app.extensions import db
from app.models import Studio
from app.notifications import inbox, mailing, preferences, webhooks
from app.notifications.inbox import Draft

log = logging.getLogger("harmonic.notifications")


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
    staged: after each request, and after work outside one. A failure is logged, not raised:
    the rows are durable (``flask notifications sweep``, ``flask mail sweep`` or the next
    sending step enqueues them later) and the change itself has committed."""
    for staging, what in ((webhooks, "webhook deliveries"), (mailing, "emails")):
        ids = staging.STAGED.committed_ids()
        if ids:
            try:
                staging.enqueue(ids)
            except Exception:
                log.exception("could not enqueue %d %s", len(ids), what)

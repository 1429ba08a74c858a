"""Notifications: each person's inbox, ``@handle`` mentions, per-studio notification levels,
email, and webhooks that tell other systems about changes.

Domain modules (no Flask): ``settings``; ``inbox`` (reading, marking read, levels); ``notify``
(the one call every notification goes through: each to the inbox, email and webhooks its
recipient chose); ``preferences`` (per type × channel, the address and its confirmation, the
digest choice); ``events`` (what an executed action means for inboxes, email and webhooks,
written in the action's own transaction); ``closings`` (what a close or a "closes in 24 hours"
reminder means for them, and the sweep every worker runs); ``mailing`` (emails staged, sent by
the job queue with retries, the daily digest); ``compose`` (the emails themselves); ``smtp``
(the transport); ``mail_tokens`` (the signed reply address and links); ``replies`` (a reply by
email becomes a comment); ``webhooks`` (registration behind the outbound allow-list, signing,
delivery through the job queue on a retry schedule, redelivery); ``formats`` (the payload in
each receiver's shape). Adapters: ``web`` (wiring, header badge, CLI), ``pages``, ``actions``,
``mail_pages`` (the links' pages).

It hears of actions through ``app.actions.observers`` and of closes and reminders through
``app.services.closing``. The public surface for other features (automations), which import
nothing else from here: ``tell`` (``notify.notify``) and ``Draft`` (telling people),
``outcome`` (a close's outcome in words), ``digest`` (the webhook signature over
``timestamp.body``), ``stage_to`` (a delivery to one webhook) and ``send_committed`` (enqueue
what committed transactions staged).
Names load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.notifications.closings import outcome
    from app.notifications.inbox import Draft
    from app.notifications.notify import notify as tell
    from app.notifications.notify import send_committed
    from app.notifications.webhooks import digest, stage_to

# public name: (module, its name there)
_PUBLIC = {"Draft": ("inbox", "Draft"), "tell": ("notify", "notify"),
           "send_committed": ("notify", "send_committed"), "outcome": ("closings", "outcome"),
           "digest": ("webhooks", "digest"), "stage_to": ("webhooks", "stage_to")}
__all__ = ["Draft", "digest", "outcome", "send_committed", "stage_to", "tell"]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        module, attr = _PUBLIC[name]
        return getattr(importlib.import_module(f"app.notifications.{module}"), attr)
    raise AttributeError(f"module 'app.notifications' has no attribute {name!r}")

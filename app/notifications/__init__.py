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

Nothing outside this package imports it: it hears of actions through ``app.actions.observers``
and of closes and reminders through ``app.services.closing``.
"""

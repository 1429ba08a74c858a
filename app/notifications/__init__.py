"""Notifications: each person's inbox, ``@handle`` mentions, per-studio notification levels, and
webhooks that tell other systems about changes.

Domain modules (no Flask): ``settings``; ``inbox`` (reading, marking read, levels);
``notify`` (the one call every notification goes through); ``events`` (what an executed action
means for inboxes and webhooks, written in the action's own transaction); ``closings`` (what a
close or a "closes in 24 hours" reminder means for them, and the sweep every worker runs);
``webhooks`` (registration behind the outbound allow-list, signing, delivery through the job
queue on a retry schedule, redelivery); ``formats`` (the payload in each receiver's shape).
Adapters: ``web`` (wiring, header badge, CLI), ``pages``, ``actions``.

Nothing outside this package imports it: it hears of actions through ``app.actions.observers``
and of closes and reminders through ``app.services.closing``.
"""

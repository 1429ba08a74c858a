"""Notifications: each person's inbox, ``@handle`` mentions, per-studio notification levels, and
webhooks that tell other systems about changes.

Domain modules (no Flask): ``settings``; ``inbox`` (reading, marking read, levels, and the
deadline and closed-decision notifications computed when the inbox is read); ``events`` (what an
executed action means for inboxes and webhooks, written in the action's own transaction);
``webhooks`` (registration behind the outbound allow-list, signing, delivery through the job
queue with retries). Adapters: ``web`` (wiring, header badge, CLI), ``pages``, ``actions``.

Nothing outside this package imports it: it hears of actions through ``app.actions.observers``.
"""

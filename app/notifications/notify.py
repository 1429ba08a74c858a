"""The one call that tells people something: ``notify(drafts)``.

Every notification goes through here, whatever caused it: an action (``events``), a close or a
"closes in 24 hours" reminder (``closings``). It runs in the causing transaction, so what it
writes commits with the cause or not at all. Today it writes the inbox; another channel (email)
is one more call here, made from the same drafts, so that every cause reaches it alike.
"""

from __future__ import annotations

from app.notifications.inbox import Draft, write


def notify(drafts: list[Draft]) -> int:
    """Tell each draft's person; returns how many notifications were new (a (person, key)
    already told is skipped, so telling twice tells once)."""
    return write(drafts)

"""``@handle`` mentions: one pattern for the Markdown renderer (a link to /u/<handle>) and for
notifications (who was mentioned).

A mention is ``@`` followed by a user handle (``app.services.accounts.USER_HANDLE``), not preceded
by a word character, ``@``, ``/`` or ``.`` (so ``bob@example.com`` and ``/studios/@x`` mention
nobody), and not followed by another handle character or a ``.``-and-word (``@alice.example``).
"""

from __future__ import annotations

import re

MENTION = re.compile(r"(?<![\w@/.])@([a-z0-9][a-z0-9_-]{1,39})(?![\w-]|\.\w)")


def handles_in(*texts: str | None) -> set[str]:
    """The handles mentioned in ``texts`` (lower case, as handles are)."""
    found: set[str] = set()
    for text in texts:
        found.update(MENTION.findall(text or ""))
    return found

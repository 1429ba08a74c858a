"""What a webhook is sent, in the shape its receiver takes: Harmonic's own JSON, or a chat
message for Slack, Discord, Microsoft Teams or Matrix.

Each chat format says the same line (who did what, in which studio, with a link), in the
service's own message shape, written from each service's documentation:

- ``slack``: an incoming webhook's message: ``text`` (shown in notifications) and ``blocks``
  (a ``section`` with ``mrkdwn`` text and a ``context`` line);
- ``discord``: an execute-webhook call: ``content`` (at most 2,000 characters), with mentions
  switched off (``allowed_mentions``);
- ``teams``: an incoming webhook's legacy actionable ``MessageCard`` (``@type``, ``@context``,
  ``summary``, ``title``, ``text`` and an ``OpenUri`` action to the page);
- ``matrix``: an ``m.room.message`` event of ``msgtype`` ``m.text``, sent with PUT to the room's
  send URL (``…/rooms/<room id>/send/m.room.message``) followed by the delivery id as the
  transaction id, so a retried attempt is the same event for the homeserver.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

FORMATS = ("json", "slack", "discord", "teams", "matrix")
DISCORD_MAX = 2000


def line(payload: dict[str, Any]) -> str:
    """One readable line for a chat: who, what, where."""
    actor = payload.get("actor")
    who = f"@{actor['handle']}" if actor else "Harmonic"
    message = payload.get("message") or str(payload.get("event", "")).replace("_", " ")
    return f"{who} in {payload.get('studio')}: {message}"


def shape(fmt: str, url: str, delivery: str, payload: dict[str, Any]
          ) -> tuple[str, str, dict[str, Any]]:
    """(HTTP method, URL, body) for a delivery of ``payload`` in format ``fmt``."""
    text, link = line(payload), str(payload.get("location") or payload.get("page") or "")
    if fmt == "slack":
        return "POST", url, {
            "text": f"{text} {link}".strip(),
            "blocks": [{"type": "section",
                        "text": {"type": "mrkdwn", "text": f"{text}\n<{link}|Open in Harmonic>"
                                 if link else text}},
                       {"type": "context",
                        "elements": [{"type": "mrkdwn",
                                      "text": f"{payload.get('event')} · {payload.get('id')}"}]}]}
    if fmt == "discord":
        content = f"{text}\n{link}".strip()
        if len(content) > DISCORD_MAX:
            content = content[:DISCORD_MAX - 1] + "…"
        return "POST", url, {"content": content, "allowed_mentions": {"parse": []}}
    if fmt == "teams":
        card: dict[str, Any] = {"@type": "MessageCard", "@context": "https://schema.org/extensions",
                                "summary": text[:200], "themeColor": "4F46E5",
                                "title": str(payload.get("event", "")).replace("_", " "),
                                "text": text}
        if link:
            card["potentialAction"] = [{"@type": "OpenUri", "name": "Open in Harmonic",
                                        "targets": [{"os": "default", "uri": link}]}]
        return "POST", url, card
    if fmt == "matrix":
        parts = urlsplit(url)
        with_txn = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + delivery))
        return "PUT", with_txn, {"msgtype": "m.text", "body": f"{text} {link}".strip()}
    return "POST", url, payload

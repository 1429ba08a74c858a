"""Replies by email: a message an MTA hands over (``flask mail receive``) becomes a comment.

The reply must be addressed to ``reply+<token>@…`` (the Reply-To of a notification's email:
the token names that email, so its item, and is signed for its recipient), and its From
address must be that recipient's confirmed address. Then the quoted part is cut off (our
marker line, an "On … wrote:" line, an Outlook "Original Message" line, ``>`` lines and a
signature) and what is left is added as a comment on the item by that person, through the
``add_comment`` action as any door runs it (so the studio's rules, notifications and webhooks
apply). Anything else is refused with a reason, which is logged.

Only the envelope recipient (Postfix's ``${recipient}``, passed as ``--recipient``) or the
headers an MTA adds or keeps (Delivered-To, X-Original-To, To, Cc) are read for the token.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr

from sqlalchemy import select

from app.core.dispatch import dispatch
from app.core.identity import Identity
from app.extensions import db
from app.models import User
from app.models.notifications import MailMessage
from app.notifications import compose, mail_tokens, preferences

log = logging.getLogger("harmonic.mail")
MAX_TEXT = 20_000
_QUOTE_START = (re.compile(r"^\s*On\b.*\bwrote:\s*$", re.IGNORECASE),
                re.compile(r"^\s*-+\s*Original Message\s*-+\s*$", re.IGNORECASE),
                re.compile(r"^\s*(From|De|Von):\s.*$"))
_TOKEN = re.compile(r"^reply\+([0-9a-z-]+)@", re.IGNORECASE)


class Refused(Exception):
    """The reply is not accepted; ``message`` says why (for the MTA's bounce and the log)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class Accepted:
    handle: str
    location: str


def receive(raw: bytes, recipient: str | None = None) -> Accepted:
    """Turn one RFC 5322 message into a comment, or raise Refused (logged)."""
    try:
        return _receive(raw, recipient)
    except Refused as exc:
        log.warning("reply by email refused: %s", exc.message)
        raise


def _receive(raw: bytes, recipient: str | None) -> Accepted:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    if not isinstance(message, EmailMessage):  # (the default policy always makes one)
        raise Refused("not an email message")
    token = _token(message, recipient)
    if token is None:
        raise Refused("the message is not addressed to a reply address (reply+<token>@…)")
    short_id = mail_tokens.reply_message(token)
    row = db.session.scalar(select(MailMessage).where(MailMessage.short_id == short_id)) \
        if short_id else None
    sender = parseaddr(str(message.get("From", "")))[1].strip().lower()
    if row is None or row.purpose != "notification" or not row.path:
        raise Refused(f"the reply token names no email we sent (from {sender or 'nobody'})")
    problem = mail_tokens.reply_valid(token, row.user_id)
    if problem:
        raise Refused(f"{problem} (from {sender or 'nobody'})")
    user = db.session.get(User, row.user_id)
    address = preferences.verified_address(user) if user is not None else None
    if user is None or address is None or sender != address:
        raise Refused(f"the sender {sender or '(none)'} is not the confirmed address of the "
                      "person this email was sent to")
    text = strip_quoted(_body(message))
    if not text:
        raise Refused(f"the reply from {sender} has no text above the quoted email")
    item = row.path.split("#", 1)[0]
    done = dispatch("POST", f"{item}/actions/add_comment",
                    Identity(user_id=user.id, via="mail"), json={"text": text[:MAX_TEXT]},
                    accept="application/json")
    if done.status >= 400:
        said = (done.json or {}).get("error", {}) if isinstance(done.json, dict) else {}
        why = said.get("message") if isinstance(said, dict) else None
        raise Refused(f"the comment by @{user.handle} on {item} was refused: "
                      f"{why or done.text[:300]}")
    location = (done.json or {}).get("location", item) if isinstance(done.json, dict) else item
    log.info("reply by email from @%s became a comment at %s", user.handle, location)
    return Accepted(user.handle, str(location))


def _token(message: EmailMessage, recipient: str | None) -> str | None:
    candidates = [recipient] if recipient else []
    for header in ("Delivered-To", "X-Original-To", "To", "Cc"):
        candidates += [a for _, a in getaddresses([str(v) for v in message.get_all(header, [])])]
    for address in candidates:
        found = _TOKEN.match((address or "").strip())
        if found:
            return found.group(1)
    return None


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    content = part.get_content() if isinstance(part, EmailMessage) else ""
    if not isinstance(content, str):
        return ""
    if part.get_content_type() == "text/html":
        content = re.sub(r"(?is)<(script|style|blockquote).*?</\1>", "", content)
        content = re.sub(r"(?i)<br\s*/?>|</p>|</div>", "\n", content)
        content = re.sub(r"<[^>]+>", "", content)
    return content


def strip_quoted(text: str) -> str:
    """What the person wrote, without the email they answer below it."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() == compose.REPLY_MARKER or any(p.match(line) for p in _QUOTE_START):
            break
        if line.rstrip() == "--":  # a signature follows
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line)
    return "\n".join(kept).strip()

"""The signed tokens emails carry: a reply address, an unsubscribe link, an address's
confirmation link. All are signed with the app's secret key, each with its own salt, so one
can never stand for another.

The reply token lives in an address's local part (``reply+<token>@domain``), which RFC 5321
caps at 64 characters and which mail systems may fold to lower case: it is lower-case hex
(the message's short id, the day it was issued, an HMAC-SHA256 over both and the recipient),
not an itsdangerous token, which is longer and case-sensitive. The links are itsdangerous
tokens, as the app's other signed values are.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
import uuid
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer, URLSafeTimedSerializer

from app.core.config import app_config

REPLY_DAYS = 90  # a reply to an email older than this is refused (the token has expired)
CONFIRM_SECONDS = 3 * 24 * 3600
_REPLY = re.compile(r"^([0-9a-f]{8})-([0-9a-z]{1,8})-([0-9a-f]{24})$")


def _secret() -> str:
    return str(app_config().get("SECRET_KEY") or "")


def _reply_mac(short_id: str, issued: str, user_id: uuid.UUID) -> str:
    key = hashlib.sha256(("harmonic.mail.reply:" + _secret()).encode()).digest()
    message = f"{short_id}.{issued}.{user_id.hex}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:24]


def reply_token(short_id: str, user_id: uuid.UUID, now: float | None = None) -> str:
    issued = _base36(int((now if now is not None else time.time()) // 86400))
    return f"{short_id}-{issued}-{_reply_mac(short_id, issued, user_id)}"


def reply_message(token: str) -> str | None:
    """The short id of the message a reply token names, before checking it (None: not one)."""
    found = _REPLY.match(token.strip().lower())
    return found.group(1) if found else None


def reply_valid(token: str, user_id: uuid.UUID, now: float | None = None) -> str | None:
    """None when ``token`` was issued for ``user_id`` and has not expired; else why not."""
    found = _REPLY.match(token.strip().lower())
    if found is None:
        return "not a reply token"
    short_id, issued, mac = found.groups()
    if not hmac.compare_digest(mac, _reply_mac(short_id, issued, user_id)):
        return "the reply token's signature does not match"
    day = int((now if now is not None else time.time()) // 86400)
    if day - int(issued, 36) > REPLY_DAYS:
        return f"the reply token has expired (older than {REPLY_DAYS} days)"
    return None


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def unsubscribe_token(user_id: uuid.UUID, kind: str) -> str:
    # No expiry: an unsubscribe link must keep working in an old email.
    return URLSafeSerializer(_secret(), salt="harmonic.mail.unsubscribe").dumps(
        [user_id.hex, kind])


def unsubscribe_read(token: str) -> tuple[uuid.UUID, str] | None:
    try:
        value: Any = URLSafeSerializer(_secret(), salt="harmonic.mail.unsubscribe").loads(token)
        return uuid.UUID(str(value[0])), str(value[1])
    except (BadSignature, ValueError, TypeError, IndexError):
        return None


def confirm_token(user_id: uuid.UUID, address: str) -> str:
    return URLSafeTimedSerializer(_secret(), salt="harmonic.mail.confirm").dumps(
        [user_id.hex, address])


def confirm_read(token: str) -> tuple[uuid.UUID, str] | None:
    try:
        value: Any = URLSafeTimedSerializer(_secret(), salt="harmonic.mail.confirm").loads(
            token, max_age=CONFIRM_SECONDS)
        return uuid.UUID(str(value[0])), str(value[1])
    except (BadSignature, ValueError, TypeError, IndexError):
        return None

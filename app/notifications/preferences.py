"""Which types of notification reach a person by which channel, their email address and
whether it is confirmed, and whether email comes one by one or as a daily digest.

Channels: ``inbox`` (the /inbox page), ``email`` (``mailing``) and ``webhook`` (the person's
own webhooks, which are sent a ``notification`` event). A missing preference means the
channel's default: every type reaches the inbox; mentions and replies are emailed; no type
goes to webhooks until chosen (a person's webhooks already hear of every change). The
studio's level (all, mentions, none) comes first: what it keeps out reaches no channel.

An address set here is unconfirmed until the person opens the signed link mailed to it
(``mailing.stage_confirmation``): nothing is mailed to it and no reply from it is believed
before then.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import select

from app.extensions import db
from app.models import User
from app.models.base import utcnow
from app.models.notifications import CHANNELS, KINDS, NotificationPreference
from app.services.errors import Conflict, invalid_param

EMAILED = ("mention", "reply")  # the types emailed unless the person says otherwise
# How the settings page and the emails name each type, for people.
KIND_WORDS = {
    "mention": "Someone mentions you",
    "reply": "Someone comments on what you wrote",
    "new_decision": "A new decision is started",
    "new_commitment": "A new commitment is started",
    "deadline": "A deadline is less than a day away",
    "decision_closed": "A decision closes",
    "commitment_closed": "A commitment closes",
    "decision_outcome": "The outcome of a decision you voted on is written",
    "decision_review": "A decision's outcome is due for review",
    "automation": "An automation tells you something, or one of yours was paused",
}
CHANNEL_WORDS = {"inbox": "Inbox", "email": "Email", "webhook": "Your webhooks"}


def default(kind: str, channel: str) -> bool:
    if channel == "inbox":
        return True
    if channel == "email":
        return kind in EMAILED
    return False


def chosen(user_ids: Iterable[uuid.UUID], kinds: Iterable[str]
           ) -> dict[tuple[uuid.UUID, str, str], bool]:
    """The stored choices of these people for these types, every channel."""
    ids, wanted = list(set(user_ids)), list(set(kinds))
    if not ids or not wanted:
        return {}
    rows = db.session.execute(select(NotificationPreference.user_id, NotificationPreference.kind,
                                     NotificationPreference.channel,
                                     NotificationPreference.enabled)
                              .where(NotificationPreference.user_id.in_(ids),
                                     NotificationPreference.kind.in_(wanted)))
    return {(uid, kind, channel): enabled for uid, kind, channel, enabled in rows}


def wants(choices: dict[tuple[uuid.UUID, str, str], bool], user_id: uuid.UUID, kind: str,
          channel: str) -> bool:
    return choices.get((user_id, kind, channel), default(kind, channel))


def table(user: User) -> list[tuple[str, dict[str, bool]]]:
    """Each type with whether it reaches each channel, for the settings page."""
    choices = chosen([user.id], KINDS)
    return [(kind, {channel: wants(choices, user.id, kind, channel) for channel in CHANNELS})
            for kind in KINDS]


def set_preference(user: User, kind: str, channel: str, enabled: bool) -> None:
    if kind not in KINDS:
        raise invalid_param("kind", f"must be one of {', '.join(KINDS)}")
    if channel not in CHANNELS:
        raise invalid_param("channel", f"must be one of {', '.join(CHANNELS)}")
    row = db.session.scalar(select(NotificationPreference).where(
        NotificationPreference.user_id == user.id, NotificationPreference.kind == kind,
        NotificationPreference.channel == channel))
    if row is None:
        db.session.add(NotificationPreference(user_id=user.id, kind=kind, channel=channel,
                                              enabled=enabled))
    else:
        row.enabled = enabled
    db.session.flush()


def set_email(user: User, address: str) -> bool:
    """Set (or, with an empty address, remove) the person's address; True when there is a new
    one to confirm. The same address again keeps its confirmation."""
    address = (address or "").strip().lower()
    if address and ("@" not in address or address.startswith("@") or address.endswith("@")
                    or any(c.isspace() for c in address)):
        raise invalid_param("email", "is not an email address")
    if address == (user.email or ""):
        return bool(address) and user.email_verified_at is None
    if address and db.session.scalar(select(User.id).where(User.email == address,
                                                           User.id != user.id).limit(1)):
        raise Conflict("another account uses this email address")
    user.email = address or None
    user.email_verified_at = None
    db.session.flush()
    return bool(address)


def confirm_email(user_id: uuid.UUID, address: str) -> User | None:
    """Mark the address confirmed if it is still the person's; the person, else None."""
    user = db.session.get(User, user_id)
    if user is None or (user.email or "") != address:
        return None
    if user.email_verified_at is None:
        user.email_verified_at = utcnow()
    return user


def verified_address(user: User) -> str | None:
    return user.email if user.email and user.email_verified_at is not None else None

"""A form rendered once is accepted once: one-time keys for forms and their receipts.

``new_key`` gives a form its key when it is drawn; ``record`` writes the receipt with where
the result is, in the action's own transaction after its handler ran (so a refused or failed
run leaves no receipt and the corrected form can be sent again, and the action's first write
is still its own: work it hands to another connection is not kept waiting). A second submit of
the same form finds the receipt (``earlier``) and is shown that result instead of running
again. Two submits racing meet at the receipt's primary key: the second one's commit fails,
and the caller rolls it back and shows the first one's result (``location_of``).
"""

from __future__ import annotations

import re
import secrets
import uuid
from datetime import timedelta

from sqlalchemy import delete, select

from app.extensions import db
from app.models.base import utcnow
from app.models.form_receipts import FormReceipt

# Long enough for a page left open over a holiday and sent after signing in again.
KEPT_FOR = timedelta(days=30)
KEY = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


def new_key() -> str:
    return secrets.token_urlsafe(18)


def well_formed(key: object) -> bool:
    return isinstance(key, str) and KEY.match(key) is not None


def earlier(user_id: uuid.UUID, key: str) -> FormReceipt | None:
    """The receipt of an earlier submit of this form by this person, if any."""
    return db.session.get(FormReceipt, (user_id, key))


def record(user_id: uuid.UUID, key: str, action: str, location: str) -> None:
    """The receipt of a form that ran; the person's receipts older than ``KEPT_FOR`` go at
    the same time."""
    db.session.execute(delete(FormReceipt).where(FormReceipt.user_id == user_id,
                                                 FormReceipt.created_at < utcnow() - KEPT_FOR))
    db.session.add(FormReceipt(user_id=user_id, key=key, action=action, location=location,
                               created_at=utcnow()))


def location_of(user_id: uuid.UUID, key: str) -> str | None:
    """Where an earlier submit's result is, read afresh (after a rollback)."""
    return db.session.scalar(select(FormReceipt.location).where(
        FormReceipt.user_id == user_id, FormReceipt.key == key))

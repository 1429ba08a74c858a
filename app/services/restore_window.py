"""How long a soft-deleted item may be restored, and the 404 it answers meanwhile (``gone``).

Readers (``items.checked``) answer ``gone`` when asked for a deleted item; deletion and
restoration (``app.services.deletion``) and the pages that show the window read the same rule.
It sits below both so that neither imports the other.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from flask import current_app, has_app_context

from app.models import Studio, User
from app.models.base import utcnow
from app.services import permissions
from app.services.errors import NotFound

RESTORE_DAYS = 30
STUDIO_GRACE_DAYS = 7


def _days(name: str, default: int) -> timedelta:
    # Services sit below app.core, so the running app's config is read from Flask directly.
    config = current_app.config if has_app_context() else {}
    return timedelta(days=int(config.get(name, default)))


def length() -> timedelta:
    """How long a deleted item may be restored (``HARMONIC_RESTORE_DAYS``)."""
    return _days("HARMONIC_RESTORE_DAYS", RESTORE_DAYS)


def studio_grace() -> timedelta:
    return _days("HARMONIC_STUDIO_DELETE_GRACE_DAYS", STUDIO_GRACE_DAYS)


def restorable_until(item: Any) -> datetime:
    return item.deleted_at + length()


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M UTC")


def may_restore(member: Any, user: User | None, item: Any) -> bool:
    """The deleter, or a studio admin (through the one permission rule)."""
    if user is None or member is None:
        return False
    return item.deleted_by_id == user.id or permissions.is_admin(member)


def gone(studio: Studio, user: User | None, item_type: str, item: Any) -> NotFound:
    """The 404 a deleted item answers: plain for most, with the way back for who may restore."""
    when = stamp(item.deleted_at)
    member = permissions.membership(studio, user)
    until = restorable_until(item)
    if may_restore(member, user, item) and until > utcnow():
        link = f"/studios/{studio.handle}/deleted"
        return NotFound(f"the {item_type} '{item.short_id}' was deleted at {when}; you can "
                        f"restore it until {stamp(until)} at {link} (action restore_item)",
                        link=link, deleted=True)
    return NotFound(f"the {item_type} '{item.short_id}' was deleted at {when}", deleted=True)

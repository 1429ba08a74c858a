"""Sign-up, sign-in and profiles. Passwords are hashed as HARMONIC_PASSWORD_HASH says (scrypt)."""

from __future__ import annotations

import re
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import current_app
from sqlalchemy import select
from werkzeug.security import check_password_hash, generate_password_hash

from app.extensions import db
from app.models import User
from app.models.accounts import USER_TYPES
from app.services.errors import Conflict, Invalid, NotFound, invalid_param

USER_HANDLE = re.compile(r"^[a-z0-9][a-z0-9_-]{1,39}$")
MIN_PASSWORD = 8


def check_handle(handle: str, param: str = "handle") -> str:
    handle = (handle or "").strip().lower()
    if not USER_HANDLE.match(handle):
        raise invalid_param(param, "2–40 characters: lowercase letters, digits, - or _")
    return handle


def create_user(handle: str, name: str, email: str | None = None, password: str | None = None,
                user_type: str = "human") -> User:
    handle = check_handle(handle)
    errors = []
    if not (name or "").strip():
        errors.append({"param": "name", "message": "is required"})
    if email is not None and email.strip() and "@" not in email:
        errors.append({"param": "email", "message": "is not an email address"})
    if password is not None and len(password) < MIN_PASSWORD:
        errors.append({"param": "password", "message": f"needs {MIN_PASSWORD}+ characters"})
    if user_type not in USER_TYPES:
        errors.append({"param": "user_type", "message": f"one of {', '.join(USER_TYPES)}"})
    if errors:
        raise Invalid("invalid user", errors=errors)
    if db.session.scalar(select(User.id).where(User.handle == handle).limit(1)):
        raise Conflict(f"the handle '{handle}' is taken")
    email = (email or "").strip().lower() or None
    if email and db.session.scalar(select(User.id).where(User.email == email).limit(1)):
        raise Conflict("an account with this email exists")
    user = User(handle=handle, name=name.strip(), email=email, user_type=user_type,
                password_hash=generate_password_hash(password, _method()) if password else None)
    db.session.add(user)
    db.session.flush()
    return user


def authenticate(login: str, password: str) -> User | None:
    """The user whose handle or email and password match, else None (same answer either way)."""
    login = (login or "").strip().lower()
    user = db.session.scalar(
        select(User).where((User.handle == login) | (User.email == login)).limit(1))
    if user is None or not user.password_hash:
        # Checked anyway: a missing account takes one check, as a wrong password does.
        check_password_hash(_stand_in(_method()), password or "")
        return None
    return user if check_password_hash(user.password_hash, password or "") else None


def _method() -> str:
    return str(current_app.config["HARMONIC_PASSWORD_HASH"])  # set by config, checked there


@cache
def _stand_in(method: str) -> str:
    """A hash of no one's password, made once per method."""
    return generate_password_hash("no account has this password", method)


def get_user(handle: str) -> User:
    user = db.session.scalars(
        select(User).where(User.handle == (handle or "").lower())).one_or_none()
    if user is None:
        raise NotFound(f"no user '{handle}'")
    return user


def update_profile(user: User, name: str | None) -> User:
    if name is not None:
        if not name.strip():
            raise invalid_param("name", "must not be empty")
        user.name = name.strip()[:120]
    return user


def set_time_zone(user: User, zone: str | None) -> User:
    """The zone a person reads times in; empty means "the studio's" (else UTC)."""
    name = (zone or "").strip()
    if name:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise invalid_param("timezone", f"'{name}' is not an IANA time zone "
                                            "(e.g. Europe/Paris, America/New_York, UTC)") from None
    user.timezone = name or None
    return user

"""The session cookie interface (app.web.cookie_sessions): Flask's signed cookie read as
before, its serializer built once per set of keys, and rebuilt when the keys change (a
rotated key still opens cookies while it is among the fallbacks)."""

from __future__ import annotations

from flask import Flask
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from app.web.cookie_sessions import SignedCookieSessions


def _request(cookie: str | None = None) -> Request:
    headers = {"Cookie": f"session={cookie}"} if cookie else {}
    return Request(EnvironBuilder(path="/", headers=headers).get_environ())


def test_the_cookie_opens_as_before_and_keys_can_rotate(app: Flask) -> None:
    sessions = app.session_interface
    assert isinstance(sessions, SignedCookieSessions)
    first = sessions.get_signing_serializer(app)
    assert first is not None and sessions.get_signing_serializer(app) is first  # built once
    cookie = first.dumps({"_user_id": "someone"})
    assert sessions.open_session(app, _request(cookie))["_user_id"] == "someone"
    assert dict(sessions.open_session(app, _request())) == {}  # no cookie: empty
    assert dict(sessions.open_session(app, _request("forged.cookie.value"))) == {}

    old_key = app.secret_key
    app.secret_key = "a-new-key"
    app.config["SECRET_KEY_FALLBACKS"] = [old_key]
    try:
        rotated = sessions.get_signing_serializer(app)
        assert rotated is not first
        assert sessions.open_session(app, _request(cookie))["_user_id"] == "someone"
        app.config["SECRET_KEY_FALLBACKS"] = []
        assert dict(sessions.open_session(app, _request(cookie))) == {}  # old key dropped
    finally:
        app.secret_key = old_key
        app.config["SECRET_KEY_FALLBACKS"] = []

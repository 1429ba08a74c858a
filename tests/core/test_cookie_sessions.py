"""The session cookie interface (app.web.cookie_sessions): Flask's signed cookie read as
before, its serializer built once per set of keys, and rebuilt when the keys change (a
rotated key still opens cookies while it is among the fallbacks)."""

from __future__ import annotations

from flask import Flask
from flask.sessions import SecureCookieSessionInterface
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


def _cookie_headers(app: Flask, requests: list[tuple[str, str, dict[str, str]]]
                    ) -> list[tuple[set[str], bool]]:
    """Per request, the response's Vary values and whether it sets a cookie (each request
    on its own, without the cookies of the ones before)."""
    client = app.test_client(use_cookies=False)
    seen = []
    for method, path, headers in requests:
        response = client.open(path, method=method, headers=headers)
        vary = {v.strip() for v in response.headers.get("Vary", "").split(",") if v.strip()}
        seen.append((vary, "Set-Cookie" in response.headers))
    return seen


def test_saving_answers_as_flasks_own_interface(app: Flask) -> None:
    # Skipping the save of an empty, unchanged session must not change a header: the same
    # requests under Flask's stock interface and ours give the same Vary and Set-Cookie.
    requests = [("GET", "/login", {}),  # a form: its CSRF token goes into a new cookie
                ("GET", "/", {"Accept": "text/markdown"}),
                ("POST", "/mcp", {"Content-Type": "application/json",
                                  "Accept": "application/json, text/event-stream"})]
    ours = _cookie_headers(app, requests)
    app.session_interface = SecureCookieSessionInterface()
    try:
        stock = _cookie_headers(app, requests)
    finally:
        app.session_interface = SignedCookieSessions()
    assert ours == stock
    assert ours[0][1] and not ours[2][1]  # the form sets its cookie, the agent call does not
    assert "Cookie" in ours[2][0]  # flask-login read the (empty) session: Vary as Flask does

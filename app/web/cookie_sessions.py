"""The browser session cookie: Flask's signed cookie, without rebuilding its signer per request.

Flask's ``SecureCookieSessionInterface`` builds a new ``URLSafeTimedSerializer`` (and with it
the key list and signer settings) before every request, even one that carries no session
cookie at all, which is every agent's request, and after every request reads the cookie's
seven settings before finding there is nothing to save. Here a request without the cookie gets
an empty session straight away, an empty session nobody changed is not saved (it only gets
Flask's ``Vary: Cookie`` where it was read), and the serializer is
built once per set of keys (a change of ``SECRET_KEY`` or its fallbacks builds a new one).
Everything else, the cookie's format, signature, lifetime and the saving, is Flask's own.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface, SessionMixin
from itsdangerous import URLSafeTimedSerializer

_KEY = "harmonic.session_serializer"


class SignedCookieSessions(SecureCookieSessionInterface):
    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        if not app.secret_key:
            return None
        keys: tuple[Any, ...] = (app.secret_key,
                                 *(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        cached = app.extensions.get(_KEY)
        if cached is None or cached[0] != keys:
            cached = (keys, super().get_signing_serializer(app))
            app.extensions[_KEY] = cached
        return cached[1]

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        # No Cookie header at all (an agent): not even the header's parsing is needed.
        if app.secret_key and ("HTTP_COOKIE" not in request.environ
                               or not request.cookies.get(self.get_cookie_name(app))):
            return self.session_class()  # nothing to read: no serializer needed
        return super().open_session(app, request)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        # Empty and never changed: Flask would neither set nor delete a cookie, only add
        # "Vary: Cookie" if the session was read (flask-login's after-request hook reads it
        # on every request), after reading the cookie's seven settings first.
        if not session and not session.modified:
            if session.accessed:
                # The header set straight when there is none yet: going through the response's
                # HeaderSet (parsed, updated, written back) is work for nothing on every call.
                if "Vary" in response.headers:
                    response.vary.add("Cookie")
                else:
                    response.headers["Vary"] = "Cookie"
            return
        super().save_session(app, session, response)


def init_app(app: Flask) -> None:
    app.session_interface = SignedCookieSessions()

"""Typed work survives a lost session.

A person's form that arrives without a session that can vouch for it (the session ended while
the note was being written: the browser was closed, the server's key changed) fails its CSRF
check. Nothing runs then, but nothing typed is thrown away either:

- still signed in (the remember-me cookie brought the person back, but the form's token was
  the old session's): the same page comes back with the form as it was sent, to check and
  send again;
- signed out: the sign-in page comes back, carrying the form in a signed hidden field; once
  signed in, the person lands on the same page with the form as it was sent.

Only a form of this site is kept (its ``Origin``, else its ``Referer``, is this host): another
site's page cannot fill a person's form. Passwords are never kept.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from flask import current_app, g, render_template, request
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.wrappers import Response

from app.actions import Action
from app.core.identity import Identity
from app.extensions import db
from app.models import User
from app.web import pages
from app.web.negotiation import wants

SALT = "harmonic.resume"
KEPT_FOR_SECONDS = 7 * 24 * 3600  # a form sent after a week away is still there to finish
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
STILL_SIGNED_IN = ("This form was open while your session changed, so it was not sent. "
                   "Here it is as you left it: check it and send it again.")
SIGNED_OUT = ("Your session ended before this was sent, so nothing was saved yet. Sign in "
              "and you will get back to the form with everything you typed.")
BACK = "You are signed in again. Here is the form as you left it: check it and send it."


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key or "", salt=SALT)


def _same_site() -> bool:
    """Whether the browser says the form came from a page of this host."""
    sender = request.headers.get("Origin") or request.headers.get("Referer") or ""
    return bool(sender) and urlsplit(sender).netloc == request.host


def _typed(act: Action) -> dict[str, Any]:
    secret = {p.name for p in act.params if p.secret}
    return {key: values[-1] for key, values in request.form.lists()
            if key != "csrf_token" and key not in secret}


def _state(act: Action, values: dict[str, Any], message: str) -> dict[str, Any]:
    return {"action": act.name, "message": message, "values": values, "errors": {},
            "list": [], "notice": True}


def lost_form() -> Response | None:
    """The answer to a person's form refused for want of a session, or None when the request
    is no such form (its refusal is then the plain error)."""
    if request.method != "POST" or request.mimetype not in FORM_TYPES or wants() != "html" \
            or not _same_site():
        return None
    found = pages.action_at(request.path)
    if found is None:
        return None
    spec, args, act = found
    values = _typed(act)
    identity = g.get("identity")
    if identity is not None:
        # A form's page loads its own person after the CSRF check, so this one may not be yet.
        if g.get("user") is None:
            g.user = db.session.get(User, identity.user_id)
        return pages.show_again(spec, args, _state(act, values, STILL_SIGNED_IN), 400)
    token = _serializer().dumps({"path": request.path, "values": values})
    page_path = request.path.rsplit("/actions/", 1)[0]
    html = render_template("session/login.html.j2", error=None, notice=SIGNED_OUT,
                           resume=token, login_action="/login?" + urlencode({"next": page_path}))
    return Response(html, status=401, mimetype="text/html")


def signed_in_again(token: str, user: User) -> Response | None:
    """Right after signing in with a kept form: its page with the form as it was sent (None
    when the token is not ours, too old, or its page is gone)."""
    try:
        kept = _serializer().loads(token, max_age=KEPT_FOR_SECONDS)
        path, values = str(kept["path"]), dict(kept["values"])
    except (BadSignature, KeyError, TypeError, ValueError):
        return None
    found = pages.action_at(path)
    if found is None:
        return None
    spec, args, act = found
    # This request began signed out: who is asking now, for the page's loader and header.
    g.user = user
    g.identity = Identity(user_id=user.id, via="session",
                          kind="agent" if user.user_type == "ai_agent" else "person")
    g.resumed_path = path.rsplit("/actions/", 1)[0]
    return pages.show_again(spec, args, _state(act, values, BACK), 200)

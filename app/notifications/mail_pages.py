"""The pages an email's links open, without signing in: the signed token in the link is the
authority. ``/mail/unsubscribe/<token>`` shows what it turns off and a button (GET), and turns
it off (POST: that button, or a mail program's one click, RFC 8058, which sends no CSRF token
and no cookie, hence exempt); ``/mail/confirm/<token>`` confirms an address. A link whose
token does not verify is a 400 (the link, not the page, is wrong) and changes nothing."""

from __future__ import annotations

from flask import Blueprint, render_template
from flask.typing import ResponseReturnValue

from app.db import writing
from app.extensions import csrf, db
from app.models import User
from app.models.notifications import KINDS
from app.notifications import compose, mail_tokens, preferences

bp = Blueprint("mail", __name__)


def _what(kind: str) -> str:
    if kind == compose.ALL:
        return "any notification"
    return preferences.KIND_WORDS.get(kind, kind).lower()


@bp.route("/mail/unsubscribe/<token>", methods=["GET"])
def unsubscribe_page(token: str) -> ResponseReturnValue:
    found = mail_tokens.unsubscribe_read(token)
    user = db.session.get(User, found[0]) if found else None
    if found is None or user is None:
        return render_template("notifications/unsubscribe.html.j2", state="invalid"), 400
    return render_template("notifications/unsubscribe.html.j2", state="ask", token=token,
                           what=_what(found[1]), user=user)


@bp.route("/mail/unsubscribe/<token>", methods=["POST"])
@csrf.exempt
def unsubscribe(token: str) -> ResponseReturnValue:
    found = mail_tokens.unsubscribe_read(token)
    if found is None:
        return render_template("notifications/unsubscribe.html.j2", state="invalid"), 400
    with writing():
        user = db.session.get(User, found[0])
        if user is None:
            return render_template("notifications/unsubscribe.html.j2", state="invalid"), 400
        for kind in (KINDS if found[1] == compose.ALL else (found[1],)):
            if kind in KINDS:
                preferences.set_preference(user, kind, "email", False)
        handle = user.handle
    return render_template("notifications/unsubscribe.html.j2", state="done",
                           what=_what(found[1]), handle=handle)


@bp.route("/mail/confirm/<token>", methods=["GET"])
def confirm(token: str) -> ResponseReturnValue:
    found = mail_tokens.confirm_read(token)
    if found is None:
        return render_template("notifications/confirm_email.html.j2", address=None), 400
    with writing():
        user = preferences.confirm_email(*found)
        address = user.email if user is not None else None
    return render_template("notifications/confirm_email.html.j2", address=address), \
        (200 if address else 400)

"""Sign up, log in and log out for people (Flask-Login cookie sessions, CSRF-protected forms)."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, flash, redirect, render_template, request
from flask.typing import ResponseReturnValue
from flask_login import login_user, logout_user
from werkzeug.wrappers import Response

from app.db import writing
from app.services import accounts
from app.services.errors import DomainError
from app.web import resume

bp = Blueprint("session", __name__)


def _safe_next(target: str | None) -> str:
    """Only same-site paths: never follow a URL the request supplies to another host."""
    if not target:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return "/"
    # Browsers read "\" as "/" and drop tabs and newlines: "/\evil.example" is "//evil.example".
    if "\\" in target or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in target):
        return "/"
    return target


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> ResponseReturnValue:
    errors: list[dict[str, str]] = []
    form = request.form
    if request.method == "POST":
        try:
            with writing():
                user = accounts.create_user(form.get("handle", ""), form.get("name", ""),
                                            email=form.get("email") or None,
                                            password=form.get("password", ""))
        except DomainError as exc:
            errors = exc.errors or [{"param": "", "message": exc.message}]
        else:
            login_user(user)
            flash(f"Welcome to Harmonic, {user.name}. Start with a studio: make one, or join one "
                  "you were invited to.", "success")
            return redirect(_safe_next(request.args.get("next")), code=303)
    status = 422 if errors else 200
    return render_template("session/signup.html.j2", errors=errors, form=form), status


@bp.route("/login", methods=["GET", "POST"])
def login() -> ResponseReturnValue:
    error = None
    # A form whose session ended before it was sent, kept while the person signs in again
    # (app.web.resume).
    kept = request.form.get("resume") or None
    if request.method == "POST":
        user = accounts.authenticate(request.form.get("login", ""),
                                     request.form.get("password", ""))
        if user is not None:
            login_user(user, remember=bool(request.form.get("remember")))
            back = resume.signed_in_again(kept, user) if kept else None
            return back or redirect(_safe_next(request.args.get("next")), code=303)
        error = "Wrong handle, email or password."
    return render_template("session/login.html.j2", error=error, resume=kept,
                           notice=resume.SIGNED_OUT if kept else None), 401 if error else 200


@bp.route("/logout", methods=["POST"])
def logout() -> Response:
    logout_user()
    flash("Logged out.", "success")
    return redirect("/", code=303)

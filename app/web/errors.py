"""Errors in the caller's format, with honest status codes; never a stack trace.

Domain errors map to 401/403/404/409/422; HTTP errors (400 bad JSON, 405, 413, CSRF) keep their
codes. Whatever was half-done in the database is rolled back first.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, g, jsonify, redirect, request, url_for
from flask_login import current_user
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response  # flask's redirect() answers the werkzeug base class

from app.actions import Context
from app.extensions import db
from app.services.errors import DomainError
from app.web import resume
from app.web.negotiation import wants
from app.web.pages import simple_page

log = logging.getLogger(__name__)


def _error_response(status: int, kind: str, message: str,
                    errors: list[dict[str, str]] | None = None,
                    details: dict[str, Any] | None = None) -> Response:
    details = details or {}
    db.session.rollback()
    fmt = wants()
    if status == 401 and fmt == "html" and request.method == "GET":
        return redirect(url_for("session.login", next=request.full_path.rstrip("?")))
    if fmt == "json" or request.path == "/mcp":
        body: dict[str, Any] = {"ok": False, "error": {"kind": kind, "message": message}}
        if errors:
            body["error"]["errors"] = errors
        body["error"].update({k: v for k, v in details.items() if v is not None})
        response = jsonify(body)
        response.status_code = status
    else:
        user = g.get("user")
        if user is None and not request.headers.get("Authorization"):
            # Raised before the identity was loaded (a body over the size limit): the chrome
            # still shows the person who is signed in, never "Log in / Sign up".
            g.chrome_viewer = _session_user()
        ctx = Context(page="error", path=request.path, user=user)
        response = simple_page(ctx, f"Error {status}", "shared/error", status=status,
                               kind=kind, message=message, errors=errors or [],
                               details=details)
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="Harmonic"'
    return response


def _session_user() -> Any:
    try:
        return current_user._get_current_object() if current_user.is_authenticated else None
    except Exception:  # noqa: BLE001  the error page must render whatever the session holds
        db.session.rollback()
        return None


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(DomainError)
    def domain_error(exc: DomainError) -> Response:
        return _error_response(exc.http_status, exc.kind, exc.message, exc.errors,
                               dict(exc.details))

    @app.errorhandler(CSRFError)
    def csrf_error(exc: CSRFError) -> Response:
        kept = resume.lost_form()  # a person's form: kept, and they are brought back to it
        if kept is not None:
            db.session.rollback()
            return kept
        return _error_response(400, "csrf", "the form expired or was not sent from this site: "
                                            "reload the page and try again")

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        kinds = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
                 413: "too_large", 415: "unsupported_media_type", 429: "rate_limited"}
        message = exc.description or exc.name
        if status == 413:
            limit = app.config.get("MAX_CONTENT_LENGTH")
            message = f"the request body is larger than the limit of {limit} bytes"
        response = _error_response(status, kinds.get(status, "error"), message)
        for header in ("Allow", "Retry-After"):  # 405 and 429 say what to do next
            if exc.get_response().headers.get(header):
                response.headers[header] = exc.get_response().headers[header]
        return response

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return _error_response(500, "internal", "something went wrong on our side; "
                                                "nothing was saved")

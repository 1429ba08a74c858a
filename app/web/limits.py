"""Request-wide limits checked before anything else: body size, and NUL characters.

``app.web.auth.load_identity`` (the first before-request hook) calls ``check_request`` so that
an oversized body is refused before a token is looked up, even on routes that never read their
body, and a NUL character — which no name, path or text column of ours can hold (PostgreSQL
refuses it outright) — is refused with a clear 404/400 instead of reaching a query.
Parameters of actions are checked for NUL by their validation (app.actions.registry).
"""

from __future__ import annotations

from flask import current_app, request
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge

from app.services.errors import NotFound

FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def check_request() -> None:
    # The request object itself, once: each use of the ``request`` proxy looks it up again,
    # and this runs before every request.
    req = request._get_current_object()  # type: ignore[attr-defined]
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if limit and (req.content_length or 0) > limit:
        raise RequestEntityTooLarge()
    if "\x00" in req.path:
        raise NotFound("there is no such page: a path never contains a NUL character")
    if req.method != "POST" or req.mimetype not in FORMS:
        return
    # Keep the raw body readable after the form is parsed: seed 000's plain `curl -d` sends
    # JSON as a form, and /rpc and /replay read it as JSON (app.playbooks.api).
    req.get_data(cache=True, parse_form_data=False)
    if any("\x00" in value for values in req.form.listvalues() for value in values):
        raise BadRequest("form fields must not contain NUL characters")

"""Request-wide limits checked before anything else: body size, and text no database stores.

``app.web.auth.load_identity`` (the first before-request hook) calls ``check_request`` so that
an oversized body is refused before a token is looked up, even on routes that never read their
body; and so that a string no database can store (``app.core.storable``: a NUL character, a
lone surrogate) in the query string, a form field or a JSON body is refused with 422 naming the
field (``q``, ``tags[1]``, ``votes[0].title``) before it reaches a query, whatever the route
would do with it. A NUL in the URL path is a 404: no page has such a path.

The JSON-RPC doors (``/mcp``, ``/rpc``, ``/design-model/rpc``: views marked with
``app.core.jsonrpc.door``) keep their bodies: they refuse such text in JSON-RPC, as -32602 or
as an MCP tool's error result. Their query strings are checked here like any other.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import RequestEntityTooLarge

from app.core import jsonrpc, storable
from app.services.errors import Invalid, NotFound

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
    # Werkzeug decodes a query string as UTF-8 and leaves bytes that are not as %XX: a NUL
    # ("%00") is the only character of the rule that can come out of one.
    query = req.query_string
    if b"%00" in query or b"\x00" in query:
        refuse_unstorable(_fields(req.args))
    if req.method in ("GET", "HEAD", "OPTIONS") or jsonrpc.is_door(
            current_app.view_functions.get(req.endpoint or "")):
        return
    if req.mimetype in FORMS:
        # Keep the raw body readable after the form is parsed: seed 000's plain `curl -d`
        # sends JSON as a form, and /replay reads it as JSON (app.playbooks.api).
        req.get_data(cache=True, parse_form_data=False)
        refuse_unstorable(_fields(req.form))
    elif req.is_json:
        raw = req.get_data(cache=True)
        # In UTF-8 JSON such text can only be written as a \u escape; a body in UTF-16 or 32
        # (which JSON parsers accept too) has zero bytes.
        if b"\\u" in raw or b"\x00" in raw:
            refuse_unstorable(req.get_json(silent=True))  # parsed once: the view reuses it


def _fields(values: MultiDict[str, str]) -> dict[str, Any]:
    """Query or form fields by name: one value as itself, repeated ones as a list (tags[1])."""
    return {name: found[0] if len(found) == 1 else found for name, found in values.lists()}


def refuse_unstorable(value: Any, path: str = "") -> None:
    """Invalid (422) naming every string in ``value`` that no database can store; for a door
    that reads a body of its own (``/replay``), and for this module's checks."""
    found = storable.problems(value, path)
    if found:
        raise Invalid(storable.describe(found), errors=[p.as_error() for p in found])

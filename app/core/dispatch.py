"""In-process requests into our own routes, as a given identity.

MCP's navigate/execute_action, playbook recipes and workflow steps all call this: the request
goes through the same views, authorization and validation as a browser or an HTTP agent would,
without a network hop and without a second copy of any rule.

The request is one plain WSGI call with an environ built the way Flask's test client builds
it (same base URL, remote address and user agent), without the client's cookie jar and response
wrapping, which an in-process caller never needs.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import current_app, g
from flask.testing import EnvironBuilder
from werkzeug.test import run_wsgi_app

from app.core.identity import IDENTITY_KEY, Identity

# The dispatcher puts a list in the environ under this key; a Markdown render
# (app.web.pages.render_page) appends its frontmatter there (the text block and the data it was
# dumped from), so the caller need not parse it back.
FRONTMATTER_KEY = "harmonic.frontmatter"
# A callable the caller passes to run inside the action's own transaction, just before its
# commit (app.web.pages.execute_action): the caller's record of the call (the MCP audit row)
# then commits with the change or not at all, in one disk flush instead of two.
BEFORE_COMMIT_KEY = "harmonic.before_commit"
ENVIRON_BASE = {"REMOTE_ADDR": "127.0.0.1", "HTTP_USER_AGENT": "harmonic-dispatch"}


@dataclass
class Dispatched:
    status: int
    headers: dict[str, str]
    text: str
    json: Any = field(default=None)
    # The Markdown page's frontmatter as data, when the text starts with the block rendered
    # from it (so it equals what parsing that block would give); None otherwise.
    frontmatter: dict[str, Any] | None = field(default=None)
    body: bytes = b""  # the response as sent: an image's bytes survive here, not in ``text``


def dispatch(method: str, path: str, identity: Identity | None, json: Any = None,
             accept: str = "text/markdown",
             before_commit: Callable[[], None] | None = None) -> Dispatched:
    """Run ``method path`` through the app as ``identity``; must be called in an app context.

    ``before_commit`` runs in an action's transaction just before it commits, if the request
    runs an action that succeeds (never otherwise)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    # The nested request shares ``g`` and resets ``g.user`` first; holding the caller's User
    # keeps it in the session's (weak) identity map, so the nested request finds it there
    # instead of selecting it again.
    _caller = g.get("user")
    rendered: list[tuple[str, dict[str, Any]]] = []
    environ_base: dict[str, Any] = {**ENVIRON_BASE, FRONTMATTER_KEY: rendered}
    if identity is not None:
        environ_base[IDENTITY_KEY] = identity
    if before_commit is not None:
        environ_base[BEFORE_COMMIT_KEY] = before_commit
    kwargs: dict[str, Any] = {"headers": {"Accept": accept}, "environ_base": environ_base}
    if json is not None or method.upper() != "GET":
        kwargs["json"] = json if json is not None else {}
    builder = EnvironBuilder(app, path, method=method.upper(), **kwargs)
    try:
        environ = builder.get_environ()
    finally:
        builder.close()
    body, status, headers = run_wsgi_app(app, environ, buffered=True)
    try:
        raw = b"".join(body)
        text = raw.decode("utf-8", "replace")
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    parsed = None
    if headers.get("Content-Type", "").split(";", 1)[0].strip() == "application/json":
        try:
            parsed = jsonlib.loads(text)
        except ValueError:
            parsed = None
    meta = rendered[-1][1] if rendered and text.startswith(rendered[-1][0]) else None
    return Dispatched(status=int(status.split(" ", 1)[0]), headers=dict(headers), text=text,
                      json=parsed, frontmatter=meta, body=raw)

"""Is this process fit to serve? ``GET /healthz``, and a clean 503 while the database is away.

``/healthz`` is what a load balancer polls: 200 when the database answers and its schema is at
the migrations' heads, 503 otherwise, always as small JSON without details a stranger could
use (the reason goes to the log). It needs no token.

While the database is unreachable (restarting, failing over, out of connections) any request
that touches it fails with a SQLAlchemy ``OperationalError``/``InterfaceError``; those become
503 with ``Retry-After`` instead of a 500. A connection found cut makes the pool replace all
of its connections, and one that sat idle is pinged before use (``app.extensions``), so once
the database is back the next requests get fresh connections: no restart needed.
"""

from __future__ import annotations

import functools
import logging

from flask import Flask, Response, current_app, jsonify
from sqlalchemy import text
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

from app.extensions import db
from app.web.negotiation import wants

log = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = "2"
UNAVAILABLE = "the database is unavailable right now; try again in a few seconds"


@functools.cache
def _script_heads(directory: str) -> frozenset[str]:
    """The heads of the migration scripts shipped with this code (read once per process)."""
    from alembic.script import ScriptDirectory  # lazy: Alembic only when a health check runs

    return frozenset(ScriptDirectory(directory).get_heads())


def check() -> tuple[bool, dict[str, str]]:
    """(healthy, {database, migrations}) for this process's database."""
    from alembic.runtime.migration import (  # lazy: Alembic only for a health check
        MigrationContext,
    )

    directory = current_app.extensions["migrate"].directory
    try:
        with db.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
            applied = frozenset(MigrationContext.configure(conn).get_current_heads())
    except SQLAlchemyError as exc:
        log.warning("health check: database unreachable: %s", exc)
        return False, {"database": "unreachable", "migrations": "unknown"}
    expected = _script_heads(directory)
    if applied == expected:
        return True, {"database": "ok", "migrations": "current"}
    state = "not applied" if not applied else "not current"
    log.warning("health check: migrations %s (database %s, code %s)", state,
                sorted(applied), sorted(expected))
    return False, {"database": "ok", "migrations": state}


def _unavailable(exc: SQLAlchemyError) -> Response:
    log.warning("database unavailable: %s", exc.__class__.__name__)
    try:
        db.session.rollback()
    except SQLAlchemyError:
        pass  # the connection is gone; the pool discards it
    # No template here: rendering the usual error page could need the database again.
    fmt = wants()
    if fmt == "html":
        response = Response(f"<!doctype html><title>Unavailable</title><h1>503</h1>"
                            f"<p>{UNAVAILABLE}.</p>", mimetype="text/html")
    elif fmt == "md":
        response = Response(f"# Unavailable\n\n{UNAVAILABLE}.\n", mimetype="text/markdown")
    else:
        response = jsonify({"ok": False, "error": {"kind": "unavailable",
                                                   "message": UNAVAILABLE}})
    response.status_code = 503
    response.headers["Retry-After"] = RETRY_AFTER_SECONDS
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(OperationalError, _unavailable)
    app.register_error_handler(InterfaceError, _unavailable)

    @app.get("/healthz")
    def healthz() -> Response:
        healthy, parts = check()
        response = jsonify({"ok": healthy, **parts})
        response.status_code = 200 if healthy else 503
        response.headers["Cache-Control"] = "no-store"
        return response

"""Pooled server connections pinged before use only after they sat idle.

SQLAlchemy's ``pool_pre_ping`` costs a round trip on every checkout, that is on every request.
A connection used a moment ago is almost surely alive; one idle for ``IDLE_PING_SECONDS`` may
have been cut (a database restart, a firewall's idle timeout) and is pinged, and replaced if
dead. A connection cut while busy fails its next statement instead: that request answers 503
with Retry-After (``app.web.health``) and SQLAlchemy then replaces every connection of the
pool, so the following requests reconnect. SQLite files have no connection to lose and are
never pinged.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DisconnectionError

# A pooled connection idle this long is pinged before use; one used more recently is not.
# Under load connections come back within milliseconds, so they are never pinged; a database
# restart takes longer than this, so a connection of a quiet process that lived through one
# is pinged (and replaced) before its next use, unseen.
IDLE_PING_SECONDS = 1.0


def ping_after_idle(engine: Engine) -> None:
    """Ping ``engine``'s pooled server connections before use only when they sat idle."""
    if engine.dialect.name == "sqlite":
        return

    @event.listens_for(engine, "checkin")
    def _idle_from(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute("SELECT 1")
            finally:
                cursor.close()
            # Outside autocommit the ping began a transaction (the driver begins one before
            # any statement): end it, so the connection is handed out idle, as after any
            # other checkout.
            engine.dialect.do_rollback(dbapi_connection)
        except Exception as exc:
            # The pool discards this connection and checks out (or opens) another.
            raise DisconnectionError("the pooled connection is gone") from exc

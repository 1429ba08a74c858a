"""Database-backed MCP sessions, server-to-client requests and cancellations (HTTP transport).

Polling reads use their own short connection, outside the ORM session, so a waiting call sees
rows committed by other processes without ending the transaction its tool is working in.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, delete, exists, insert, select, update

from app.core.identity import Identity
from app.extensions import db
from app.mcp.context import SessionState
from app.models.base import utcnow
from app.models.mcp import McpCancellation, McpClientRequest, McpOutbox, McpSession

TOUCH_EVERY = timedelta(minutes=1)
IDLE_LIMIT = timedelta(hours=24)  # a session unused this long is over (404: re-initialize)


class DbSession(SessionState):
    """An MCP session kept in ``mcp_sessions``; ``save`` writes what the engine changed.

    It holds plain values, not an ORM object, so it can be handed to a worker thread and read
    with one lean query per request.
    """

    transport = "http"

    def __init__(self, data: Mapping[str, Any], is_new: bool = False) -> None:
        super().__init__(data["id"])
        self.is_new = is_new
        self.initialized = not is_new
        self.user_id = data.get("user_id")
        self.token_id = data.get("token_id")
        self.protocol_version = data.get("protocol_version") or ""
        self.client_capabilities = _loads(data.get("client_capabilities"), {})
        self.log_level = data.get("log_level") or "info"
        self.current_path = data.get("current_path")
        self.subscriptions = set(_loads(data.get("subscriptions"), []))
        self.last_seen_at: datetime | None = data.get("last_seen_at")
        self.has_outbox = bool(data.get("has_outbox"))
        self._saved = self._values()

    @classmethod
    def new(cls, identity: Identity | None) -> DbSession:
        return cls({"id": secrets.token_urlsafe(32),
                    "user_id": identity.user_id if identity else None,
                    "token_id": identity.token_id if identity else None}, is_new=True)

    def _values(self) -> dict[str, Any]:
        return {"protocol_version": self.protocol_version,
                "client_capabilities": json.dumps(self.client_capabilities)[:20000],
                "log_level": self.log_level, "current_path": self.current_path,
                "subscriptions": json.dumps(sorted(self.subscriptions))}

    def save(self) -> None:
        """Write the fields that changed since loading: requests of one session may run at
        the same time in several processes, and one must not undo another's change."""
        values = self._values()
        if self.is_new:
            now = utcnow()
            db.session.execute(insert(McpSession).values(
                id=self.id, user_id=self.user_id, token_id=self.token_id, created_at=now,
                last_seen_at=now, client_name=str(self.client_info.get("name", ""))[:200],
                has_outbox=False, **values))
            self.is_new = False
        else:
            changed = {k: v for k, v in values.items() if self._saved.get(k) != v}
            if not changed:
                return
            db.session.execute(update(McpSession).where(McpSession.id == self.id)
                               .values(**changed))
        db.session.commit()
        self._saved = values

    def is_cancelled(self, request_id: Any) -> bool:
        query = select(exists().where(McpCancellation.session_id == self.id,
                                      McpCancellation.request_id == str(request_id)))
        with db.engine.connect() as conn:
            return bool(conn.execute(query).scalar())


_COLUMNS = (McpSession.id, McpSession.user_id, McpSession.token_id, McpSession.protocol_version,
            McpSession.client_capabilities, McpSession.log_level, McpSession.current_path,
            McpSession.subscriptions, McpSession.last_seen_at, McpSession.has_outbox)
# Built once: this runs on every request of every session.
_FIND_SESSION = select(*_COLUMNS).where(McpSession.id == bindparam("sid"),
                                        McpSession.ended_at.is_(None))


def _loads(text: str | None, default: Any) -> Any:
    try:
        value = json.loads(text or "")
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default


def find_session(session_id: str) -> DbSession | None:
    """The live session for an Mcp-Session-Id, or None if unknown or ended."""
    if not session_id or len(session_id) > 64:
        return None
    # On the request's own connection, which already holds the token lookup: a separate
    # engine connection cost another pool checkout (pre-ping and rollback: three round trips on
    # PostgreSQL) on every request of every session.
    row = db.session.execute(_FIND_SESSION, {"sid": session_id}).mappings().first()
    if row is None or utcnow() - row["last_seen_at"] > IDLE_LIMIT:
        return None
    return DbSession(row)


PRUNE_AFTER = timedelta(days=7)


def prune(limit: int = 200) -> None:
    """Delete sessions ended or idle for a week, with their rows (run when one is created)."""
    cutoff = utcnow() - PRUNE_AFTER
    ids = list(db.session.scalars(select(McpSession.id).where(
        (McpSession.ended_at < cutoff) | (McpSession.last_seen_at < cutoff)).limit(limit)))
    if not ids:
        return
    for model in (McpClientRequest, McpCancellation, McpOutbox):
        db.session.execute(delete(model).where(model.session_id.in_(ids)))
    db.session.execute(delete(McpSession).where(McpSession.id.in_(ids)))
    db.session.commit()


def touch(session: DbSession) -> None:
    """Note that the session is in use, at most once a minute (reads must stay reads)."""
    now = utcnow()
    if session.last_seen_at is None or now - session.last_seen_at > TOUCH_EVERY:
        db.session.execute(update(McpSession).where(McpSession.id == session.id)
                           .values(last_seen_at=now))
        db.session.commit()
        session.last_seen_at = now


def end_session(session: DbSession) -> None:
    db.session.execute(update(McpSession).where(McpSession.id == session.id)
                       .values(ended_at=utcnow()))
    db.session.execute(delete(McpClientRequest).where(McpClientRequest.session_id == session.id))
    db.session.execute(delete(McpCancellation).where(McpCancellation.session_id == session.id))
    db.session.execute(delete(McpOutbox).where(McpOutbox.session_id == session.id))
    db.session.commit()


def record_cancel(session_id: str, request_id: Any) -> None:
    db.session.add(McpCancellation(session_id=session_id, request_id=str(request_id)[:64]))
    db.session.commit()


def open_client_request(session_id: str, request_id: str, method: str) -> None:
    db.session.add(McpClientRequest(session_id=session_id, request_id=request_id,
                                    method=method))
    db.session.commit()


def answer_client_request(session_id: str, request_id: Any, message: dict[str, Any]) -> bool:
    """Store the client's response; False when we never asked (or it was answered already)."""
    found = db.session.execute(
        update(McpClientRequest)
        .where(McpClientRequest.session_id == session_id,
               McpClientRequest.request_id == str(request_id),
               McpClientRequest.response.is_(None))
        .values(response=json.dumps(message), answered_at=utcnow()))
    db.session.commit()
    return bool(found.rowcount)


def client_response(session_id: str, request_id: str) -> dict[str, Any] | None:
    query = select(McpClientRequest.response).where(McpClientRequest.session_id == session_id,
                                                    McpClientRequest.request_id == request_id)
    with db.engine.connect() as conn:
        text = conn.execute(query).scalar()
    return _loads(text, {}) if text else None


def close_client_request(session_id: str, request_id: str) -> None:
    db.session.execute(delete(McpClientRequest).where(
        McpClientRequest.session_id == session_id, McpClientRequest.request_id == request_id))
    db.session.commit()


# -- outbox: resource updates for HTTP sessions, delivered on their next streamed response ----

def queue_resource_update(uri: str) -> None:
    """events listener: queue notifications/resources/updated for every subscribed session."""
    message = json.dumps({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                          "params": {"uri": uri}})
    rows = db.session.execute(select(McpSession.id, McpSession.subscriptions).where(
        McpSession.ended_at.is_(None),
        McpSession.subscriptions.contains(json.dumps(uri), autoescape=True))).all()
    targets = [sid for sid, subs in rows if uri in _loads(subs, [])]
    if not targets:
        return
    # Insert first, then raise the flag: a reader that cleared the flag in between sees the
    # flag again next time, so no notification is ever stranded.
    db.session.execute(insert(McpOutbox), [{"session_id": sid, "message": message,
                                            "created_at": utcnow()} for sid in targets])
    db.session.execute(update(McpSession).where(McpSession.id.in_(targets))
                       .values(has_outbox=True))
    db.session.commit()


def drain_outbox(session: DbSession) -> list[dict[str, Any]]:
    """Take the session's waiting notifications (oldest first); [] when there are none."""
    if not session.has_outbox:
        return []
    db.session.execute(update(McpSession).where(McpSession.id == session.id)
                       .values(has_outbox=False))
    rows = db.session.execute(select(McpOutbox.id, McpOutbox.message)
                              .where(McpOutbox.session_id == session.id)
                              .order_by(McpOutbox.id)).all()
    if rows:
        db.session.execute(delete(McpOutbox).where(McpOutbox.id.in_([r.id for r in rows])))
    db.session.commit()
    session.has_outbox = False
    return [_loads(r.message, {}) for r in rows]

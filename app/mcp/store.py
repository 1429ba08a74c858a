"""Database-backed MCP sessions, server-to-client requests and cancellations (HTTP transport).

Polling reads use their own short connection, outside the ORM session, so a waiting call sees
rows committed by other processes without ending the transaction its tool is working in.

Resource updates: a session that subscribes keeps a cursor (``events_seen``, the newest change
event it has been told about) and at each streamed response reads the change events after it
for the URIs it subscribes to (``take_updates``); ``app.core.changes`` writes them. Each
subscription keeps the newest event when it began (``subscriptions`` is ``{uri: that id}``):
nothing from before it is told, live or replayed, nor anything the subscriber may not read
when it is told (``app.core.audience``).

Commits: each function that commits here writes the transport's own state (a session, a
client's answer, a cancellation, a pending server-to-client request), which another process
may be polling for at that moment, so it must be visible at once. None of them runs from a
listener or inside an action: nothing here commits someone else's work half-way.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from flask import current_app
from sqlalchemy import CursorResult, bindparam, delete, exists, insert, select, update

from app.core import audience, changes, kept
from app.core.identity import Identity
from app.db import Query, read, writing
from app.db.reads import first_row
from app.extensions import db
from app.mcp.context import SessionState
from app.models.base import utcnow
from app.models.changes import ChangeEvent
from app.models.mcp import McpCancellation, McpClientRequest, McpSession
from app.services import revocation

TOUCH_EVERY = timedelta(minutes=1)
IDLE_LIMIT = timedelta(hours=24)  # a session unused this long is over (404: re-initialize)


class DbSession(SessionState):
    """An MCP session kept in ``mcp_sessions``; ``save`` writes what the engine changed.

    It holds plain values, not an ORM object, so it can be handed to a worker thread. What
    only initialize, a subscription or a log level changes comes from this process's copy of
    the row (``find_session``); where the session is (its page) and its updates' cursor, which
    any call in any process may move, are read when the call first asks for them
    (``__getattr__``).
    """

    transport = "http"
    events_seen: int | None
    since: dict[str, int]  # uri -> the newest change event when it was subscribed

    def __init__(self, data: Mapping[str, Any], is_new: bool = False,
                 copy: dict[str, Any] | None = None) -> None:
        super().__init__(data["id"])
        del self.current_path  # per call: taken from ``data`` below or read on first use
        self.is_new = is_new
        self.initialized = not is_new
        self.user_id = data.get("user_id")
        self.token_id = data.get("token_id")
        self.grant_id = data.get("grant_id")  # the OAuth grant behind its token, if any
        self.protocol_version = data.get("protocol_version") or ""
        self.client_capabilities = json_or(data.get("client_capabilities"), {})
        self.log_level = data.get("log_level") or "info"
        self.last_seen_at: datetime | None = data.get("last_seen_at")
        self.subscriptions = set(subscribed(data.get("subscriptions"), 0))
        self._copy = copy  # this process's copy it was made from, which ``touch`` keeps dated
        # What ``save`` compares against, made from the row when first needed: most calls
        # change nothing and never save (a trivial tool), so they skip the serializing.
        self._row: Mapping[str, Any] = data
        self._saved_values: dict[str, Any] | None = None
        if is_new or "current_path" in data:
            self._take(data)

    def __getattr__(self, name: str) -> Any:
        # Called only for what the instance lacks: the per-call state, before its first use.
        if name not in _PER_CALL_STATE:
            raise AttributeError(name)
        self._read_per_call()
        return self.__dict__[name]

    def _read_per_call(self) -> None:
        if "current_path" not in self._row:
            row = read(Query(_PER_CALL_READ, {"sid": self.id}, first_row))
            self._take(row._asdict() if row is not None else dict.fromkeys(_PER_CALL))

    def _take(self, row: Mapping[str, Any]) -> None:
        """The per-call state from ``row``, but what this call has set already."""
        self._row = {**self._row, **row}
        events_seen = self._row.get("events_seen")
        state = {"current_path": self._row.get("current_path"), "events_seen": events_seen,
                 "since": subscribed(self._row.get("subscriptions"), events_seen)}
        for name, value in state.items():
            self.__dict__.setdefault(name, value)

    @property
    def _saved(self) -> dict[str, Any]:
        if self._saved_values is None:
            self._read_per_call()
            self._saved_values = DbSession(self._row)._values()
        return self._saved_values

    @_saved.setter
    def _saved(self, values: dict[str, Any]) -> None:
        self._saved_values = values

    @classmethod
    def new(cls, identity: Identity | None) -> DbSession:
        return cls({"id": secrets.token_urlsafe(32),
                    "user_id": identity.user_id if identity else None,
                    "token_id": identity.token_id if identity else None,
                    "grant_id": identity.grant_id if identity else None}, is_new=True)

    def _values(self) -> dict[str, Any]:
        return {"protocol_version": self.protocol_version,
                "client_capabilities": json.dumps(self.client_capabilities)[:20000],
                "log_level": self.log_level, "current_path": self.current_path,
                "subscriptions": json.dumps({uri: self.since.get(uri, 0)
                                             for uri in sorted(self.subscriptions)}),
                "events_seen": self.events_seen}

    def save(self) -> None:
        """Write the fields that changed since loading: requests of one session may run at
        the same time in several processes, and one must not undo another's change."""
        if not self.subscriptions:
            self.events_seen = None
        else:
            added = self.subscriptions - set(self.since)
            if added or self.events_seen is None:
                newest = changes.latest_id()
                # A subscription hears of what changes from now on; the first one sets the
                # cursor (a later one keeps it: ``since`` holds the older events back).
                self.since.update(dict.fromkeys(added, newest))
                if self.events_seen is None:
                    self.events_seen = newest
        self.since = {uri: self.since[uri] for uri in self.subscriptions}
        values = self._values()
        if self.is_new:
            now = utcnow()
            with writing():
                db.session.execute(insert(McpSession).values(
                    id=self.id, user_id=self.user_id, token_id=self.token_id,
                    grant_id=self.grant_id, created_at=now,
                    last_seen_at=now, client_name=str(self.client_info.get("name", ""))[:200],
                    **values))
            self.is_new = False
        else:
            changed = {k: v for k, v in values.items() if self._saved.get(k) != v}
            if not changed:
                return
            with writing():
                db.session.execute(update(McpSession).where(McpSession.id == self.id)
                                   .values(**changed))
                if changed.keys() - set(_PER_CALL):  # what the processes' copies hold
                    kept.changed(TOPIC, self.id)
        self._saved = values

    def is_cancelled(self, request_id: Any) -> bool:
        query = select(exists().where(McpCancellation.session_id == self.id,
                                      McpCancellation.request_id == str(request_id)))
        with db.engine.connect() as conn:
            return bool(conn.execute(query).scalar())


TOPIC = "mcp-sessions"  # this process's copies of session rows (app.core.kept), by id
# The columns of the per-call state (the rest of the row is copied): where the session is, and
# the cursor of its updates, which a streamed response moves.
_PER_CALL = ("current_path", "events_seen")
_PER_CALL_STATE = frozenset((*_PER_CALL, "since"))
_PER_CALL_READ = select(McpSession.current_path, McpSession.events_seen,
                        McpSession.subscriptions).where(McpSession.id == bindparam("sid"))
_FIND_SESSION = select(McpSession.id, McpSession.user_id, McpSession.token_id,
                       McpSession.grant_id, McpSession.protocol_version,
                       McpSession.client_capabilities, McpSession.log_level,
                       McpSession.subscriptions, McpSession.last_seen_at,
                       McpSession.current_path, McpSession.events_seen).where(
    McpSession.id == bindparam("sid"), McpSession.ended_at.is_(None))


def json_or(text: str | None, default: Any) -> Any:
    """A JSON column's value: ``default`` (or an empty one of its type) when the column is
    empty, unreadable or holds another type (tasks read theirs through here too)."""
    if not text or text in ("{}", "[]"):  # what most rows hold: no parsing needed
        return type(default)()
    try:
        value = json.loads(text or "")
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default


def subscribed(text: str | None, events_seen: int | None) -> dict[str, int]:
    """A session row's ``subscriptions``: ``{uri: the newest event when subscribed}``. (A list,
    as rows written before each kept its start, counts from the session's cursor.)"""
    value = json_or(text, {}) if text and text.startswith("{") else json_or(text, [])
    if isinstance(value, dict):
        return {u: n for u, n in value.items() if isinstance(u, str) and isinstance(n, int)}
    return dict.fromkeys((u for u in value if isinstance(u, str)), events_seen or 0)


def _well_formed(session_id: str | None) -> bool:
    """Whether an Mcp-Session-Id could name a session at all (``new`` makes 43 characters)."""
    return bool(session_id) and len(session_id or "") <= 64


def find_session(session_id: str) -> DbSession | None:
    """The live session for an Mcp-Session-Id, or None if unknown or ended.

    Requests of one session move between processes. What only initialize, a subscription or a
    log level changes is kept by each process once read (``app.core.kept``): the session's end
    and those changes are said through the change feed, so every process forgets its copy.
    The per-call state is read by the call that needs it (``DbSession``)."""
    if not _well_formed(session_id):
        return None
    copies = kept.of(current_app._get_current_object(), TOPIC)  # type: ignore[attr-defined]
    row = copy = copies.get(session_id) if copies is not None else None
    if row is None:
        fetched = time.monotonic()
        found = read(Query(_FIND_SESSION, {"sid": session_id}, first_row))
        if found is None:
            return None
        row = found._asdict()
        if copies is not None:
            copy = {name: value for name, value in row.items() if name not in _PER_CALL}
            copies.put(session_id, copy, fetched)
    if utcnow() - row["last_seen_at"] > IDLE_LIMIT:
        return None
    return DbSession(row, copy=copy)


PRUNE_AFTER = timedelta(days=7)


def prune(limit: int = 200) -> None:
    """Delete sessions ended or idle for a week, with their rows (run when one is created)."""
    cutoff = utcnow() - PRUNE_AFTER
    ids = list(db.session.scalars(select(McpSession.id).where(
        (McpSession.ended_at < cutoff) | (McpSession.last_seen_at < cutoff)).limit(limit)))
    if not ids:
        return
    with writing():
        for model in (McpClientRequest, McpCancellation):
            db.session.execute(delete(model).where(model.session_id.in_(ids)))
        db.session.execute(delete(McpSession).where(McpSession.id.in_(ids)))


def touch(session: DbSession) -> None:
    """Note that the session is in use, at most once a minute (reads must stay reads)."""
    now = utcnow()
    if session.last_seen_at is None or now - session.last_seen_at > TOUCH_EVERY:
        with writing(expire=False):
            db.session.execute(update(McpSession).where(McpSession.id == session.id)
                               .values(last_seen_at=now))
        session.last_seen_at = now
        if session._copy is not None:
            # The copy learns it too, or each call while it is kept would write the row again.
            session._copy["last_seen_at"] = now


def end_session(session: DbSession) -> None:
    with writing():
        kept.changed(TOPIC, session.id)
        db.session.execute(update(McpSession).where(McpSession.id == session.id)
                           .values(ended_at=utcnow()))
        db.session.execute(delete(McpClientRequest)
                           .where(McpClientRequest.session_id == session.id))
        db.session.execute(delete(McpCancellation)
                           .where(McpCancellation.session_id == session.id))


def record_cancel(session_id: str, request_id: Any) -> None:
    with writing():
        db.session.add(McpCancellation(session_id=session_id, request_id=str(request_id)[:64]))


def open_client_request(session_id: str, request_id: str, method: str) -> None:
    with writing():
        db.session.add(McpClientRequest(session_id=session_id, request_id=request_id,
                                        method=method))


def answer_client_request(session_id: str, request_id: Any, message: dict[str, Any]) -> bool:
    """Store the client's response; False when we never asked (or it was answered already)."""
    # An UPDATE answers a CursorResult (with rowcount); Session.execute is typed as any Result.
    with writing():
        found = cast(CursorResult[Any], db.session.execute(
            update(McpClientRequest)
            .where(McpClientRequest.session_id == session_id,
                   McpClientRequest.request_id == str(request_id),
                   McpClientRequest.response.is_(None))
            .values(response=json.dumps(message), answered_at=utcnow())))
    return bool(found.rowcount)


def client_response(session_id: str, request_id: str) -> dict[str, Any] | None:
    query = select(McpClientRequest.response).where(McpClientRequest.session_id == session_id,
                                                    McpClientRequest.request_id == request_id)
    with db.engine.connect() as conn:
        text = conn.execute(query).scalar()
    return json_or(text, {}) if text else None


def close_client_request(session_id: str, request_id: str) -> None:
    with writing():
        db.session.execute(delete(McpClientRequest).where(
            McpClientRequest.session_id == session_id,
            McpClientRequest.request_id == request_id))


# -- resource updates: the change events a subscribed session has not been told about -------

MAX_UPDATES = 500  # per response; the rest follow with the next one


def take_updates(session: DbSession, identity: Identity | None) -> list[dict[str, Any]]:
    """notifications/resources/updated for the subscribed URIs changed since the session's
    cursor (oldest first, one per URI) that ``identity`` may hear of
    (``app.core.audience``); [] without a query when it subscribes to nothing. The cursor
    moves past the others too: they are never told."""
    if not session.subscriptions or session.events_seen is None:
        return []
    seen = session.events_seen
    # ``since``: the URIs read with the cursor, so that none the copy lacks is passed over.
    rows = db.session.execute(
        select(ChangeEvent.id, ChangeEvent.uri)
        .where(ChangeEvent.id > seen, ChangeEvent.uri.in_(sorted(session.since)))
        .order_by(ChangeEvent.id).limit(MAX_UPDATES)).all()
    if not rows:
        return []
    last = rows[-1].id
    told = audience.audible(identity, since_subscribed(rows, session.since))
    # Move the cursor only from where we read it: of two requests of one session running at
    # once, one takes these events and the other tells nothing twice.
    with writing():
        moved = cast(CursorResult[Any], db.session.execute(update(McpSession).where(
            McpSession.id == session.id, McpSession.events_seen == seen)
            .values(events_seen=last)))
    if not moved.rowcount:
        return []
    session.events_seen = session._saved["events_seen"] = last
    return [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
             "params": {"uri": uri}} for uri in dict.fromkeys(r.uri for r in told)]


@revocation.ends
def end_sessions(ended: revocation.Ended) -> None:
    """A revoked grant's or agent's MCP sessions end with it (``app.services.revocation``)."""
    made = ended.made(McpSession.token_id, McpSession.grant_id, McpSession.user_id)
    if made is not None:
        db.session.execute(update(McpSession).where(made, McpSession.ended_at.is_(None))
                           .values(ended_at=utcnow()))
        kept.changed(TOPIC)


Row = TypeVar("Row", bound=Sequence[Any])


def since_subscribed(rows: Sequence[Row], since: dict[str, int]) -> list[Row]:
    """The (id, uri) rows written after their URI was subscribed to."""
    return [r for r in rows if r[0] > since.get(r[1], r[0])]

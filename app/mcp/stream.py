"""``GET /mcp``: the standalone SSE stream of a 2025-11-25 session, served on an evented path.

A small ASGI app (``StreamApp``). ``bin/serve``'s gunicorn worker (``app.mcp.stream_worker``)
runs it on an event loop in each worker process, for the streams it is handed on the app's own
port; with ``HARMONIC_STREAM_PORT`` it runs under uvicorn on that port instead, where a load
balancer sends ``GET /mcp``. One event loop holds every open stream, so an idle stream costs a
coroutine and a socket, not a worker thread. Database work (the token, the session, the
outbox) runs briefly in the loop's thread pool, at most ``DB_THREADS`` at once.

What a stream carries: ``notifications/resources/updated`` for the session's subscribed URIs,
one per change event, the event's outbox id as the SSE ``id`` — only events written after their
URI was subscribed to, and only while the session's person may read it (``app.core.audience``:
a studio's events reach its members only, so someone removed from the studio hears nothing
written after the removal). The token is resolved again at every read of the outbox: a revoked
one ends the stream. Events are taken with the session's cursor (``mcp_sessions.events_seen``,
moved by compare-and-set), so each event goes to exactly one of the session's streams: this
one, or a POST response that took it first; the cursor moves past the events not told too.
Resumption: a client that reconnects with ``Last-Event-ID: N`` is first sent the subscribed
events after N up to the cursor (those sent on the lost stream, read again from the outbox,
and checked again as the person is now), then new ones. New events wake the stream through
this process's change feed (``app.core.feed``: LISTEN/NOTIFY on PostgreSQL, polling on
SQLite). A comment line every ``HARMONIC_STREAM_KEEPALIVE`` seconds keeps proxies from closing
an idle stream, and each token may hold at most ``HARMONIC_STREAMS_PER_TOKEN`` streams in one
process (429 beyond).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Literal, cast

import anyio.to_thread
from flask import Flask
from sqlalchemy import CursorResult, select, update

from app.core import audience, changes, feed
from app.core.identity import Identity, bearer_token
from app.core.token_cache import identity_from_token
from app.extensions import db
from app.mcp import store
from app.mcp.http import Refused, caller, session_of
from app.models.changes import ChangeEvent
from app.models.mcp import McpSession
from app.services.errors import Unauthorized

log = logging.getLogger("harmonic.mcp.stream")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
BATCH = 200
# Threads doing the streams' database work at once: however many streams wake together, they
# queue for these and hold about half of the 15 connections a process may open by default
# (HARMONIC_DB_POOL_SIZE + HARMONIC_DB_MAX_OVERFLOW), the rest staying with the requests
# gunicorn serves beside them; more threads tell many streams of one change sooner
# (bench/streams_bench.py --postgres measures it).
DB_THREADS = 8
MODERN = "2026-07-28"  # stateless: no session, so no stream of its own
Who = Callable[[], Identity | None]  # the caller as their token says now (raises Unauthorized)


class StreamApp:
    """The ASGI app; ``flask_app`` supplies the database, the settings and the feed."""

    def __init__(self, flask_app: Flask) -> None:
        self.flask = flask_app
        self.keepalive = float(flask_app.config.get("HARMONIC_STREAM_KEEPALIVE") or 15)
        self.per_token = int(flask_app.config.get("HARMONIC_STREAMS_PER_TOKEN") or 0)
        self.open: dict[str, int] = {}  # streams per token (or session, without a token)
        self._wakers: set[asyncio.Event] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._db: anyio.CapacityLimiter | None = None

    # -- the feed wakes every stream of this process -------------------------------------------

    def _start_feed(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._db = anyio.CapacityLimiter(DB_THREADS)
        relay = feed.ensure_started(self.flask)
        relay.on_advance(self._advanced)

    def _advanced(self) -> None:  # called on the relay's thread
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for waker in self._wakers:
            waker.set()

    # -- ASGI ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if self._loop is None:
            self._start_feed()
        if scope["path"] != "/mcp":
            await _text(send, 404, "not found: this endpoint serves GET /mcp only")
            return
        if scope["method"] != "GET":
            await _text(send, 405, "this endpoint serves GET /mcp; POST to the app",
                         [(b"allow", b"GET")])
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        client = scope.get("client")
        try:
            session_id, key, who = await anyio.to_thread.run_sync(
                self._authorize, headers, client[0] if client else None,
                f"{scope.get('scheme', 'http')}://{headers.get('host', '')}", limiter=self._db)
        except Refused as refusal:
            await _refuse(send, refusal)
            return
        if self.per_token and self.open.get(key, 0) >= self.per_token:
            await _refuse(send, Refused(
                429, f"Too Many Requests: at most {self.per_token} open streams per token "
                     "(HARMONIC_STREAMS_PER_TOKEN)", "too_many_streams"))
            return
        self.open[key] = self.open.get(key, 0) + 1
        try:
            await self._serve(session_id, who, headers.get("last-event-id"), receive, send)
        finally:
            self.open[key] -= 1
            if not self.open[key]:
                del self.open[key]

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._start_feed()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _serve(self, session_id: str, who: Who, last_event_id: str | None,
                     receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"), (b"mcp-session-id", session_id.encode())]})
        waker = asyncio.Event()
        self._wakers.add(waker)
        gone = asyncio.Event()

        async def watch_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()
            waker.set()

        watcher = asyncio.create_task(watch_disconnect())
        try:
            resume = _event_id(last_event_id)
            if resume is not None:
                replayed = await anyio.to_thread.run_sync(self._replay, session_id, who, resume,
                                                          limiter=self._db)
                for event_id, uri in replayed or ():
                    await send(_body(_event(event_id, uri)))
            while not gone.is_set():
                waker.clear()
                taken = await anyio.to_thread.run_sync(self._take, session_id, who,
                                                       limiter=self._db)
                if taken is None:
                    break  # the session ended (DELETE, idle past its limit) or its token did
                events, more = taken
                for event_id, uri in events:
                    await send(_body(_event(event_id, uri)))
                if more:
                    continue
                try:
                    await asyncio.wait_for(waker.wait(), self.keepalive)
                except TimeoutError:
                    await send(_body(b":\n\n"))
        except OSError:
            pass  # the client went away mid-write
        finally:
            self._wakers.discard(waker)
            watcher.cancel()
        if not gone.is_set():
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- database work (thread pool) -----------------------------------------------------------

    def _authorize(self, headers: dict[str, str], remote: str | None,
                   origin_url: str) -> tuple[str, str, Who]:
        """(session id, the key its streams are counted under, who the caller is each time
        the stream reads the outbox) or Refused. ``origin_url`` is this request's own
        scheme://host (the Host passed the allow-list first)."""
        with self.flask.app_context():
            try:
                identity = caller(self.flask, headers.get("origin"), headers.get("host", ""),
                                  headers.get("authorization"), remote, lambda: origin_url)
            except Unauthorized as exc:
                raise Refused(401, f"Unauthorized: {exc}", "invalid_token") from None
            session = session_of(self.flask, headers.get("mcp-session-id"), identity, remote)
            if session.protocol_version >= MODERN:
                raise Refused(405, "Method Not Allowed: a 2026-07-28 client listens with "
                                   "subscriptions/listen", "stateless")
        key = str(identity.token_id) if identity is not None else f"session:{session.id}"
        plaintext = bearer_token(headers.get("authorization"))
        if plaintext is None or identity is None:
            return session.id, key, lambda: None
        token = plaintext
        return session.id, key, lambda: identity_from_token(token)

    def _replay(self, session_id: str, who: Who, after: int) -> list[tuple[int, str]] | None:
        """The subscribed events after ``after`` up to the session's cursor (sent before on
        a stream the client lost), none from before its URI was subscribed to, and only those
        the caller may read now; None when the token no longer resolves."""
        with self.flask.app_context():
            identity = _resolved(who)
            if identity is False:
                return None
            row = db.session.execute(select(McpSession.subscriptions, McpSession.events_seen)
                                     .where(McpSession.id == session_id)).first()
            if row is None or row.events_seen is None:
                return []
            since = store.subscribed(row.subscriptions, row.events_seen)
            rows = db.session.execute(
                select(ChangeEvent.id, ChangeEvent.uri)
                .where(ChangeEvent.id > after, ChangeEvent.id <= row.events_seen,
                       ChangeEvent.uri.in_(sorted(since))).order_by(ChangeEvent.id)).all()
            told = audience.audible(identity, store.since_subscribed(rows, since),
                                    as_of=changes.latest_id())
            return [(r.id, r.uri) for r in told]

    def _take(self, session_id: str, who: Who) -> tuple[list[tuple[int, str]], bool] | None:
        """(the subscribed events past the session's cursor that the caller may hear of,
        whether more may follow at once), moving the cursor past all it read (compare-and-set:
        an event goes to one stream of the session only); None when the session is gone or
        its token no longer resolves."""
        with self.flask.app_context():
            row = db.session.execute(select(McpSession.subscriptions, McpSession.events_seen)
                                     .where(McpSession.id == session_id)).first()
            if row is None:
                return None
            since = store.subscribed(row.subscriptions, row.events_seen)
            seen = row.events_seen
            if not since or seen is None:
                return [], False
            rows = db.session.execute(
                select(ChangeEvent.id, ChangeEvent.uri)
                .where(ChangeEvent.id > seen, ChangeEvent.uri.in_(sorted(since)))
                .order_by(ChangeEvent.id).limit(BATCH)).all()
            if not rows:
                return [], False
            # Only when there is something to tell (a stream wakes at every change of the
            # process): the token as it is now, at most a second old (the token cache).
            identity = _resolved(who)
            if identity is False:
                return None
            moved = cast(CursorResult[Any], db.session.execute(
                update(McpSession).where(McpSession.id == session_id,
                                         McpSession.events_seen == seen)
                .values(events_seen=rows[-1].id)))
            db.session.commit()
            if not moved.rowcount:
                return [], False
            told = audience.audible(identity, store.since_subscribed(rows, since))
            return [(r.id, r.uri) for r in told], len(rows) == BATCH


def _resolved(who: Who) -> Identity | None | Literal[False]:
    """The caller as their token says now, or False when it no longer resolves."""
    try:
        return who()
    except Unauthorized:
        return False


def _event_id(value: str | None) -> int | None:
    try:
        number = int((value or "").strip())
    except ValueError:
        return None
    return number if number >= 0 else None


def _event(event_id: int, uri: str) -> bytes:
    message = {"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": uri}}
    return f"id: {event_id}\nevent: message\ndata: {json.dumps(message)}\n\n".encode()


def _body(data: bytes) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": True}


async def _text(send: Send, status: int, text: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), *(headers or [])]})
    await send({"type": "http.response.body", "body": text.encode()})


async def _refuse(send: Send, refusal: Refused) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32029 if refusal.status == 429 else -32600, "message": refusal.message,
        "data": {"reason": refusal.reason}}}).encode()
    await send({"type": "http.response.start", "status": refusal.status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})

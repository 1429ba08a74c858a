"""The gunicorn worker of ``bin/serve``: gthread, plus ``GET /mcp`` streams on an event loop.

``StreamWorker`` is ``app.core.keepalive_worker.KeepAliveWorker`` (gunicorn's threaded worker)
for every request but a parsed ``GET /mcp`` asking for ``text/event-stream``. That request's
socket is taken from gunicorn (the pool thread returns at once) and served by the stream ASGI
app (``app.mcp.stream``) on one asyncio event loop thread per worker process, so the stream of
an MCP session is on the app's own port, where the official SDK clients look for it (they
follow no redirect to another origin), and an open stream costs a coroutine and a socket, not
a pool thread. Its HTTP is h11's: gunicorn's parse of the request is written out by an h11
client and read by an h11 server connection, which frames the response (chunked, ``Connection:
close``: the socket never goes back to gunicorn). A request h11 will not carry (HTTP/1.0, a
body, no ``Host``) and TLS sockets (gunicorn's own ``--certfile``; a TLS front end terminates
TLS in every deployment ``bin/serve`` describes) stay with Flask, which answers 405.

Why not an ASGI server for everything: the Flask app and its tests are WSGI, gunicorn's gthread
path is tuned (docs/PERFORMANCE.md), and only this one long-lived request needs an event loop.
The hand-over uses gthread's internals (``handle_request``, ``finish_request``, ``nr_conns``,
the connection's ``sock``): pyproject.toml bounds gunicorn, tests/mcp/test_stream_worker.py is
their canary.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any
from urllib.parse import unquote, urlsplit

import h11
from flask import Flask

from app.core.keepalive_worker import KeepAliveWorker
from app.mcp.stream import StreamApp

log = logging.getLogger("harmonic.mcp.stream")

STOP_SECONDS = 2.0  # a stopping worker ends its streams (cleanly) within this


def received(req: Any) -> tuple[h11.Connection, h11.Request] | None:
    """For gunicorn's request ``req`` when it is one for the evented path (``GET /mcp``
    accepting an event stream): an h11 server connection that has received it whole (written
    out by an h11 client), ready for its response, and the request as h11 read it; None for
    any other request, and for one h11 will not carry."""
    if req.method != "GET" or req.path != "/mcp" or not any(
            name.lower() == "accept" and "text/event-stream" in value.lower()
            for name, value in req.headers):
        return None
    client = h11.Connection(h11.CLIENT)
    try:
        data = client.send(h11.Request(
            method=req.method, target=req.uri, http_version=".".join(map(str, req.version)),
            headers=[(k.encode("latin-1"), v.encode("latin-1")) for k, v in req.headers]))
        data += client.send(h11.EndOfMessage())  # refuses when a body was declared
        server = h11.Connection(h11.SERVER)
        server.receive_data(data)
        request, _ = server.next_event(), server.next_event()  # the request, then its end
    except h11.ProtocolError:
        return None
    return (server, request) if isinstance(request, h11.Request) else None


class StreamWorker(KeepAliveWorker):
    """KeepAliveWorker; ``GET /mcp`` streams go to this process's event loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stream_app: Any = None
        self._start_lock = threading.Lock()

    # -- handing a request over (runs on a pool thread) ----------------------------------------

    def handle_request(self, req: Any, conn: Any) -> bool:
        ours = None if self.cfg.is_ssl else received(req)
        if ours is None:
            return bool(super().handle_request(req, conn))
        loop = self._event_loop()
        # The socket becomes the loop's: detached, gunicorn's object no longer owns the file
        # descriptor (finish_request below forgets the connection instead of closing it).
        sock = socket.socket(fileno=conn.sock.detach())
        asyncio.run_coroutine_threadsafe(serve(self._stream_app, sock, *ours), loop)
        return False  # no keep-alive: the stream's response says Connection: close

    def finish_request(self, conn: Any, fs: Any) -> None:
        if conn.sock.fileno() < 0:
            self.nr_conns -= 1  # detached (the loop holds the socket now): nothing to close
            return
        super().finish_request(conn, fs)

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        """This process's stream loop (started with the first stream, on its own thread)."""
        with self._start_lock:
            if self._loop is None:
                # The app gunicorn loaded (``wsgi:app``; ``self.wsgi`` is it wrapped by the
                # keep-alive worker): its pool, its change feed. This module sits below the
                # app's factory, so it never builds one of its own.
                loaded = self.app.wsgi()
                if not isinstance(loaded, Flask):
                    raise TypeError(f"the stream worker serves a Flask app (wsgi:app), not "
                                    f"{type(loaded).__name__}")
                self._stream_app = StreamApp(loaded)
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="harmonic-streams",
                                 daemon=True).start()
                self._loop = loop
            return self._loop

    # -- stopping ------------------------------------------------------------------------------

    def run(self) -> None:
        try:
            super().run()
        finally:
            self._end_streams()

    def _end_streams(self) -> None:
        """End every open stream cleanly (the client reconnects elsewhere with Last-Event-ID)."""
        loop = self._loop
        if loop is None:
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=STOP_SECONDS) if tasks else None

        try:
            asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(STOP_SECONDS + 1)
        except Exception:
            log.debug("streams did not all end in time", exc_info=True)


def _scope(request: h11.Request, sock: socket.socket) -> dict[str, Any]:
    target = urlsplit(request.target)  # origin-form, or absolute-form through a proxy
    path, query = target.path, target.query
    peer, own = sock.getpeername(), sock.getsockname()
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": request.http_version.decode(), "method": request.method.decode(),
            "scheme": "http", "path": unquote(path.decode("latin-1")), "raw_path": path,
            "query_string": query, "root_path": "", "headers": list(request.headers),
            "client": peer[:2] if isinstance(peer, tuple) else None,
            "server": own[:2] if isinstance(own, tuple) else None}


async def serve(app: Any, sock: socket.socket, connection: h11.Connection,
                request: h11.Request) -> None:
    """Run the ASGI ``app`` for the ``request`` that ``connection`` has received, answering on
    ``sock`` as h11 frames it, event by event; ``receive`` reports the client's disconnect."""
    try:
        scope = _scope(request, sock)
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock)
    except OSError:
        sock.close()  # the client is gone already
        return
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True  # the request has no body
            return {"type": "http.request", "body": b"", "more_body": False}
        try:
            while await reader.read(65536):
                pass  # nothing more is expected on a stream's connection; dropped
        except OSError:
            pass
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        events: list[h11.Response | h11.Data | h11.EndOfMessage] = []
        if message["type"] == "http.response.start":
            events.append(h11.Response(status_code=int(message["status"]), headers=[
                *message.get("headers", []), (b"connection", b"close")]))
        elif message["type"] == "http.response.body" and connection.our_state is h11.SEND_BODY:
            if message.get("body"):
                events.append(h11.Data(data=bytes(message["body"])))
            if not message.get("more_body", False):
                events.append(h11.EndOfMessage())
        for event in events:
            writer.write(connection.send(event))
        await writer.drain()

    try:
        await app(scope, receive, send)
    except asyncio.CancelledError:
        pass  # the worker is stopping: end the response below so the client sees a clean end
    except OSError:
        connection.send_failed()  # the client went away mid-write: nothing more to send
    except Exception:
        log.exception("GET /mcp stream failed")
    try:
        if connection.our_state is h11.SEND_RESPONSE:
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": b"the stream failed"})
        elif connection.our_state is h11.SEND_BODY:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except OSError:
        pass
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass


# gunicorn's --worker-class for this worker (bin/serve names it in its command line).
WORKER_CLASS = f"{__name__}.{StreamWorker.__name__}"

"""The gunicorn worker of ``bin/serve``: gthread, plus ``GET /mcp`` streams on an event loop.

``StreamWorker`` is ``app.core.keepalive_worker.KeepAliveWorker`` (gunicorn's threaded worker,
answering a kept-alive connection's next request on the same thread) for every request but
one: a parsed ``GET /mcp`` asking for ``text/event-stream``. That request's socket is taken
from gunicorn (the pool thread returns at once, gunicorn forgets the connection) and served by
the stream ASGI app (``app.mcp.stream``) on one asyncio event loop thread per worker process,
through the minimal HTTP/1.1 adapter below (``serve_socket``). So the standalone stream of an
MCP session is on the app's own port, where the official SDK clients look for it (they follow
no redirect to another origin), and an open stream costs a coroutine and a socket, not a pool
thread.

Why not an ASGI server for everything: the Flask app and its tests are WSGI, gunicorn's gthread
path is measured and tuned (docs/PERFORMANCE.md), and only this one long-lived request needs an
event loop. TLS sockets (gunicorn's own ``--certfile``) are not handed over: a TLS front end
terminates TLS in every deployment ``bin/serve`` describes, and the stream then answers 405.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from http import HTTPStatus
from typing import Any

from flask import Flask

from app.core.keepalive_worker import KeepAliveWorker
from app.mcp.stream import StreamApp

log = logging.getLogger("harmonic.mcp.stream")

STOP_SECONDS = 2.0  # a stopping worker ends its streams (cleanly) within this


def wants_stream(method: str, path: str, headers: list[tuple[str, str]]) -> bool:
    """Whether a request is one for the evented path: ``GET /mcp`` accepting an event stream."""
    return method == "GET" and path == "/mcp" and any(
        name.lower() == "accept" and "text/event-stream" in value.lower()
        for name, value in headers)


class StreamWorker(KeepAliveWorker):
    """KeepAliveWorker; ``GET /mcp`` streams go to this process's event loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stream_app: Any = None
        self._start_lock = threading.Lock()

    # -- handing a request over (runs on a pool thread) ----------------------------------------

    def handle_request(self, req: Any, conn: Any) -> bool:
        # HTTP/1.0 has no chunked bodies: such a client gets Flask's 405, as over TLS.
        if (self.cfg.is_ssl or tuple(req.version) < (1, 1)
                or not wants_stream(req.method, req.path, req.headers)):
            return bool(super().handle_request(req, conn))
        loop = self._event_loop()
        client = conn.client if isinstance(conn.client, tuple) else None
        server = conn.server if isinstance(conn.server, tuple) else None
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
                 "http_version": "1.1", "method": req.method, "scheme": "http",
                 "path": req.path, "raw_path": req.path.encode("latin-1"),
                 "query_string": (req.query or "").encode("latin-1"), "root_path": "",
                 "headers": [(k.lower().encode("latin-1"), v.encode("latin-1"))
                             for k, v in req.headers],
                 "client": client[:2] if client else None,
                 "server": server[:2] if server else None}
        # The socket becomes the loop's: detached, gunicorn's object no longer owns the file
        # descriptor (finish_request below forgets the connection instead of closing it).
        sock = socket.socket(fileno=conn.sock.detach())
        conn.handed_off = True
        asyncio.run_coroutine_threadsafe(serve_socket(self._stream_app, sock, scope), loop)
        self.nr += 1
        return False  # no keep-alive: the stream's response says Connection: close

    def finish_request(self, conn: Any, fs: Any) -> None:
        if getattr(conn, "handed_off", False):
            self.nr_conns -= 1  # the loop holds the socket now; nothing to close here
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


async def serve_socket(app: Any, sock: socket.socket, scope: dict[str, Any]) -> None:
    """Run the ASGI ``app`` for one parsed HTTP/1.1 request on ``sock``: the response goes out
    as it comes (chunked, ``Connection: close``); ``receive`` reports the client's disconnect."""
    sock.setblocking(False)
    reader, writer = await asyncio.open_connection(sock=sock)
    state = {"request": False, "started": False, "ended": False}

    async def receive() -> dict[str, Any]:
        if not state["request"]:
            state["request"] = True  # a GET: no body
            return {"type": "http.request", "body": b"", "more_body": False}
        try:
            while await reader.read(65536):
                pass  # nothing more is expected on a stream's connection; dropped
        except OSError:
            pass
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status = int(message["status"])
            lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}".encode()]
            lines += [name + b": " + value for name, value in message.get("headers", [])]
            lines += [b"transfer-encoding: chunked", b"connection: close", b"", b""]
            writer.write(b"\r\n".join(lines))
            state["started"] = True
        elif message["type"] == "http.response.body" and not state["ended"]:
            body = bytes(message.get("body", b""))
            if body:
                writer.write(b"%x\r\n%s\r\n" % (len(body), body))
            if not message.get("more_body", False):
                writer.write(b"0\r\n\r\n")
                state["ended"] = True
            await writer.drain()

    try:
        await app(scope, receive, send)
    except asyncio.CancelledError:
        pass  # the worker is stopping: end the response below so the client sees a clean end
    except OSError:
        state["ended"] = True  # the client went away mid-write
    except Exception:
        log.exception("GET /mcp stream failed")
    try:
        if not state["started"]:
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": b"the stream failed"})
        elif not state["ended"]:
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

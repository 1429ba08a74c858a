"""bin/serve's gunicorn worker: gthread, keeping a kept-alive connection's next request on its
thread, running few requests at once, with the loaded app frozen out of garbage collection.

gthread hands a connection back to the main thread's poller after every response. The
client's next request on it then takes a trip through the poller, the pool's queue and a
future's callback: three thread switches around a request that may itself be shorter than
them, and each switch waits for the GIL. ``KeepAliveWorker`` lets the pool thread that
answered wait up to ``KEEPALIVE_WAIT`` for that next request and answer it itself, but only
while no other connection is waiting for a thread (so a busy client never keeps others
waiting) and while the worker is not stopping; otherwise the connection goes back to
gunicorn's poller as before.
Agents send call after call on one connection; this is the case it is for
(docs/PERFORMANCE.md, "What the code does for speed").

At most ``HARMONIC_RUNNING`` requests of a process run at once (two by default); a thread with
a request beyond them waits for one of them to end, up to ``HARMONIC_RUN_WAIT_MS`` (10), and
then runs anyway. Under the GIL only one thread runs Python at a time, and every request of
eight running together hands the GIL to another thread at each of its system calls, so each
call spends more CPU time the more threads run beside it. The wait's bound keeps a slow request
(an upstream call, a large page) from holding the others back for longer than that, and the
pool keeps its threads for such requests. A streamed response (an SSE answer, a
``subscriptions/listen`` stream that lasts minutes) gives its turn back once its headers are
out: its body comes as events happen, not as work of this thread.

It also freezes what loading the app created (``gc.freeze``): the app's objects (routes,
models, templates, SQLAlchemy's metadata) live as long as the process, and every full
collection would walk them again, holding the GIL in the middle of a request.

``bin/serve`` runs it (through ``app.mcp.stream_worker.StreamWorker``, which adds the ``GET
/mcp`` streams, or on its own when streams are served on a port of their own).
"""

from __future__ import annotations

import gc
import select
import threading
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

from config import whole_number

# How long a pool thread waits for a kept-alive client's next request before handing the
# connection back to the poller: a client that sends its next call as soon as it has read a
# response does so well within it on the same host or network, and an idle thread loses
# nothing by waiting.
KEEPALIVE_WAIT = 0.002


class KeepAliveWorker(ThreadWorker):
    """gthread, answering a kept-alive connection's next request on the same pool thread, with
    at most HARMONIC_RUNNING requests running at once (the module's docstring says why)."""

    wsgi: Any  # the app, as gunicorn's load_wsgi sets it

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._queued = 0  # connections handed to the pool and not yet taken by a thread
        self._queued_lock = threading.Lock()
        # Two by default: one can run while the other waits on the database. 0: no turns.
        running = whole_number("HARMONIC_RUNNING", 2) or self.cfg.threads
        self._run_wait = whole_number("HARMONIC_RUN_WAIT_MS", 10) / 1000
        self._running = threading.BoundedSemaphore(running)
        self._turn = threading.local()  # whether this thread's request holds a turn

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi = self._streams_give_their_turn(self.wsgi)
        # The loaded app lives as long as the worker: later full collections skip its objects.
        gc.freeze()

    def enqueue_req(self, conn: Any) -> None:  # the main thread's
        with self._queued_lock:
            self._queued += 1
        super().enqueue_req(conn)

    def handle(self, conn: Any) -> Any:  # a pool thread's
        with self._queued_lock:
            self._queued -= 1
        result = self._serve(conn)
        while result is True and self._next_request_here(conn):
            result = self._serve(conn)
        return result  # gthread's finish_request takes it from here, as for any request

    def _serve(self, conn: Any) -> Any:
        """One request of ``conn``, run in its turn (or once the wait for one is over)."""
        self._turn.held = self._running.acquire(timeout=self._run_wait)
        try:
            return super().handle(conn)
        finally:
            self._give_turn()

    def _give_turn(self) -> None:
        if getattr(self._turn, "held", False):
            self._turn.held = False
            self._running.release()

    def _streams_give_their_turn(self, app: Any) -> Any:
        """``app``, giving its request's turn back as soon as it answers with a streamed body
        (no Content-Length: an event stream whose body comes as things happen)."""
        def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
            streamed = False

            def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
                nonlocal streamed
                streamed = not any(name.lower() == "content-length" for name, _ in headers)
                return start_response(status, headers, exc_info)

            body = app(environ, start)
            if streamed:
                self._give_turn()
            return body

        return wsgi

    def _next_request_here(self, conn: Any) -> bool:
        """Whether this thread answers ``conn``'s next request itself (it has arrived, or does
        within KEEPALIVE_WAIT) rather than giving the connection back to the poller."""
        if not self.alive or self._queued > 0:
            return False
        if conn.parser.unreader.buf.getvalue():
            return True  # read already, with the last request (a pipelining client)
        try:
            poller = select.poll()  # not select.select: a busy worker's descriptors pass 1024
            poller.register(conn.sock, select.POLLIN)
            return bool(poller.poll(KEEPALIVE_WAIT * 1000))
        except (OSError, ValueError):
            return False  # closed meanwhile: gunicorn's own path finds out and cleans up

"""gunicorn's threaded worker, keeping a kept-alive connection's next request on its thread.

gthread hands a connection back to the main thread's poller after every response. The
client's next request on it then takes a trip through the poller, the pool's queue and a
future's callback: three thread switches around a request that may itself take 0.2 ms, and
each switch waits for the GIL. ``KeepAliveWorker`` lets the pool thread that answered wait up
to ``KEEPALIVE_WAIT`` for that next request and answer it itself, but only while no other
connection is waiting for a thread (so a busy client never keeps others waiting) and while the
worker is not stopping; otherwise the connection goes back to gunicorn's poller as before.
Agents send call after call on one connection; this is the case it is for (measured in
docs/PERFORMANCE.md, issue 22's eighth pass).

``bin/serve`` runs it (through ``app.mcp.stream_worker.StreamWorker``, which adds the ``GET
/mcp`` streams, or on its own when streams are served on a port of their own).
"""

from __future__ import annotations

import select
import threading
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

# How long a pool thread waits for a kept-alive client's next request before handing the
# connection back to the poller: a client that sends its next call as soon as it has read a
# response does so well within it on the same host or network, and an idle thread loses
# nothing by waiting.
KEEPALIVE_WAIT = 0.002


class KeepAliveWorker(ThreadWorker):
    """gthread, answering a kept-alive connection's next request on the same pool thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._queued = 0  # connections handed to the pool and not yet taken by a thread
        self._queued_lock = threading.Lock()

    def enqueue_req(self, conn: Any) -> None:  # the main thread's
        with self._queued_lock:
            self._queued += 1
        super().enqueue_req(conn)

    def handle(self, conn: Any) -> Any:  # a pool thread's
        with self._queued_lock:
            self._queued -= 1
        result = super().handle(conn)
        while result is True and self._next_request_here(conn):
            result = super().handle(conn)
        return result  # gthread's finish_request takes it from here, as for any request

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

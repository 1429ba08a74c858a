"""Waking idle workers on PostgreSQL: a new run ``NOTIFY``s, every ``bin/worker`` ``LISTEN``s.

An idle worker otherwise looks for jobs every ``WORKFLOWS_POLL_SECONDS``; with a listener it
looks as soon as a run is enqueued, so enqueue → start no longer waits for the next poll.
Polling stays as the fallback: a listener that loses its connection reconnects, and
meanwhile (and for jobs that become available later, such as retries) the poll finds them.
SQLite has no notifications; there the in-process worker thread is woken directly.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from sqlalchemy import Connection, Engine, text

log = logging.getLogger("harmonic.workflows")
CHANNEL = "harmonic_workflow_jobs"
_NOTIFY = text(f"SELECT pg_notify('{CHANNEL}', '')")


def notify(conn: Connection) -> None:
    """Tell listening workers that jobs are waiting (delivered when ``conn`` commits)."""
    if conn.dialect.name == "postgresql":
        conn.execute(_NOTIFY)


def listen(engine: Engine, wake: threading.Event, stop: threading.Event) -> None:
    """Start a daemon thread that sets ``wake`` on every notification until ``stop`` is set."""
    if engine.dialect.name != "postgresql":
        return
    threading.Thread(target=_listen, args=(engine, wake, stop), daemon=True,
                     name="workflows-wakeup").start()


def _listen(engine: Engine, wake: threading.Event, stop: threading.Event) -> None:
    while not stop.is_set():
        conn: Any = None
        try:
            # A connection of its own, outside the pool: it stays in LISTEN for good.
            cargs, cparams = engine.dialect.create_connect_args(engine.url)
            conn = engine.dialect.loaded_dbapi.connect(*cargs, **cparams, autocommit=True)
            conn.execute(f"LISTEN {CHANNEL}")
            wake.set()  # anything enqueued while we were not listening: look now
            while not stop.is_set():
                for _ in conn.notifies(timeout=1.0, stop_after=1):
                    wake.set()
        except Exception:  # the database went away: polling covers until we are back
            log.warning("workflow wake-up listener lost its connection; retrying",
                        exc_info=True)
            stop.wait(1.0)
        finally:
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass

"""Change events across processes: the outbox written by other processes reaches this process's
listeners (``app.core.changes.listen``: listen streams, stdio sessions, GET /mcp streams).

One relay thread per process (started by ``ensure_started`` when something first listens)
keeps a cursor, the id of the newest change event it has read, and reads the events past it:

- on PostgreSQL when told: one dedicated connection per process runs ``LISTEN``; every
  transaction that writes change events sends a ``NOTIFY`` (``app.core.changes``), delivered
  when it commits. The connection is reopened after a failure (a database restart), and the
  relay then reads everything past its cursor: the outbox is the durable record, the
  notification only a wake-up. It also reads every ``PG_SAFETY_SECONDS`` without one.
- on SQLite every ``SQLITE_POLL_SECONDS`` (no notifications; the in-process delivery of
  ``app.core.changes`` keeps this process's own changes immediate).

Events this process wrote itself were already delivered to its listeners right after their
commit, so the relay skips their ids (``changes.on_written`` tells it which). Waiters that want
event ids rather than URIs (the GET /mcp stream) are called as the cursor moves (``on_advance``)
and then read the outbox themselves.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from flask import Flask
from sqlalchemy import select

from app.core import changes
from app.extensions import db
from app.models.changes import ChangeEvent

log = logging.getLogger("harmonic.feed")

SQLITE_POLL_SECONDS = 0.25
PG_SAFETY_SECONDS = 5.0
STOP_SLICE_SECONDS = 0.2  # a PostgreSQL relay's thread, between reads, hears stop() within this
BATCH = 1000
THREAD_NAME = "harmonic-feed"  # the relay's thread
RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)


class Relay:
    """The relay of one process (one app): see the module docstring."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.cursor = 0
        self.connected = False  # PostgreSQL: the LISTEN connection is open
        self._local: set[int] = set()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._advance_hooks: list[Callable[[], None]] = []
        self.postgres = False
        self.caught_up_at = 0.0  # time.monotonic() of the last read of the outbox

    def fresh(self) -> bool:
        """Whether every change committed elsewhere more than a moment ago has reached this
        process: PostgreSQL's relay is listening (a commit's notification wakes it), SQLite's
        read the outbox lately (it reads every ``SQLITE_POLL_SECONDS``)."""
        if self._thread is None or not self._thread.is_alive():
            return False
        if self.postgres:
            return self.connected
        # A few polls' worth: a loaded machine may keep the thread waiting that long.
        return time.monotonic() - self.caught_up_at < 5.0

    def on_advance(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` (on the relay's thread) whenever the cursor moves: new events exist,
        this process's own included (an evented stream wakes and reads the outbox)."""
        self._advance_hooks.append(hook)

    # -- the thread ----------------------------------------------------------------------------

    def start(self) -> None:
        with self.app.app_context():
            self.postgres = db.engine.dialect.name == "postgresql"
            self.cursor = changes.latest_id()
        changes.on_written(self._written)
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        changes.off_written(self._written)
        if self._thread is not None:
            self._thread.join(timeout=PG_SAFETY_SECONDS + 1)

    def _written(self, ids: list[int]) -> None:
        with self._lock:
            self._local.update(ids)

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                if self.postgres:
                    self._listen_postgres()
                else:
                    self.catch_up()
                    self._stop.wait(SQLITE_POLL_SECONDS)
                failures = 0
            except Exception:
                self.connected = False
                delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                failures += 1
                log.warning("change feed interrupted; retrying in %.1f s", delay,
                            exc_info=failures == 1)
                self._stop.wait(delay)

    def _listen_postgres(self) -> None:
        import psycopg  # lazy: the driver only for PostgreSQL
        from psycopg.conninfo import (  # lazy: the driver only for PostgreSQL
            make_conninfo,
        )

        with self.app.app_context():
            url = db.engine.url
        # From the URL's parts, not its text: rendering a URL re-encodes a query value's space
        # as "+", which libpq reads literally (a DATABASE_URL with "?options=-c%20..." broke).
        parts = {"host": url.host, "port": url.port, "dbname": url.database,
                 "user": url.username, "password": url.password,
                 **{key: value for key, value in url.query.items() if isinstance(value, str)}}
        conninfo = make_conninfo("", **{key: value for key, value in parts.items()
                                    if value is not None})
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"LISTEN {changes.NOTIFY_CHANNEL}")
            self.connected = True
            self.catch_up()  # what was committed while we were away (or not yet listening)
            while not self._stop.is_set():
                # Waited in slices, so that stop() is heard within one, not after a whole wait.
                until = time.monotonic() + PG_SAFETY_SECONDS
                while not self._stop.is_set() and time.monotonic() < until:
                    if any(conn.notifies(timeout=STOP_SLICE_SECONDS, stop_after=1)):
                        break
                self.catch_up()

    # -- reading the outbox --------------------------------------------------------------------

    def catch_up(self) -> None:
        """Deliver the events past the cursor that other processes wrote."""
        while True:
            read_at = time.monotonic()
            with self.app.app_context(), db.engine.connect() as conn:
                rows = conn.execute(select(ChangeEvent.id, ChangeEvent.uri)
                                    .where(ChangeEvent.id > self.cursor)
                                    .order_by(ChangeEvent.id).limit(BATCH)).all()
            if not rows:
                self.caught_up_at = read_at
                return
            with self._changed:
                foreign = [uri for event_id, uri in rows if event_id not in self._local]
                self.cursor = rows[-1][0]
                # ids at or below the cursor will never be read again (ids become visible in
                # order): forget them, including those of transactions that rolled back.
                self._local = {i for i in self._local if i > self.cursor}
                self._changed.notify_all()
            for hook in list(self._advance_hooks):
                try:
                    hook()
                except Exception:
                    log.exception("change feed hook failed")
            if foreign:
                with self.app.app_context():
                    changes.deliver(dict.fromkeys(foreign))
            if len(rows) < BATCH:
                self.caught_up_at = read_at
                return

    def wait_past(self, event_id: int, timeout: float) -> int:
        """Block until the relay has read past ``event_id`` (or ``timeout``); the cursor."""
        with self._changed:
            self._changed.wait_for(lambda: self.cursor > event_id or self._stop.is_set(),
                                   timeout=timeout)
            return self.cursor


_start_lock = threading.Lock()


# One relay per database in a process: the listeners it delivers to are the process's, so two
# relays on one database (two apps in one process, as tests make them) would tell them twice.
_BY_DATABASE: dict[str, Relay] = {}


def ensure_started(app: Flask) -> Relay:
    """This process's relay for ``app``'s database, started on first use."""
    relay: Relay | None = app.extensions.get("harmonic.feed")
    if relay is not None:
        return relay
    with _start_lock:
        relay = app.extensions.get("harmonic.feed")
        if relay is None:
            with app.app_context():
                database = db.engine.url.render_as_string(hide_password=False)
            relay = _BY_DATABASE.get(database)
            if relay is None or relay._stop.is_set():
                relay = _BY_DATABASE[database] = Relay(app)
                relay.start()
            app.extensions["harmonic.feed"] = relay
    return relay


def on_relay_thread() -> bool:
    """Whether the caller runs on a relay's thread: its polls of the outbox are its own, never
    part of the request that happens to run meanwhile (statement counters leave them out)."""
    return threading.current_thread().name == THREAD_NAME


def running(app: Any) -> Relay | None:
    """The relay of ``app`` if one runs in this process."""
    relay: Relay | None = app.extensions.get("harmonic.feed")
    return relay

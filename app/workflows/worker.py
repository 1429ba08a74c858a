"""Workers: the loop behind ``bin/worker`` and the in-process thread of the embedded setup.

Any number of workers on any number of hosts may share a database: the queue's leases make sure
each job runs in one place at a time. On SIGTERM a worker finishes the job it is running (or
gives back one it has not started) and exits.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from flask import Flask

from app.workflows import engine, queue, runner, settings, wakeup

log = logging.getLogger("harmonic.workflows")


class Worker:
    def __init__(self, app: Flask, worker_id: str | None = None) -> None:
        self.app = app
        self.id = worker_id or runner.new_worker_id()
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.processed = 0

    def run_once(self) -> bool:
        """Lease and run one job; False when there was nothing to do."""
        with self.app.app_context():
            job = queue.lease(self.id, settings.get_float("WORKFLOWS_LEASE_SECONDS"),
                              inline=runner.inline)
            if job is None:
                return False
            if job.finished:  # a no-op step, completed as it was leased
                self.processed += 1
                return True
            if self.stop.is_set():  # asked to stop between lease and start: give it back
                queue.release(job)
                return False
            outcome = runner.execute(job)
            self.processed += 1
            log.info("worker %s: %s %s", self.id, job.step, outcome)
            return True

    def run_forever(self, max_jobs: int | None = None, exit_when_idle: bool = False) -> int:
        with self.app.app_context(), engine.pinned():
            return self._loop(max_jobs, exit_when_idle)

    def _loop(self, max_jobs: int | None, exit_when_idle: bool) -> int:
        poll = settings.get_float("WORKFLOWS_POLL_SECONDS")
        listening = threading.Event()  # set when this loop ends, to stop the listener too
        if not exit_when_idle:  # PostgreSQL: a new run wakes us before the next poll
            wakeup.listen(engine.queue_engine(), self.wake, listening)
        try:
            return self._poll(poll, max_jobs, exit_when_idle)
        finally:
            listening.set()

    def _poll(self, poll: float, max_jobs: int | None, exit_when_idle: bool) -> int:
        while not self.stop.is_set():
            try:
                busy = self.run_once()
            except Exception:  # the database went away for a moment: wait and retry
                log.exception("worker %s: lease loop failed", self.id)
                busy = False
            if max_jobs is not None and self.processed >= max_jobs:
                break
            if not busy:
                if exit_when_idle:
                    break
                self.wake.wait(poll)
                self.wake.clear()
        return self.processed


# The in-process thread -------------------------------------------------------------------------

_thread_lock = threading.Lock()
_threads: dict[int, tuple[int, Worker]] = {}  # id(app) → (pid, worker)


def thread_wanted(app: Flask) -> bool:
    with app.app_context():
        choice = settings.get("WORKFLOWS_WORKER").lower()
    if choice in ("on", "1", "true", "yes"):
        return True
    if choice in ("off", "0", "false", "no"):
        return False
    # auto: the embedded default (SQLite, not under test) gets a thread; PostgreSQL deployments
    # run bin/worker processes.
    return (not app.config.get("TESTING")
            and app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"))


def ensure_thread(app: Flask, force: bool = False) -> Worker | None:
    """Start this process's worker thread for ``app`` once (a forked child starts its own)."""
    if not force and not thread_wanted(app):
        return None
    key = id(app)
    with _thread_lock:
        existing = _threads.get(key)
        if existing and existing[0] == os.getpid():
            return existing[1]
        worker = Worker(app)
        thread = threading.Thread(target=worker.run_forever, daemon=True,
                                  name="workflows-worker")
        _threads[key] = (os.getpid(), worker)
        thread.start()
        log.info("started in-process workflow worker %s", worker.id)
        return worker


def kick() -> None:
    """A run was enqueued: make sure this process's thread (if any) runs and looks now."""
    from flask import current_app

    app: Any = current_app._get_current_object()  # type: ignore[attr-defined]
    worker = ensure_thread(app)
    if worker is not None:
        worker.wake.set()

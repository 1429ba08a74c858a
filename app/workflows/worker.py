"""Workers: the loop behind ``bin/worker`` and the in-process thread of the embedded setup.

Any number of workers on any number of hosts may share a database: the queue's leases make sure
each job runs in one place at a time. On SIGTERM a worker finishes the job it is running (or
gives back one it has not started) and exits.
"""

from __future__ import annotations

import logging
import os
import threading
from contextlib import ExitStack
from typing import Any

from flask import Flask, current_app, has_app_context

from app.workflows import engine, periodic, queue, runner, settings, wakeup

log = logging.getLogger("harmonic.workflows")


class Worker:
    def __init__(self, app: Flask, worker_id: str | None = None) -> None:
        self.app = app
        self.id = worker_id or runner.new_worker_id()
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.processed = 0
        self.batch = 1  # jobs to lease next (see run_once)
        self.clock = periodic.Clock()  # the periodic tasks (``periodic.every``) run here

    def run_once(self) -> bool:
        """Lease a batch of jobs and run those not completed as they were leased; False when
        there was nothing to do.

        The batch is ``WORKFLOWS_BATCH`` jobs while the previous one was all no-op steps
        (completed in the lease's transaction), one job otherwise: a worker busy with tool
        steps does not hold jobs that an idle worker could run meanwhile.
        """
        with self.app.app_context():
            lease_seconds = settings.get_float("WORKFLOWS_LEASE_SECONDS")
            jobs = queue.lease_batch(self.id, lease_seconds, self.batch, inline=runner.inline)
            if not jobs:
                return False
            pending = [job for job in jobs if not job.finished]
            self.processed += len(jobs) - len(pending)
            self.batch = (max(settings.get_int("WORKFLOWS_BATCH"), 1) if not pending else 1)
            with ExitStack() as keep:  # the leases of the jobs still waiting stay alive
                for job in pending[1:]:
                    keep.enter_context(runner.Heartbeat(job, lease_seconds))
                ran: set[Any] = set()
                for job in pending:
                    if self.stop.is_set():  # asked to stop before it started: give it back
                        queue.release(job)
                        continue
                    if job.run_id in ran:  # an earlier job of its run may have changed it
                        job.run = job.done = None
                    outcome = runner.execute(job)
                    ran.add(job.run_id)
                    self.processed += 1
                    log.info("worker %s: %s %s", self.id, job.step, outcome)
            return not self.stop.is_set()

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
            self.clock.run_due()
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
                self.wake.wait(self.clock.next_in(poll))
                self.wake.clear()
        return self.processed


# The in-process thread -------------------------------------------------------------------------

_thread_lock = threading.Lock()
_threads: dict[int, tuple[int, Worker]] = {}  # id(app) → (pid, worker)


def thread_wanted(app: Flask) -> bool:
    if has_app_context() and current_app._get_current_object() is app:  # type: ignore[attr-defined]
        # Asked before every request: pushing another context of the same app cost more
        # than reading the setting.
        choice = settings.get("WORKFLOWS_WORKER").lower()
    else:
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


def running_here(app: Flask) -> bool:
    """Whether this process has started its worker thread for ``app``."""
    existing = _threads.get(id(app))
    return existing is not None and existing[0] == os.getpid()


def ensure_thread(app: Flask, force: bool = False) -> Worker | None:
    """Start this process's worker thread for ``app`` once (a forked child starts its own)."""
    if not force and not thread_wanted(app):
        return None
    key = id(app)
    with _thread_lock:
        if running_here(app):
            return _threads[key][1]
        worker = Worker(app)
        thread = threading.Thread(target=worker.run_forever, daemon=True,
                                  name="workflows-worker")
        _threads[key] = (os.getpid(), worker)
        thread.start()
        log.info("started in-process workflow worker %s", worker.id)
        return worker


def kick() -> None:
    """A run was enqueued: make sure this process's thread (if any) runs and looks now."""
    app: Any = current_app._get_current_object()  # type: ignore[attr-defined]
    worker = ensure_thread(app)
    if worker is not None:
        worker.wake.set()

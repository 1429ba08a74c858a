"""An idle ``bin/worker`` on PostgreSQL is woken by a new run (LISTEN/NOTIFY), not the poll.

The worker polls once an hour here, so a second run, started once the worker has gone idle,
can only finish if the notification woke it. SQLite has no notifications (its workers poll;
the embedded thread is woken in-process), so there the test is skipped.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from flask import Flask

from tests.workflows.conftest import user_id
from tests.workflows.workers import start_worker, stop

PLAYBOOK = """
apiVersion: harmonic/v1
kind: Playbook
metadata: {name: wake-test, path: tests/wake-test}
workflow:
  - step: start
    next: [end]
  - step: end
"""


def _ended(app: Flask, run_id: uuid.UUID, timeout: float = 60) -> str:
    from app.workflows import queue

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with app.app_context():
            status = (queue.get_run(run_id) or {}).get("status", "")
        if status in ("succeeded", "failed"):
            return status
        time.sleep(0.05)
    return "still waiting"


def test_a_new_run_wakes_an_idle_worker(app: Flask, studio,  # type: ignore[no-untyped-def]
                                        tmp_path: Path, wf_settings) -> None:
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        pytest.skip("SQLite has no LISTEN/NOTIFY: its workers poll")
    from app.workflows import runs

    worker = start_worker(app, tmp_path, "sleeper", WORKFLOWS_POLL_SECONDS="3600")
    try:
        with app.app_context():
            first = runs.start(PLAYBOOK, {}, user_id(app, "alice"))
        assert _ended(app, first) == "succeeded"
        time.sleep(0.5)  # let the worker find nothing more and go idle (a poll of an hour)
        with app.app_context():
            second = runs.start(PLAYBOOK, {}, user_id(app, "alice"))
        assert _ended(app, second) == "succeeded"
    finally:
        stop(worker)

"""Faults with real worker processes, on SQLite and PostgreSQL.

- kill -9 a worker in the middle of a step whose side effect already happened: another worker
  reclaims the job when the lease expires, the run completes, the effect happened once;
- four workers draining a thousand jobs: every job runs exactly once, never two at a time.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from flask import Flask

from tests.workflows.conftest import events_of, user_id
from tests.workflows.workers import start_worker, stop

pytestmark = pytest.mark.slow  # real worker processes, killed and restarted

KILL_PLAYBOOK = """
apiVersion: harmonic/v1
kind: Playbook
metadata: {name: crash-test, path: tests/crash-test}
workload: {studio: team}
workbook:
  - name: write
    type: mcp
    spec:
      tool: execute_action
      arguments:
        path: "/studios/{{ workload.studio }}/note"
        action: create_note
        params: {title: "Exactly once", text: "written by {{ run.short_id }}"}
  - name: read
    type: page
    spec: {path: "/studios/{{ workload.studio }}"}
workflow:
  - step: start
    next: [write]
  - step: write
    task: write
    next: [read]
  - step: read
    task: read
    next: [end]
  - step: end
"""


def _wait(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _notes(app: Flask, title: str) -> int:
    from app.extensions import db
    from app.models import Note

    with app.app_context():
        count = db.session.query(Note).filter(Note.title == title).count()
        db.session.remove()
        return count


def _run_status(app: Flask, run_id: uuid.UUID) -> str:
    from app.workflows import queue

    with app.app_context():
        return (queue.get_run(run_id) or {}).get("status", "")


def test_kill_9_mid_step_is_reclaimed_and_the_effect_happens_once(
        app: Flask, studio, tmp_path: Path, wf_settings) -> None:  # type: ignore[no-untyped-def]
    from app.workflows import runs

    with app.app_context():
        run_id = runs.start(KILL_PLAYBOOK, {}, user_id(app, "alice"))
    # Worker A pauses right after the note is committed, before the step is recorded as done.
    victim = start_worker(app, tmp_path, "victim", WORKFLOWS_CRASH_PAUSE="120")
    try:
        _wait(lambda: _notes(app, "Exactly once") == 1, 60, "worker A to write the note")
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
    finally:
        stop(victim)
    rescuer = start_worker(app, tmp_path, "rescuer")
    try:
        _wait(lambda: _run_status(app, run_id) in ("succeeded", "failed"), 60, "the run to end")
    finally:
        stop(rescuer)
    assert _run_status(app, run_id) == "succeeded"
    assert _notes(app, "Exactly once") == 1

    events = events_of(app, run_id)
    write = [(e["type"], e["data"]) for e in events if e["step"] == "write"]
    assert [t for t, _ in write] == ["step_started", "action_started", "lease_reclaimed",
                                     "step_started", "action_started", "action_completed",
                                     "step_completed"]
    assert write[0][1]["worker"] == "victim" and write[3][1]["worker"] == "rescuer"
    assert write[2][1] == {"from_worker": "victim", "attempt": 2}
    assert write[5][1]["replayed_from_ledger"] is True
    assert [e["type"] for e in events][-1] == "execution_completed"
    # Every other step ran exactly once.
    started = Counter(e["step"] for e in events if e["type"] == "step_started")
    assert started == {"start": 1, "write": 2, "read": 1, "end": 1}


def test_four_workers_drain_a_thousand_jobs_without_double_leases(
        app: Flask, tmp_path: Path, wf_settings) -> None:  # type: ignore[no-untyped-def]
    from app.workflows import queue
    from app.workflows.calls import CallStep, enqueue_calls

    log = tmp_path / "executions.log"
    with app.app_context():
        run_ids = [enqueue_calls(f"drain-{r}", [CallStep(f"s{i}", "probe.record",
                                                         {"log": str(log)})
                                                for i in range(10)])
                   for r in range(100)]
    # Leases long enough that contention cannot expire them: this test is about leasing.
    workers = [start_worker(app, tmp_path, f"w{n}", WORKFLOWS_LEASE_SECONDS="10")
               for n in range(4)]
    try:
        def finished() -> bool:
            with app.app_context():
                return queue.counts() == {"done": 1000}
        _wait(finished, 150, "1000 jobs to be done")
    finally:
        for proc in workers:
            stop(proc)
    lines = [line.split() for line in log.read_text().splitlines()]
    executions = Counter((run, step) for run, step, *_ in lines)
    twice = [line for line in lines if executions[(line[0], line[1])] > 1]
    assert len(executions) == 1000 and not twice, twice[:6]
    assert {attempt for _, _, attempt, *_ in lines} == {"1"}
    pids = Counter(pid for _, _, _, pid, *_ in lines)
    assert len(pids) == 4, pids  # all four took part
    for run_id in run_ids:
        events = events_of(app, run_id)
        leases = [e for e in events if e["type"] == "step_started"]
        assert len(leases) == 10 and len({e["step"] for e in leases}) == 10
        assert events[-1]["type"] == "execution_completed"


def test_sigterm_finishes_the_current_step_then_exits(
        app: Flask, tmp_path: Path, wf_settings) -> None:  # type: ignore[no-untyped-def]
    from app.workflows import queue
    from app.workflows.calls import CallStep, enqueue_calls

    log = tmp_path / "executions.log"
    with app.app_context():
        run_id = enqueue_calls("slow", [CallStep("slow", "probe.record",
                                                 {"log": str(log), "sleep": 2,
                                                  "mark": str(tmp_path / "running")}),
                                        CallStep("after", "probe.record", {"log": str(log)})])
    worker = start_worker(app, tmp_path, "polite")
    try:
        _wait((tmp_path / "running").exists, 60, "the slow step to start")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        stop(worker)
    with app.app_context():
        assert queue.counts(run_id) == {"done": 1, "queued": 1}
    assert [line.split()[1] for line in log.read_text().splitlines()] == ["slow"]
    assert "stopped after 1 jobs" in (tmp_path / "polite.log").read_text()


def test_mcp_subscribers_hear_about_events_written_by_another_process(
        app: Flask, tmp_path: Path, wf_settings) -> None:  # type: ignore[no-untyped-def]
    from app.core import changes
    from app.core.identity import Identity
    from app.mcp.context import SessionState
    from app.mcp.registry import REGISTRY
    from app.mcp.server import McpServer
    from app.workflows.calls import CallStep, enqueue_calls
    from tests.workflows.conftest import user_id

    heard: list[str] = []
    changes.listen(heard.append)
    try:
        with app.app_context():
            from app.extensions import db
            from app.services import accounts

            accounts.create_user("watcher", "Watcher")
            db.session.commit()
        owner = user_id(app, "watcher")
        with app.app_context():
            run_id = enqueue_calls("watched", [CallStep("only", "probe.record",
                                                        {"log": str(tmp_path / "log")})],
                                   user_id=owner)
        uri = f"harmonic://runs/{run_id.hex[:8]}/events"
        session = SessionState("watch")
        session.initialized = True

        class Quiet:
            def notify(self, message): ...  # type: ignore[no-untyped-def]

        with app.app_context():  # reading a queued run starts watching it
            reply = McpServer(REGISTRY).handle(
                {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}},
                session, Quiet(), Identity(user_id=owner, via="mcp"))
        assert '"type": "execution_started"' in reply["result"]["contents"][0]["text"]
        heard.clear()
        worker = start_worker(app, tmp_path, "elsewhere")
        try:
            _wait(lambda: uri in heard, 60, "a notification for the other process's events")
        finally:
            stop(worker)
    finally:
        changes.unlisten(heard.append)


def test_heartbeats_keep_a_long_step_from_being_reclaimed(
        app: Flask, tmp_path: Path, wf_settings) -> None:  # type: ignore[no-untyped-def]
    from app.workflows import queue
    from app.workflows.calls import CallStep, enqueue_calls

    log = tmp_path / "executions.log"
    with app.app_context():
        run_id = enqueue_calls("long", [CallStep("long", "probe.record",
                                                 {"log": str(log), "sleep": 3,
                                                  "mark": str(tmp_path / "running")})])
    first = start_worker(app, tmp_path, "first", WORKFLOWS_LEASE_SECONDS="1")
    try:
        _wait((tmp_path / "running").exists, 60, "the long step to start")
        second = start_worker(app, tmp_path, "second", WORKFLOWS_LEASE_SECONDS="1")
        try:
            _wait(lambda: _run_status(app, run_id) == "succeeded", 60, "the run to end")
        finally:
            stop(second)
    finally:
        stop(first)
    assert len(log.read_text().splitlines()) == 1  # three lease lengths, one execution
    events = events_of(app, run_id)
    assert [e["data"]["worker"] for e in events if e["type"] == "step_started"] == ["first"]
    assert not any(e["type"] == "lease_reclaimed" for e in events)
    with app.app_context():
        assert queue.counts(run_id) == {"done": 1}

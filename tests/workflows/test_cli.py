"""``flask workflows run FILE --input k=v --follow`` in a real process, printing events live."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flask import Flask

ROOT = Path(__file__).resolve().parents[2]


def test_run_follow_prints_every_event_until_done(app: Flask, studio, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKFLOWS_", "LLM_"))}
    env.update({"FLASK_APP": "wsgi.py", "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
                "HARMONIC_INSTANCE": str(tmp_path / "instance"), "SECRET_KEY": "test",
                "WORKFLOWS_POLL_SECONDS": "0.05"})
    done = subprocess.run(
        [sys.executable, "-m", "flask", "workflows", "run",
         "examples/workflows/studio-check.yaml", "--input", "studio=team",
         "--input", "welcome=Hello from the CLI", "--as", "alice", "--follow", "--worker"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("run ") and "queued" in lines[0]
    kinds = [line.split()[2] for line in lines[1:]]
    assert kinds[0] == "execution_started" and kinds[-1] == "execution_completed"
    assert kinds.count("step_completed") == 4  # start, look, welcome, end
    assert "welcome" in done.stdout
    with app.app_context():
        from app.extensions import db
        from app.models import Note

        assert [n.text for n in db.session.query(Note).all()] == ["Hello from the CLI"]
    bad = subprocess.run([sys.executable, "-m", "flask", "workflows", "run",
                          "examples/workflows/studio-check.yaml", "--input", "nope=1"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1
    assert "unknown input nope (workload defines: studio, welcome)" in bad.stderr


def test_no_worker_leaves_the_run_to_the_workers_outside(app: Flask, studio,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    """On SQLite too: the command's own process leases nothing, a bin/worker runs it all."""
    import time

    from tests.workflows.workers import start_worker, stop

    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKFLOWS_", "LLM_"))}
    env.update({"FLASK_APP": "wsgi.py", "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
                "HARMONIC_INSTANCE": str(tmp_path / "instance"), "SECRET_KEY": "test",
                "WORKFLOWS_POLL_SECONDS": "0.05"})
    cli = subprocess.Popen(
        [sys.executable, "-m", "flask", "workflows", "run", "examples/workflows/studio-check.yaml",
         "--input", "studio=team", "--as", "alice", "--follow", "--no-worker"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    worker = None
    try:
        assert cli.stdout is not None
        first = cli.stdout.readline()
        assert first.startswith("run ") and "queued" in first, first + cli.stderr.read()
        short = first.split()[1]
        time.sleep(2)  # time enough for a worker in the command's process to take the job
        from app.workflows import queue, runs

        with app.app_context():
            run = runs.find(short)
            assert run["status"] == "queued"
            assert [e["type"] for e in queue.events_after(run["id"])] == ["execution_started"]
        worker = start_worker(app, tmp_path, "outside")
        out, err = cli.communicate(timeout=120)
    finally:
        if cli.poll() is None:
            cli.kill()
        if worker is not None:
            stop(worker)
    assert cli.returncode == 0, out + err
    with app.app_context():
        started = [e for e in queue.events_after(run["id"]) if e["type"] == "step_started"]
    assert len(started) == 4 and {e["data"]["worker"] for e in started} == {"outside"}

"""The workflow queue on PostgreSQL (issue item 7): jobs per second with 1, 2 and 4 ``bin/worker``
processes, and enqueue -> complete latency, beside the ceiling for this design: a bare
``SELECT ... FOR UPDATE SKIP LOCKED`` / ``UPDATE`` loop on a table of the same shape
(``CREATE TABLE ... (LIKE workflow_jobs INCLUDING ALL)``), with as many worker processes.

Ours runs real workflow runs of the smallest workflow (``start -> end``: two no-op jobs per run,
each leased, run, completed with its events, the second finishing the run). All jobs become
available at the same instant T0, after every worker is up and polling and every run is
enqueued (for later; one UPDATE then sets T0), so neither process start-up nor enqueueing is
timed: throughput = jobs / (last finished_at - T0), read from the
database for both series.

    .venv/bin/python bench/queue_bench.py [--quick | --smoke] [--workers 1,2,4]
    .venv/bin/python bench/queue_bench.py --ceiling-worker URL   (internal: one bare worker)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import PY, ROOT  # noqa: E402

WORKFLOW = """
apiVersion: harmonic/v1
kind: Playbook
metadata: {name: bench-noop, path: bench/noop}
workflow:
  - step: start
    next: [end]
  - step: end
"""
POLL = "0.05"


def ceiling_worker(url: str) -> None:
    """One bare worker: lease the oldest available job and mark it done, until none is left.
    It says "ready" once connected and then reads T0 from its standard input."""
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as conn:
        print("ready", flush=True)
        start = datetime.fromtimestamp(float(sys.stdin.readline()), UTC)
        idle_since = None
        while True:
            with conn.transaction():
                row = conn.execute(
                    "SELECT id FROM bench_ceiling WHERE status = 'queued' AND available_at <= "
                    "clock_timestamp() ORDER BY available_at, id LIMIT 1 "
                    "FOR UPDATE SKIP LOCKED").fetchone()
                if row is not None:
                    conn.execute("UPDATE bench_ceiling SET status = 'done', "
                                 "finished_at = clock_timestamp() WHERE id = %s", (row[0],))
            if row is not None:
                idle_since = None
                continue
            now = datetime.now(UTC)
            if now > start:  # nothing available after T0: done once it stays so a moment
                idle_since = idle_since or now
                if (now - idle_since).total_seconds() > 0.2:
                    return
            time.sleep(0.01)


def _psql(url: str) -> Any:
    import psycopg

    return psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True)


def run_ceiling(url: str, jobs: int, workers: int) -> float:
    with _psql(url) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_ceiling")
        conn.execute("CREATE TABLE bench_ceiling (LIKE workflow_jobs INCLUDING ALL)")
        conn.execute("ALTER TABLE bench_ceiling DROP CONSTRAINT IF EXISTS "
                     "bench_ceiling_run_id_step_key")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO bench_ceiling (run_id, step, payload, status, attempts, "
                "max_attempts, available_at, created_at) VALUES (gen_random_uuid(), %s, "
                "'{}', 'queued', 0, 3, now() + interval '1 hour', now())",
                [(f"s{i}",) for i in range(jobs)])
    procs = [subprocess.Popen([PY, __file__, "--ceiling-worker", url], cwd=ROOT, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(workers)]
    for proc in procs:  # every worker connected before T0, as ours are
        assert proc.stdout and proc.stdout.readline().strip() == "ready"
    t0 = time.time() + 1.0
    start = datetime.fromtimestamp(t0, UTC)
    with _psql(url) as conn:
        conn.execute("UPDATE bench_ceiling SET available_at = %s", (start,))
    for proc in procs:
        assert proc.stdin
        proc.stdin.write(f"{t0!r}\n")
        proc.stdin.close()
    for proc in procs:
        proc.wait()
    with _psql(url) as conn:
        done, last = conn.execute("SELECT count(*), max(finished_at) FROM bench_ceiling "
                                  "WHERE status = 'done'").fetchone()
    assert done == jobs, f"ceiling: {done} of {jobs} done"
    return jobs / (last - start).total_seconds()


def enqueue_runs(app: Any, runs: int, t0: float) -> None:
    """``runs`` runs of the no-op workflow whose first jobs all become available at ``t0``."""
    from app.workflows import queue, settings
    from app.workflows.compile import compile_document
    from app.workflows.document import parse

    with app.app_context():
        compiled = compile_document(parse(WORKFLOW))
        attempts = settings.get_int("WORKFLOWS_MAX_ATTEMPTS")
        for _ in range(runs):
            queue.create_run(kind="workflow", workflow=compiled["name"], path=compiled["path"],
                             inputs={}, compiled=compiled, user_id=None,
                             first=[queue.JobSpec(compiled["entry"], {"kind": "noop"},
                                                  delay=max(t0 - time.time(), 0))],
                             max_attempts=attempts)


def start_workers(env: dict[str, str], count: int) -> list[subprocess.Popen[str]]:
    procs = [subprocess.Popen([PY, str(ROOT / "bin" / "worker")], env=env, cwd=ROOT,
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
             for _ in range(count)]
    for proc in procs:  # wait until each one says it is ready (it polls from then on)
        assert proc.stderr
        while "ready" not in (line := proc.stderr.readline()):
            if not line:
                raise RuntimeError("bin/worker ended before it was ready")
        # Keep reading its log so a full pipe never blocks it.
        import threading

        threading.Thread(target=lambda p=proc: [None for _ in p.stderr], daemon=True).start()
    return procs


def _jobs_done(app: Any) -> tuple[int, datetime | None, int]:
    from sqlalchemy import func, select

    from app.extensions import db
    from app.models.workflows import WorkflowJob

    with app.app_context():
        done, last = db.session.execute(select(func.count(), func.max(WorkflowJob.finished_at))
                                        .where(WorkflowJob.status == "done")).one()
        total = db.session.execute(select(func.count()).select_from(WorkflowJob)).scalar_one()
        db.session.remove()
    return done, last, total


def run_ours(app: Any, env: dict[str, str], runs: int, workers: int) -> float:
    from app.extensions import db

    with app.app_context():
        with db.engine.begin() as conn:
            for table in ("workflow_events", "workflow_effects", "workflow_jobs",
                          "workflow_runs"):
                conn.exec_driver_sql(f"DELETE FROM {table}")
    procs = start_workers(env, workers)
    try:
        # Enqueue everything for later, then make it available at T0 in one statement: on a
        # busy machine enqueueing 400 runs can take longer than any fixed lead, and the
        # throughput would then measure the enqueuer.
        enqueue_runs(app, runs, time.time() + 3600)
        t0 = time.time() + 1.0
        with app.app_context():
            with db.engine.begin() as conn:
                conn.exec_driver_sql("UPDATE workflow_jobs SET available_at = %(t0)s",
                                     {"t0": datetime.fromtimestamp(t0, UTC)})
        deadline = time.monotonic() + 600
        while True:
            done, last, total = _jobs_done(app)
            if done == 2 * runs:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {done} of {2 * runs} jobs done ({total} enqueued)")
            time.sleep(0.2)
    finally:
        harness.stop(procs, 20)
    assert last is not None
    return 2 * runs / (last - datetime.fromtimestamp(t0, UTC)).total_seconds()


def latency(app: Any, env: dict[str, str], count: int) -> harness.Sample:
    """One worker polling every POLL s: run after run, enqueue -> run succeeded."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models.workflows import WorkflowRun

    newest = (select(WorkflowRun.created_at, WorkflowRun.finished_at)
              .order_by(WorkflowRun.created_at.desc()).limit(1))
    procs = start_workers(env, 1)
    sample = harness.Sample()
    try:
        for _ in range(count):
            enqueue_runs(app, 1, time.time())
            while True:
                with app.app_context():
                    row = db.session.execute(newest).one()
                    db.session.remove()
                if row.finished_at is not None:
                    sample.latencies.append((row.finished_at - row.created_at).total_seconds())
                    break
                time.sleep(0.005)
    finally:
        harness.stop(procs, 20)
    return sample


def main() -> None:
    parser = harness.arguments(__doc__, postgres=False)
    parser.add_argument("--workers", default=None, help="comma list (default 1,2,4)")
    parser.add_argument("--ceiling-worker", metavar="URL")
    args = parser.parse_args()
    if args.ceiling_worker:
        ceiling_worker(args.ceiling_worker)
        return
    counts = [int(n) for n in (args.workers or harness.size("1,2,4", "1,2,4", "1")).split(",")]
    runs = harness.size(1500, 400, 10)
    with harness.pg_database("bench_queue") as url:
        inst = harness.make_instance(url)
        env = dict(inst.env, WORKFLOWS_POLL_SECONDS=POLL, HARMONIC_WORKER_LOG="WARNING")
        os.environ.update(WORKFLOWS_POLL_SECONDS=POLL)
        app = harness.app_for(inst)
        rows = []
        ratios = []
        for workers in counts:
            ours = run_ours(app, env, runs, workers)
            ceiling = run_ceiling(url, 2 * runs, workers)
            ratios.append(ours / ceiling)
            rows.append([str(workers), f"{ours:,.0f}", f"{ceiling:,.0f}", f"{ours / ceiling:.2f}"])
        harness.print_table(
            f"Jobs per second on PostgreSQL, {2 * runs} jobs ({runs} runs of start -> end)",
            ["workers", "ours (bin/worker, full runs)", "ceiling (bare SKIP LOCKED loop)",
             "ours / ceiling"], rows,
            [f"Goal ≥ 0.7 of the ceiling: {harness.goal(min(ratios) >= 0.7)}"])
        sample = latency(app, env, harness.size(50, 20, 2))
        harness.print_table(
            f"Enqueue → run succeeded (two jobs), one idle worker polling every {POLL} s",
            ["series", "runs", "p50 ms", "p99 ms"],
            [["ours", str(len(sample.latencies)), f"{sample.p50:.1f}", f"{sample.p99:.1f}"]])
    harness.print_footer()


if __name__ == "__main__":
    main()

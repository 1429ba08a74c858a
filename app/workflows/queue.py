"""The durable queue: runs, jobs with leases, and the numbered event log.

Life of a job: ``queued`` → (lease) ``leased`` → ``done``; on an error it goes back to
``queued`` with a backoff until ``max_attempts``, then ``dead``; an expired lease is reclaimed
by whichever worker looks next. Leasing uses ``FOR UPDATE SKIP LOCKED`` on PostgreSQL and a
``BEGIN IMMEDIATE`` transaction plus a conditional UPDATE checked by rowcount on SQLite.
Completing a job, recording its events and enqueuing what follows happen in one transaction,
and only while the caller still holds the lease, so a step whose completion is recorded never
runs again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from app.models.base import utcnow
from app.models.workflows import WorkflowEffect, WorkflowEvent, WorkflowJob, WorkflowRun
from app.workflows.engine import is_postgres, reading, transaction

RUNS = WorkflowRun.__table__
JOBS = WorkflowJob.__table__
EVENTS = WorkflowEvent.__table__
EFFECTS = WorkflowEffect.__table__

# Listeners told "run <id> has new events" after each commit (the MCP resource uses this).
_listeners: list[Any] = []


@dataclass
class JobSpec:
    """A job to enqueue: its unique step name within the run, and what it needs to run."""

    step: str
    payload: dict[str, Any] = field(default_factory=dict)
    max_attempts: int | None = None
    delay: float = 0.0


@dataclass
class Leased:
    id: int
    run_id: uuid.UUID
    step: str
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    worker_id: str
    reclaimed_from: str | None = None


@dataclass
class Event:
    type: str
    step: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


def on_events(listener: Any) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def _notify(run_ids: set[uuid.UUID]) -> None:
    for run_id in run_ids:
        for listener in list(_listeners):
            try:
                listener(run_id)
            except Exception:  # an observer must never fail the queue
                import logging

                logging.getLogger("harmonic.workflows").exception("event listener failed")


# Events ----------------------------------------------------------------------------------------

def emit(conn: Connection, run_id: uuid.UUID, events: list[Event]) -> None:
    """Append events with the run's next sequence numbers (the run row is locked meanwhile)."""
    if not events:
        return
    newest = select(func.coalesce(func.max(EVENTS.c.seq), 0)) \
        .where(EVENTS.c.run_id == run_id).scalar_subquery()
    if is_postgres():  # lock the run row and read its newest seq in one round trip
        last = conn.execute(select(newest).select_from(RUNS).where(RUNS.c.id == run_id)
                            .with_for_update(of=RUNS)).scalar_one()
    else:  # BEGIN IMMEDIATE already serializes writers
        last = conn.execute(select(newest)).scalar_one()
    now = utcnow()
    conn.execute(EVENTS.insert(), [
        {"run_id": run_id, "seq": last + i + 1, "type": e.type, "step": e.step,
         "data": e.data, "time": now} for i, e in enumerate(events)])


def events_after(run_id: uuid.UUID, after: int = 0) -> list[dict[str, Any]]:
    with reading() as conn:
        rows = conn.execute(select(EVENTS).where(EVENTS.c.run_id == run_id,
                                                 EVENTS.c.seq > after)
                            .order_by(EVENTS.c.seq)).mappings().all()
    return [dict(r) for r in rows]


# Runs ------------------------------------------------------------------------------------------

def create_run(*, kind: str, workflow: str, path: str, inputs: dict[str, Any],
               compiled: dict[str, Any], user_id: uuid.UUID | None, first: list[JobSpec],
               max_attempts: int, started: dict[str, Any] | None = None) -> uuid.UUID:
    """Insert a run, its execution_started event and its first jobs, atomically."""
    for _ in range(5):
        run_id = uuid.uuid4()
        try:
            with transaction() as conn:
                conn.execute(RUNS.insert().values(
                    id=run_id, short_id=run_id.hex[:8], kind=kind, workflow=workflow, path=path,
                    status="queued", inputs=inputs, compiled=compiled, user_id=user_id,
                    created_at=utcnow()))
                emit(conn, run_id, [Event("execution_started", None,
                                          {"workflow": workflow, "inputs": inputs,
                                           **(started or {})})])
                enqueue(conn, run_id, first, max_attempts)
        except IntegrityError:
            continue  # a short id collision: pick another id
        _notify({run_id})
        return run_id
    raise RuntimeError("could not allocate a run id")


def enqueue(conn: Connection, run_id: uuid.UUID, jobs: list[JobSpec], max_attempts: int) -> None:
    """Insert jobs; a step already enqueued for this run (a join) is left as it is."""
    now = utcnow()
    for job in jobs:
        values = {"run_id": run_id, "step": job.step, "payload": job.payload,
                  "status": "queued", "attempts": 0,
                  "max_attempts": job.max_attempts or max_attempts,
                  "available_at": now + timedelta(seconds=job.delay), "created_at": now}
        dialect = postgresql if is_postgres() else sqlite
        conn.execute(dialect.insert(JOBS).values(**values)
                     .on_conflict_do_nothing(index_elements=["run_id", "step"]))


def get_run(run_id: uuid.UUID) -> dict[str, Any] | None:
    with reading() as conn:
        row = conn.execute(select(RUNS).where(RUNS.c.id == run_id)).mappings().one_or_none()
    return dict(row) if row else None


def load_run(run_id: uuid.UUID) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """A run and the results of its done jobs, in order, from one snapshot."""
    with reading() as conn:
        run = conn.execute(select(RUNS).where(RUNS.c.id == run_id)).mappings().one_or_none()
        rows = conn.execute(select(JOBS.c.step, JOBS.c.payload, JOBS.c.result)
                            .where(JOBS.c.run_id == run_id, JOBS.c.status == "done")
                            .order_by(JOBS.c.id)).mappings().all()
    return (dict(run) if run else None), [dict(r) for r in rows]


# Leases ----------------------------------------------------------------------------------------

def lease(worker_id: str, lease_seconds: float) -> Leased | None:
    """Take the oldest runnable job (or one whose lease expired) for ``worker_id``."""
    now = utcnow()
    runnable = or_(and_(JOBS.c.status == "queued", JOBS.c.available_at <= now),
                   and_(JOBS.c.status == "leased", JOBS.c.lease_until < now))
    with transaction() as conn:
        query = select(JOBS.c.id, JOBS.c.status, JOBS.c.worker_id).where(runnable) \
            .order_by(JOBS.c.available_at, JOBS.c.id).limit(1)
        if is_postgres():
            query = query.with_for_update(skip_locked=True)
        row = conn.execute(query).mappings().one_or_none()
        if row is None:
            return None
        taken = conn.execute(
            update(JOBS).where(JOBS.c.id == row["id"], runnable)
            .values(status="leased", worker_id=worker_id, attempts=JOBS.c.attempts + 1,
                    lease_until=now + timedelta(seconds=lease_seconds), heartbeat_at=now)
            .returning(JOBS.c.run_id, JOBS.c.step, JOBS.c.payload, JOBS.c.attempts,
                       JOBS.c.max_attempts)).mappings().one_or_none()
        if taken is None:  # someone else got it between our read and write
            return None
        reclaimed = row["worker_id"] if row["status"] == "leased" else None
        job = Leased(id=row["id"], run_id=taken["run_id"], step=taken["step"],
                     payload=taken["payload"] or {}, attempts=taken["attempts"],
                     max_attempts=taken["max_attempts"], worker_id=worker_id,
                     reclaimed_from=reclaimed)
        conn.execute(update(RUNS).where(RUNS.c.id == job.run_id, RUNS.c.status == "queued")
                     .values(status="running", started_at=now))
        events = []
        if reclaimed:
            events.append(Event("lease_reclaimed", job.step,
                                {"from_worker": reclaimed, "attempt": job.attempts}))
        events.append(Event("step_started", job.step,
                            {"worker": worker_id, "attempt": job.attempts, "job": job.id}))
        # The worker starts the action right away; recording it here saves a transaction.
        action = (job.payload.get("tool") or job.payload.get("function")
                  or job.payload.get("kind") or "step")
        events.append(Event("action_started", job.step,
                            {"action": action, "attempt": job.attempts}))
        emit(conn, job.run_id, events)
    _notify({job.run_id})
    return job


def heartbeat(job: Leased, lease_seconds: float) -> bool:
    """Extend the lease; False means it is no longer ours (expired and reclaimed)."""
    now = utcnow()
    with transaction() as conn:
        count = conn.execute(update(JOBS).where(JOBS.c.id == job.id,
                                                JOBS.c.status == "leased",
                                                JOBS.c.worker_id == job.worker_id)
                             .values(lease_until=now + timedelta(seconds=lease_seconds),
                                     heartbeat_at=now)).rowcount
    return count == 1


def record(job: Leased, events: list[Event]) -> None:
    """Events about a job in progress (action_started), written while we hold the lease."""
    with transaction() as conn:
        emit(conn, job.run_id, events)
    _notify({job.run_id})


def _still_ours(conn: Connection, job: Leased, values: dict[str, Any]) -> bool:
    return conn.execute(update(JOBS).where(JOBS.c.id == job.id, JOBS.c.status == "leased",
                                           JOBS.c.worker_id == job.worker_id)
                        .values(**values)).rowcount == 1


def _finish_run_if_idle(conn: Connection, run_id: uuid.UUID, result_step: str | None) -> None:
    open_jobs = conn.execute(select(func.count()).select_from(JOBS).where(
        JOBS.c.run_id == run_id, JOBS.c.status.in_(("queued", "leased")))).scalar_one()
    if open_jobs:
        return
    status = conn.execute(select(RUNS.c.status).where(RUNS.c.id == run_id)).scalar_one()
    if status in ("succeeded", "failed"):
        return
    result = None
    rows = conn.execute(select(JOBS.c.step, JOBS.c.payload, JOBS.c.result)
                        .where(JOBS.c.run_id == run_id, JOBS.c.status == "done")
                        .order_by(JOBS.c.id)).mappings().all()
    for row in rows:
        base = (row["payload"] or {}).get("base") or row["step"]
        if base == result_step or (result_step is None and row["result"] is not None):
            result = row["result"]  # the final turn's answer, else the last step's result
    now = utcnow()
    conn.execute(update(RUNS).where(RUNS.c.id == run_id)
                 .values(status="succeeded", result=result, finished_at=now))
    emit(conn, run_id, [Event("execution_completed", None, {"result": result})])


def complete(job: Leased, result: Any, events: list[Event], spawn: list[JobSpec],
             max_attempts: int, result_step: str | None) -> bool:
    """Mark done, record events, enqueue what follows, maybe finish the run: one transaction.

    False when the lease was lost (another worker reclaimed the job): nothing is recorded.
    """
    now = utcnow()
    with transaction() as conn:
        if not _still_ours(conn, job, {"status": "done", "result": result, "error": None,
                                       "lease_until": None, "finished_at": now}):
            return False
        emit(conn, job.run_id, events)
        run_status = conn.execute(select(RUNS.c.status).where(RUNS.c.id == job.run_id)
                                  ).scalar_one()
        if run_status != "failed":
            enqueue(conn, job.run_id, spawn, max_attempts)
            _finish_run_if_idle(conn, job.run_id, result_step)
    _notify({job.run_id})
    return True


def fail(job: Leased, error: str, events: list[Event], permanent: bool,
         retry_seconds: float) -> str:
    """Record a failed attempt: back to queued with backoff, or dead (and the run failed).

    Returns the job's new status ('queued' or 'dead'), or 'lost' if the lease was not ours.
    """
    now = utcnow()
    dead = permanent or job.attempts >= job.max_attempts
    delay = retry_seconds * (2 ** max(job.attempts - 1, 0))
    values: dict[str, Any] = {"error": error, "lease_until": None, "worker_id": None}
    if dead:
        values.update(status="dead", finished_at=now)
    else:
        values.update(status="queued", available_at=now + timedelta(seconds=delay))
    with transaction() as conn:
        if not _still_ours(conn, job, values):
            return "lost"
        for item in events:
            item.data.update({"attempt": job.attempts, "error": error,
                              **({} if dead else {"retry_in": delay})})
        emit(conn, job.run_id, events)
        if dead:
            fail_run(conn, job.run_id, f"step {job.step}: {error}")
    _notify({job.run_id})
    return "dead" if dead else "queued"


def fail_run(conn: Connection, run_id: uuid.UUID, error: str) -> None:
    count = conn.execute(update(RUNS).where(RUNS.c.id == run_id,
                                            RUNS.c.status.in_(("queued", "running")))
                         .values(status="failed", error=error, finished_at=utcnow())).rowcount
    if count:
        # Whatever else was waiting in this run will not run now.
        conn.execute(update(JOBS).where(JOBS.c.run_id == run_id, JOBS.c.status == "queued")
                     .values(status="failed", error="the run failed"))
        emit(conn, run_id, [Event("execution_failed", None, {"error": error})])


def release(job: Leased) -> bool:
    """Give a job back untouched (SIGTERM before it started): the attempt does not count."""
    with transaction() as conn:
        ok = _still_ours(conn, job, {"status": "queued", "worker_id": None,
                                     "lease_until": None, "attempts": JOBS.c.attempts - 1})
        if ok:
            emit(conn, job.run_id, [Event("step_released", job.step,
                                          {"worker": job.worker_id})])
    if ok:
        _notify({job.run_id})
    return ok


def discard(job: Leased, reason: str) -> None:
    """A job of a run that already failed: close it without running it."""
    with transaction() as conn:
        _still_ours(conn, job, {"status": "failed", "error": reason, "lease_until": None,
                                "finished_at": utcnow()})


def counts(run_id: uuid.UUID | None = None) -> dict[str, int]:
    query = select(JOBS.c.status, func.count()).group_by(JOBS.c.status)
    if run_id is not None:
        query = query.where(JOBS.c.run_id == run_id)
    with reading() as conn:
        return {status: n for status, n in conn.execute(query).all()}


def as_of(value: datetime | None) -> str:
    return value.isoformat() if value else ""

"""The durable queue: runs, jobs with leases, and the numbered event log.

Life of a job: ``queued`` → (lease) ``leased`` → ``done``; on an error it goes back to
``queued`` with a backoff until ``max_attempts``, then ``dead``; an expired lease is reclaimed
by whichever worker looks next. A job may also be enqueued ``waiting`` (``JobSpec.wait``): a
join, queued once no open job of the steps it waits for is left (checked as a completion that
asks for it is recorded), or the step of a sub-run, queued when that run ends (its run row
names the job: ``parent_run_id``, ``parent_step``). Leasing uses ``FOR UPDATE SKIP LOCKED``
on PostgreSQL and a ``BEGIN IMMEDIATE`` transaction plus a conditional UPDATE checked by
rowcount on SQLite.
Completing a job, recording its events and enqueuing what follows happen in one transaction,
and only while the caller still holds the lease, so a step whose completion is recorded never
runs again. Every transaction that appends events to a run also records the change of the
run's events resource (``events_uri``) in the change-event outbox (``app.core.changes``); its
subscribers hear of it after the commit.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Connection, Table, and_, bindparam, case, func, or_, select, update
from sqlalchemy.exc import IntegrityError

from app.core import changes
from app.core.identity import Identity
from app.models.base import utcnow
from app.models.workflows import WorkflowRun
from app.workflows import bulk, wakeup
from app.workflows.bulk import EVENTS, JOBS
from app.workflows.engine import is_postgres, reading, transaction

# Declarative models' __table__ is typed as any FromClause; these are plain Tables.
RUNS = cast(Table, WorkflowRun.__table__)

@dataclass
class JobSpec:
    """A job to enqueue: its unique step name within the run, and what it needs to run."""

    step: str
    payload: dict[str, Any] = field(default_factory=dict)
    max_attempts: int | None = None
    delay: float = 0.0
    # Enqueue it ``waiting`` for this (stored as payload["wait"]): {"upstream": [steps]} (a
    # join: until no open job of those steps is left) or {"run": id} (a sub-run's end).
    wait: dict[str, Any] | None = None


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
    # The run and the results of its done jobs, read in the lease's own transaction (the
    # runner needs them next; None for a job leased some other way).
    run: dict[str, Any] | None = None
    done: list[dict[str, Any]] | None = None
    finished: bool = False  # completed inside the lease's transaction (see ``lease``)


@dataclass
class Event:
    type: str
    step: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Completion:
    """How a job ended well: its result, the events to record, the jobs that follow it."""

    result: Any
    events: list[Event]
    spawn: list[JobSpec]
    max_attempts: int  # for spawned jobs that do not say
    result_step: str | None  # whose result is the run's, should this finish it
    record: dict[str, Any] | None = None  # added to the job's payload as it is marked done
    release: bool = False  # look for waiting joins of the run that may be queued now


OPEN = ("queued", "leased", "waiting")  # a run with a job in one of these has not finished


def events_uri(run_id: uuid.UUID) -> str:
    """The resource whose subscribers hear of a run's new events."""
    return f"harmonic://runs/{run_id.hex[:8]}/events"


# Events ----------------------------------------------------------------------------------------

def emit(conn: Connection, run_id: uuid.UUID, events: list[Event]) -> None:
    """Append events with the run's next sequence numbers (the run row is locked meanwhile)."""
    if events:
        _append(conn, run_id, _lock_run(conn, run_id)[1], events)


def _newest_seq(run_id: uuid.UUID | Any) -> Any:
    """The newest event seq of the run ``run_id`` (0 before its first event); given a column
    (``RUNS.c.id``), of the run row in the statement (correlated)."""
    return select(func.coalesce(func.max(EVENTS.c.seq), 0)) \
        .where(EVENTS.c.run_id == run_id).scalar_subquery()


def _lock_run(conn: Connection, run_id: uuid.UUID) -> tuple[str, int]:
    """Lock the run row; its status and newest event seq.

    On PostgreSQL the seq is read by a statement of its own once the lock is held: a statement
    that waited for the lock still reads the other tables as they were when it began, so the
    events another transaction of the run committed meanwhile would be missed and their seqs
    taken again. (On SQLite, BEGIN IMMEDIATE already serializes writers: one statement.)"""
    if not is_postgres():
        status, last = conn.execute(select(RUNS.c.status, _newest_seq(run_id))
                                    .where(RUNS.c.id == run_id)).one()
        return status, last
    status = conn.execute(select(RUNS.c.status).where(RUNS.c.id == run_id)
                          .with_for_update(of=RUNS)).scalar_one()
    return status, conn.execute(select(_newest_seq(run_id))).scalar_one()


def _append(conn: Connection, run_id: uuid.UUID, last: int, events: list[Event]) -> None:
    """Insert events numbered after ``last`` (the caller holds the run row's lock)."""
    if not events:
        return
    now = utcnow()
    changes.record(events_uri(run_id), conn=conn)
    bulk.insert_events(conn, [
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
               max_attempts: int, started: dict[str, Any] | None = None,
               by: Identity | None = None, run_id: uuid.UUID | None = None,
               parent: tuple[uuid.UUID, str] | None = None) -> uuid.UUID:
    """Insert a run, its execution_started event and its first jobs, atomically. ``by``: the
    identity that started it, whose kind, token and grant its steps act with (and whose
    revocation, for a grant or an agent, cancels it). ``run_id``: the id to give it, the same
    on every attempt of the step that starts it (a run with that id already there is that
    run: its id is returned). ``parent``: the run and the waiting job this one releases when
    it ends."""
    for _ in range(5):
        chosen = run_id or uuid.uuid4()
        try:
            with transaction() as conn:
                if run_id is not None and conn.execute(
                        select(RUNS.c.id).where(RUNS.c.id == run_id)).first() is not None:
                    return run_id
                conn.execute(RUNS.insert().values(
                    id=chosen, short_id=chosen.hex[:8], kind=kind, workflow=workflow, path=path,
                    status="queued", inputs=inputs, compiled=compiled, user_id=user_id,
                    caller_kind=by.kind if by is not None else "person",
                    made_by_token_id=by.token_id if by is not None else None,
                    made_by_grant_id=by.grant_id if by is not None else None,
                    representation_id=by.session_to_carry() if by is not None else None,
                    parent_run_id=parent[0] if parent else None,
                    parent_step=parent[1] if parent else None,
                    created_at=utcnow()))
                emit(conn, chosen, [Event("execution_started", None,
                                          {"workflow": workflow, "inputs": inputs,
                                           **(started or {})})])
                enqueue(conn, chosen, first, max_attempts)
                wakeup.notify(conn)
        except IntegrityError:
            continue  # a short id collision: pick another id (or find the one asked for)
        return chosen
    raise RuntimeError("could not allocate a run id")


def enqueue(conn: Connection, run_id: uuid.UUID, jobs: list[JobSpec], max_attempts: int) -> int:
    """Insert jobs in one statement; a step already enqueued for this run (a join) is left as
    it is. Returns how many were new."""
    if not jobs:
        return 0
    return len(_enqueue_many(conn, [(run_id, job, max_attempts) for job in jobs]))


def get_run(run_id: uuid.UUID) -> dict[str, Any] | None:
    with reading() as conn:
        row = conn.execute(select(RUNS).where(RUNS.c.id == run_id)).mappings().one_or_none()
    return dict(row) if row else None


def load_run(run_id: uuid.UUID) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """A run and the results of its done jobs, in order, from one snapshot."""
    with reading() as conn:
        run = conn.execute(select(RUNS).where(RUNS.c.id == run_id)).mappings().one_or_none()
        done = _done_jobs(conn, run_id)
    return (dict(run) if run else None), done


def _done_jobs(conn: Connection, run_id: uuid.UUID) -> list[dict[str, Any]]:
    rows = conn.execute(select(JOBS.c.id, JOBS.c.step, JOBS.c.payload, JOBS.c.result,
                               JOBS.c.finished_at)
                        .where(JOBS.c.run_id == run_id, JOBS.c.status == "done")
                        .order_by(JOBS.c.id)).mappings().all()
    return [dict(r) for r in rows]


# Leases ----------------------------------------------------------------------------------------

def lease_batch(worker_id: str, lease_seconds: float, size: int,
                inline: Callable[[Leased], Completion | None] | None = None) -> list[Leased]:
    """Take up to ``size`` of the oldest runnable jobs (or ones whose lease expired), oldest
    first, for ``worker_id``.

    One transaction for the whole batch: take the jobs, mark their runs running (which locks
    the run rows and reads their newest event seqs), read the runs' done jobs' results, and
    record step_started. ``inline(job)`` may then complete a job in that same transaction
    (``job.finished``): it must only compute, never touch the database or the world, since the
    transaction may still roll back (a worker that dies meanwhile leaves the jobs queued, as if
    never leased). The completions are written together: one UPDATE marks them done (one per
    distinct result), one INSERT enqueues what follows, one UPDATE finishes the runs left idle
    (known from the runs' jobs read with their done results, no second query), one INSERT
    appends every event (``bulk``: one statement whatever the number of rows); the statements
    per job therefore shrink as the batch grows. The jobs that are not finished are the
    caller's to run, in order, keeping their leases alive (``runner.Heartbeat``) until each is
    completed.
    """
    now = utcnow()
    with transaction() as conn:
        taken_rows = _take(conn, worker_id, now, lease_seconds, max(size, 1))
        if not taken_rows:
            return []
        batch = _Batch(conn)
        jobs = []
        for taken, run in taken_rows:
            reclaimed = taken["was_worker"] if taken["was_status"] == "leased" else None
            job = Leased(id=taken["id"], run_id=taken["run_id"], step=taken["step"],
                         payload=taken["payload"] or {}, attempts=taken["attempts"],
                         max_attempts=taken["max_attempts"], worker_id=worker_id,
                         reclaimed_from=reclaimed)
            jobs.append(job)
            if run is not None:  # (else the job outlived its run: nothing to record it against)
                batch.add(job, run)
        batch.read_done()
        for job in batch.jobs:
            outcome = inline(job) if inline else None
            if outcome is not None:
                batch.finish(job, outcome)
                job.finished = True
        batch.write(now)
    return jobs


class _Batch:
    """The runs of a leased batch and what its transaction writes, statement by statement."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.jobs: list[Leased] = []
        self.runs: dict[uuid.UUID, dict[str, Any]] = {}
        self.last_seq: dict[uuid.UUID, int] = {}
        self.events: dict[uuid.UUID, list[Event]] = {}
        self.done: list[tuple[Leased, Completion]] = []
        # Per run: its done jobs (id, step, payload, result) and the ids of its open jobs, as
        # read after the runs were locked. Until this transaction ends no one else can finish
        # a job of these runs (that takes the run's lock), so they only change here.
        self.done_rows: dict[uuid.UUID, list[dict[str, Any]]] = {}
        self.open_ids: dict[uuid.UUID, set[int]] = {}

    def add(self, job: Leased, run: dict[str, Any]) -> None:
        self.jobs.append(job)
        if job.run_id not in self.runs:  # two jobs of one run: one row, one seq counter
            self.runs[job.run_id] = {k: v for k, v in run.items() if k != "newest_seq"}
            self.last_seq[job.run_id] = run["newest_seq"]
        job.run = self.runs[job.run_id]
        events = self.events.setdefault(job.run_id, [])
        if job.reclaimed_from:
            events.append(Event("lease_reclaimed", job.step,
                                {"from_worker": job.reclaimed_from, "attempt": job.attempts}))
        events.append(Event("step_started", job.step,
                            {"worker": job.worker_id, "attempt": job.attempts, "job": job.id}))
        # The worker starts the action right away; recording it here saves a transaction.
        action = (job.payload.get("tool") or job.payload.get("function")
                  or job.payload.get("kind") or "step")
        events.append(Event("action_started", job.step,
                            {"action": action, "attempt": job.attempts}))

    def read_done(self) -> None:
        """Every run's jobs, in one query: the done ones (each leased job gets its own list)
        and which are still open. On PostgreSQL, the runs' newest event seqs again, now that
        their rows are locked (see ``_lock_run``)."""
        self.done_rows, self.open_ids = _jobs_of(self.conn, list(self.runs))
        if is_postgres():
            self.last_seq.update(_newest_seqs(self.conn, list(self.runs)))
        for job in self.jobs:
            job.done = list(self.done_rows.get(job.run_id, []))

    def idle_runs(self, candidates: Iterable[uuid.UUID]) -> list[uuid.UUID]:
        """Those of ``candidates`` with no open job once this batch's completions are done."""
        finished = {job.id for job, _ in self.done}
        return [r for r in candidates if not self.open_ids.get(r, set()) - finished]

    def done_after(self, run_id: uuid.UUID) -> list[dict[str, Any]]:
        """The run's done jobs once this batch's completions are done, in job order."""
        mine = [{"id": job.id, "step": job.step, "payload": job.payload,
                 "result": outcome.result} for job, outcome in self.done if job.run_id == run_id]
        return sorted(self.done_rows.get(run_id, []) + mine, key=lambda row: row["id"])

    def finish(self, job: Leased, outcome: Completion) -> None:
        self.done.append((job, outcome))
        self.events[job.run_id].extend(outcome.events)

    def write(self, now: datetime) -> None:
        conn = self.conn
        if self.done:
            for result, ids in _by_value((job.id, outcome.result) for job, outcome in self.done):
                conn.execute(_mark_done_many(is_postgres()),
                             {"b_ids": ids, "b_result": result, "b_now": now})
            # (The runs are running: inline completes nothing of a failed or finished run.)
            spawned = [(job.run_id, spec, outcome.max_attempts)
                       for job, outcome in self.done for spec in outcome.spawn]
            grown = set(_enqueue_many(conn, spawned))
            result_steps = {job.run_id: outcome.result_step for job, outcome in self.done}
            idle = self.idle_runs(r for r in result_steps if r not in grown)
            done = {r: self.done_after(r) for r in idle}
            for run_id, event in _finish_runs(conn, done, result_steps).items():
                self.events[run_id].append(event)
                run = self.runs[run_id]
                if run.get("parent_run_id") is not None:
                    _queue_waiting(conn, run["parent_run_id"], run["parent_step"])
        rows: list[dict[str, Any]] = []
        for run_id, events in self.events.items():
            if events:
                changes.record(events_uri(run_id), conn=conn)
            last = self.last_seq[run_id]
            rows.extend({"run_id": run_id, "seq": last + i + 1, "type": e.type, "step": e.step,
                         "data": e.data, "time": now} for i, e in enumerate(events))
        bulk.insert_events(conn, rows)


def _by_value(pairs: Iterable[tuple[Any, Any]]) -> list[tuple[Any, list[Any]]]:
    """``(key, value)`` pairs grouped by equal value: ``[(value, [keys...]), ...]``, so that
    rows that get the same value are written by one statement (a batch of no-op steps all
    have the result None) instead of one execution each."""
    groups: dict[str, tuple[Any, list[Any]]] = {}
    for key, value in pairs:
        tag = json.dumps(value, sort_keys=True, default=str)
        groups.setdefault(tag, (value, []))[1].append(key)
    return list(groups.values())


@functools.cache
def _mark_done_many(postgres: bool) -> Any:
    """Mark leased jobs done with one result (parameters b_ids, b_result, b_now)."""
    now = bindparam("b_now", type_=JOBS.c.finished_at.type)
    return update(JOBS).where(bulk.one_of(JOBS.c.id, "b_ids")).values(
        status="done", result=bindparam("b_result", type_=JOBS.c.result.type), error=None,
        lease_until=None, finished_at=now)


def _enqueue_many(conn: Connection,
                  spawned: list[tuple[uuid.UUID, JobSpec, int]]) -> list[uuid.UUID]:
    """Insert the jobs of several runs in one statement (a step already there is left as it
    is: a join). Returns the run of each new job."""
    now = utcnow()
    return bulk.insert_jobs(conn, [
        {"run_id": run_id, "step": job.step,
         "payload": {**job.payload, "wait": job.wait} if job.wait else job.payload,
         "status": "waiting" if job.wait else "queued",
         "max_attempts": job.max_attempts or max_attempts,
         "available_at": now + timedelta(seconds=job.delay), "created_at": now}
        for run_id, job, max_attempts in spawned])


def _finish_runs(conn: Connection, done: dict[uuid.UUID, list[dict[str, Any]]],
                 result_steps: dict[uuid.UUID, str | None]) -> dict[uuid.UUID, Event]:
    """Mark idle runs (given with their done jobs, in order) succeeded with their results;
    the execution_completed event of each."""
    if not done:
        return {}
    now = utcnow()
    results = {r: _run_result(rows, result_steps.get(r)) for r, rows in done.items()}
    for result, ids in _by_value(results.items()):
        conn.execute(_finish_runs_statement(is_postgres()),
                     {"b_ids": ids, "b_result": result, "b_now": now})
    return {r: Event("execution_completed", None, {"result": results[r]}) for r in done}


@functools.cache
def _finish_runs_statement(postgres: bool) -> Any:
    """Mark runs succeeded with one result (parameters b_ids, b_result, b_now)."""
    return update(RUNS).where(bulk.one_of(RUNS.c.id, "b_ids")).values(
        status="succeeded", result=bindparam("b_result", type_=RUNS.c.result.type),
        finished_at=bindparam("b_now", type_=RUNS.c.finished_at.type))


def _run_result(done: list[dict[str, Any]], result_step: str | None) -> Any:
    """The final turn's answer, else the result of the step that ended last (of the jobs that
    end a step, when a run's jobs say which: ``payload.closes``)."""
    result = None
    if all(row.get("finished_at") is not None for row in done):
        done = sorted(done, key=lambda row: (row["finished_at"], row["id"]))
    if any((row["payload"] or {}).get("closes") for row in done):
        done = [row for row in done if (row["payload"] or {}).get("closes")]
    for row in done:
        base = (row["payload"] or {}).get("base") or base_step(row["step"])
        if base == result_step or (result_step is None and row["result"] is not None):
            result = row["result"]
    return result


def _jobs_of(conn: Connection, run_ids: list[uuid.UUID]
             ) -> tuple[dict[uuid.UUID, list[dict[str, Any]]], dict[uuid.UUID, set[int]]]:
    """The runs' done jobs (id, step, payload, result; in job order) and their open jobs'
    ids (queued or leased), in one query."""
    done: dict[uuid.UUID, list[dict[str, Any]]] = {}
    open_ids: dict[uuid.UUID, set[int]] = {}
    if not run_ids:
        return done, open_ids
    for row in conn.execute(_jobs_of_statement(is_postgres()), {"b_ids": run_ids}).all():
        run_id, job_id, status, step, payload, result = row
        if status == "done":
            done.setdefault(run_id, []).append(
                {"id": job_id, "step": step, "payload": payload, "result": result})
        elif status in OPEN:
            open_ids.setdefault(run_id, set()).add(job_id)
    return done, open_ids


@functools.cache
def _jobs_of_statement(postgres: bool) -> Any:
    """The jobs of the runs bound as b_ids, in job order."""
    return select(JOBS.c.run_id, JOBS.c.id, JOBS.c.status, JOBS.c.step, JOBS.c.payload,
                  JOBS.c.result).where(bulk.one_of(JOBS.c.run_id, "b_ids")).order_by(JOBS.c.id)


def _take(conn: Connection, worker_id: str, now: datetime, lease_seconds: float,
          size: int) -> list[tuple[Any, Any]]:
    """Lease up to ``size`` runnable jobs, oldest first, and mark their runs running (which
    locks the run rows).

    Returns, per job, its row with the status and worker it had before, and its run's row with
    the run's newest event seq (or None).
    """
    params = {"worker_id": worker_id, "now": now, "size": size,
              "lease_until": now + timedelta(seconds=lease_seconds)}
    if is_postgres():
        picked: list[tuple[Any, Any]] = []
        for row in conn.execute(_take_statement(), params).mappings().all():
            job = {k: v for k, v in row.items() if not k.startswith("run__")}
            run = {k[5:]: v for k, v in row.items() if k.startswith("run__")}
            picked.append((job, run if run["id"] is not None else None))
        return sorted(picked, key=lambda pair: (pair[0]["available_at"], pair[0]["id"]))
    # SQLite: BEGIN IMMEDIATE holds the write lock, so no one can take a job between our
    # SELECT and UPDATE; one job at a time, all in this transaction.
    oldest, take, start = _take_parts()
    out: list[tuple[Any, Any]] = []
    for _ in range(size):
        first = conn.execute(oldest, {**params, "size": 1}).mappings().one_or_none()
        if first is None:
            break
        taken: Any = conn.execute(take.where(JOBS.c.id == first["id"]).returning(*_TAKEN), params
                             ).mappings().one_or_none()
        if taken is None:
            break
        started = conn.execute(start.where(RUNS.c.id == taken["run_id"])
                               .returning(*RUNS.c,
                                          _newest_seq(taken["run_id"]).label("newest_seq")),
                               params).mappings().one_or_none()
        out.append(({**taken, "was_status": first["status"], "was_worker": first["worker_id"]},
                    dict(started) if started is not None else None))
    return out


@functools.cache
def _take_parts() -> tuple[Any, Any, Any]:
    """The lease's statements, built once (parameters: worker_id, now, lease_until, size): the
    oldest runnable jobs; taking a job (add its WHERE); starting its run (add its WHERE)."""
    now = bindparam("now", type_=JOBS.c.available_at.type)
    runnable = or_(and_(JOBS.c.status == "queued", JOBS.c.available_at <= now),
                   and_(JOBS.c.status == "leased", JOBS.c.lease_until < now))
    oldest = select(JOBS.c.id, JOBS.c.status, JOBS.c.worker_id).where(runnable) \
        .order_by(JOBS.c.available_at, JOBS.c.id).limit(bindparam("size"))
    take = update(JOBS).where(runnable).values(
        status="leased", worker_id=bindparam("worker_id"), attempts=JOBS.c.attempts + 1,
        lease_until=bindparam("lease_until", type_=JOBS.c.lease_until.type),
        heartbeat_at=now)
    queued = RUNS.c.status == "queued"
    start = update(RUNS).values(status=case((queued, "running"), else_=RUNS.c.status),
                                started_at=case((queued, now), else_=RUNS.c.started_at))
    return oldest, take, start


_TAKEN = (JOBS.c.id, JOBS.c.run_id, JOBS.c.step, JOBS.c.payload, JOBS.c.attempts,
          JOBS.c.max_attempts, JOBS.c.available_at)


def _newest_seqs(conn: Connection, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """The newest event seq of each of the runs (that has events), in one statement."""
    rows = conn.execute(select(EVENTS.c.run_id, func.max(EVENTS.c.seq))
                        .where(bulk.one_of(EVENTS.c.run_id, "b_ids"))
                        .group_by(EVENTS.c.run_id), {"b_ids": run_ids}).all()
    return {run_id: seq for run_id, seq in rows}


@functools.cache
def _take_statement() -> Any:
    """PostgreSQL: pick (skipping rows other workers hold), take and start in one statement.
    Two jobs of one run update the run row once and both read it."""
    oldest, take, start = _take_parts()
    picked = oldest.with_for_update(skip_locked=True).cte("picked")
    taken = take.where(JOBS.c.id == picked.c.id) \
        .returning(*_TAKEN, picked.c.status.label("was_status"),
                   picked.c.worker_id.label("was_worker")).cte("taken")
    started = start.where(RUNS.c.id.in_(select(taken.c.run_id))) \
        .returning(*(c.label(f"run__{c.name}") for c in RUNS.c),
                   _newest_seq(RUNS.c.id).label("run__newest_seq")).cte("started")
    return select(taken, started).select_from(
        taken.outerjoin(started, started.c.run__id == taken.c.run_id))


def heartbeat(job: Leased, lease_seconds: float) -> bool:
    """Extend the lease; False means it is no longer ours (expired and reclaimed)."""
    now = utcnow()
    with transaction() as conn:
        return _still_ours(conn, job, {"lease_until": now + timedelta(seconds=lease_seconds),
                                       "heartbeat_at": now})


def _still_ours(conn: Connection, job: Leased, values: dict[str, Any]) -> bool:
    return conn.execute(update(JOBS).where(JOBS.c.id == job.id, JOBS.c.status == "leased",
                                           JOBS.c.worker_id == job.worker_id)
                        .values(**values)).rowcount == 1


def _finish_run_if_idle(conn: Connection, run_id: uuid.UUID,
                        result_step: str | None) -> list[Event]:
    """Mark the run succeeded when no job of it is left open; the event to record if so.

    The caller holds the run row's lock and knows the run is neither succeeded nor failed.
    """
    open_jobs = conn.execute(select(func.count()).select_from(JOBS).where(
        JOBS.c.run_id == run_id, JOBS.c.status.in_(OPEN))).scalar_one()
    if open_jobs:
        return []
    result = _run_result(_done_jobs(conn, run_id), result_step)
    conn.execute(update(RUNS).where(RUNS.c.id == run_id)
                 .values(status="succeeded", result=result, finished_at=utcnow()))
    release_parent(conn, run_id)
    return [Event("execution_completed", None, {"result": result})]


def base_step(step: str) -> str:
    """The workflow step a job belongs to: its name up to a ``[`` (a loop's item) or a ``#``
    (a loop's end, a step resumed, a model round)."""
    for mark in ("[", "#"):
        step = step.split(mark, 1)[0]
    return step


def _release_joins(conn: Connection, run_id: uuid.UUID) -> int:
    """Queue the run's waiting joins none of whose steps has an open job left (a waiting job
    counts as open for the others: a join after a loop waits for the loop's end); returns how
    many. The caller holds the run row's lock."""
    rows = conn.execute(select(JOBS.c.id, JOBS.c.step, JOBS.c.status, JOBS.c.payload)
                        .where(JOBS.c.run_id == run_id, JOBS.c.status.in_(OPEN))).all()
    ready = []
    for job_id, _step, status, payload in rows:
        upstream = ((payload or {}).get("wait") or {}).get("upstream")
        if status != "waiting" or upstream is None:
            continue
        blocking = {base_step(other) for other_id, other, _s, _p in rows if other_id != job_id}
        if not blocking & set(upstream):
            ready.append(job_id)
    if ready:
        conn.execute(update(JOBS).where(JOBS.c.id.in_(ready), JOBS.c.status == "waiting")
                     .values(status="queued", available_at=utcnow()))
    return len(ready)


def release_parent(conn: Connection, run_id: uuid.UUID) -> None:
    """A run that ended queues the job of its parent run that waits for it, if any."""
    parent = conn.execute(select(RUNS.c.parent_run_id, RUNS.c.parent_step)
                          .where(RUNS.c.id == run_id)).first()
    if parent is not None and parent[0] is not None:
        _queue_waiting(conn, parent[0], parent[1])


def _queue_waiting(conn: Connection, run_id: uuid.UUID, step: str) -> None:
    conn.execute(update(JOBS).where(JOBS.c.run_id == run_id, JOBS.c.step == step,
                                    JOBS.c.status == "waiting")
                 .values(status="queued", available_at=utcnow()))
    wakeup.notify(conn)


def complete(job: Leased, outcome: Completion) -> bool:
    """Mark done, record events, enqueue what follows, maybe finish the run: one transaction.

    False when the lease was lost (another worker reclaimed the job): nothing is recorded.
    """
    with transaction() as conn:
        payload = {**job.payload, **outcome.record} if outcome.record else None
        if not _mark_done(conn, job, outcome.result, utcnow(), payload):
            return False
        run_status, last = _lock_run(conn, job.run_id)
        _record_done(conn, job, run_status, last, outcome)
    return True


def _mark_done(conn: Connection, job: Leased, result: Any, now: datetime,
               payload: dict[str, Any] | None = None) -> bool:
    values = {"status": "done", "result": result, "error": None, "lease_until": None,
              "finished_at": now}
    if payload is not None:
        values["payload"] = payload
    return _still_ours(conn, job, values)


def _record_done(conn: Connection, job: Leased, run_status: str, last: int,
                 outcome: Completion) -> None:
    """After a job is marked done, with its run locked: what follows it, and its events."""
    events = list(outcome.events)
    if run_status not in ("failed", "cancelled"):
        # A job just enqueued is open, so the run cannot be finished: no need to count.
        added = enqueue(conn, job.run_id, outcome.spawn, outcome.max_attempts)
        if outcome.release:
            added += _release_joins(conn, job.run_id)
        if not added and run_status != "succeeded":
            events += _finish_run_if_idle(conn, job.run_id, outcome.result_step)
    _append(conn, job.run_id, last, events)


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
            if item.type == "action_error":  # (the others say what happened before it)
                item.data.update({"attempt": job.attempts, "error": error,
                                  **({} if dead else {"retry_in": delay})})
        emit(conn, job.run_id, events)
        if dead:
            fail_run(conn, job.run_id, f"step {job.step}: {error}")
    return "dead" if dead else "queued"


def fail_run(conn: Connection, run_id: uuid.UUID, error: str) -> None:
    count = conn.execute(update(RUNS).where(RUNS.c.id == run_id,
                                            RUNS.c.status.in_(("queued", "running")))
                         .values(status="failed", error=error, finished_at=utcnow())).rowcount
    if count:
        # Whatever else was waiting in this run will not run now.
        conn.execute(update(JOBS).where(JOBS.c.run_id == run_id,
                                        JOBS.c.status.in_(("queued", "waiting")))
                     .values(status="failed", error="the run failed"))
        emit(conn, run_id, [Event("execution_failed", None, {"error": error})])
        release_parent(conn, run_id)
        _cancel_children(conn, run_id, "the run that started it failed")


def unfinished_runs(condition: Any) -> list[uuid.UUID]:
    """The runs matching ``condition`` (on ``RUNS``) that are queued or running."""
    with reading() as conn:
        return list(conn.execute(select(RUNS.c.id).where(
            condition, RUNS.c.status.in_(("queued", "running")))).scalars())


def cancel_run(run_id: uuid.UUID, reason: str) -> bool:
    """Stop a run that has not finished: its queued jobs never run, a job running now completes
    but starts nothing after it (``_record_done``), and the run stays ``cancelled``. False when
    it had already finished."""
    with transaction() as conn:
        count = conn.execute(update(RUNS).where(RUNS.c.id == run_id,
                                                RUNS.c.status.in_(("queued", "running")))
                             .values(status="cancelled", error=reason,
                                     finished_at=utcnow())).rowcount
        if count:
            _cancel_in(conn, run_id, reason)
    return bool(count)


def _cancel_in(conn: Connection, run_id: uuid.UUID, reason: str) -> None:
    """The cancellation of a run whose row was just marked cancelled: its jobs, its event, the
    parent it answers to and the sub-runs it started."""
    conn.execute(update(JOBS).where(JOBS.c.run_id == run_id,
                                    JOBS.c.status.in_(("queued", "waiting")))
                 .values(status="cancelled", error=reason, finished_at=utcnow()))
    emit(conn, run_id, [Event("execution_cancelled", None, {"reason": reason})])
    release_parent(conn, run_id)
    _cancel_children(conn, run_id, "the run that started it ended")


def _cancel_children(conn: Connection, run_id: uuid.UUID, reason: str) -> None:
    """Cancel the unfinished sub-runs of a run that ended without them."""
    children = list(conn.execute(
        update(RUNS).where(RUNS.c.parent_run_id == run_id,
                           RUNS.c.status.in_(("queued", "running")))
        .values(status="cancelled", error=reason, finished_at=utcnow())
        .returning(RUNS.c.id)).scalars())
    for child in children:
        _cancel_in(conn, child, reason)


def release(job: Leased) -> bool:
    """Give a job back untouched (SIGTERM before it started): the attempt does not count."""
    with transaction() as conn:
        ok = _still_ours(conn, job, {"status": "queued", "worker_id": None,
                                     "lease_until": None, "attempts": JOBS.c.attempts - 1})
        if ok:
            emit(conn, job.run_id, [Event("step_released", job.step,
                                          {"worker": job.worker_id})])
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

"""The queue's multi-row writes, each one statement whatever the number of rows.

A worker's batch appends dozens of events and enqueues the jobs that follow in one
transaction. On PostgreSQL each write is one INSERT ... SELECT FROM unnest(arrays): one
parameter per column and a constant SQL text, so psycopg converts and prepares it once per
connection. The arrays are sent in binary (``%(name)b``): psycopg's text format quotes every
element with a regular expression. (An executemany sends one execution per row; SQLAlchemy's
multi-row VALUES has a placeholder per value and a different text for every batch size, which
psycopg parses anew each time: both cost more than the rows themselves.) SQLite runs
in-process, where an executemany is already cheap: it keeps that.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from typing import Any, cast

from sqlalchemy import ARRAY, Column, Connection, Table, any_, bindparam
from sqlalchemy.dialects import sqlite

from app.models.workflows import WorkflowEvent, WorkflowJob
from app.workflows.engine import is_postgres

JOBS = cast(Table, WorkflowJob.__table__)
EVENTS = cast(Table, WorkflowEvent.__table__)

_EVENTS_SQL = (
    "INSERT INTO workflow_events (run_id, seq, type, step, data, time) "
    "SELECT r, s, t, p, d::json, %(time)s FROM unnest(%(run_id)b::uuid[], %(seq)b::int[], "
    "%(type)b::text[], %(step)b::text[], %(data)b::text[]) AS e(r, s, t, p, d)")
_JOBS_SQL = (
    "INSERT INTO workflow_jobs (run_id, step, payload, status, attempts, max_attempts, "
    "available_at, created_at) "
    "SELECT r, s, p::json, t, 0, m, a, %(created_at)s FROM unnest(%(run_id)b::uuid[], "
    "%(step)b::text[], %(payload)b::text[], %(status)b::text[], %(max_attempts)b::int[], "
    "%(available_at)b::timestamptz[]) AS j(r, s, p, t, m, a) "
    "ON CONFLICT (run_id, step) DO NOTHING RETURNING run_id")


def _json(conn: Connection) -> Callable[[Any], str]:
    """The serializer the engine uses for JSON columns (json.dumps unless configured)."""
    return getattr(conn.dialect, "_json_serializer", None) or json.dumps


def insert_events(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Append event rows (run_id, seq, type, step, data, time: one time for the batch)."""
    if not rows:
        return
    if not is_postgres():
        conn.execute(EVENTS.insert(), rows)
        return
    dump = _json(conn)
    conn.exec_driver_sql(_EVENTS_SQL, {
        "run_id": [r["run_id"] for r in rows], "seq": [r["seq"] for r in rows],
        "type": [r["type"] for r in rows], "step": [r["step"] for r in rows],
        "data": [dump(r["data"]) for r in rows], "time": rows[0]["time"]})


def insert_jobs(conn: Connection, rows: list[dict[str, Any]]) -> list[uuid.UUID]:
    """Insert jobs (run_id, step, payload, status: queued or waiting, max_attempts,
    available_at, created_at: one created_at for the batch), leaving a (run, step) already
    there as it is (a join). Returns the run of each new job."""
    if not rows:
        return []
    if not is_postgres():
        full = [{**r, "attempts": 0} for r in rows]
        return list(conn.execute(_sqlite_insert_jobs(), full).scalars())
    dump = _json(conn)
    return list(conn.exec_driver_sql(_JOBS_SQL, {
        "run_id": [r["run_id"] for r in rows], "step": [r["step"] for r in rows],
        "payload": [dump(r["payload"]) for r in rows], "status": [r["status"] for r in rows],
        "max_attempts": [r["max_attempts"] for r in rows],
        "available_at": [r["available_at"] for r in rows],
        "created_at": rows[0]["created_at"]}).scalars())


@functools.cache
def _sqlite_insert_jobs() -> Any:
    return sqlite.insert(JOBS).on_conflict_do_nothing(index_elements=["run_id", "step"]) \
        .returning(JOBS.c.run_id)


def one_of(column: Column[Any], name: str) -> Any:
    """``column`` is one of the list bound as ``name``: ``= ANY(array)`` on PostgreSQL (one
    parameter, a constant SQL text), an expanding ``IN`` elsewhere."""
    if is_postgres():
        return column == any_(bindparam(name, type_=ARRAY(column.type)))
    return column.in_(bindparam(name, expanding=True))

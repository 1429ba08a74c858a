"""The tool-call audit log: who called which tool where, with which parameter names, and how
it went, and for whom when the caller was in a representation session. Values are never
stored; the person reads every call made for them (by their tokens, their agents, and those
acting for them) at /u/<handle>/agent-activity (``calls_for``). A row is ``row``, whatever the
door: the action POSTs of the other doors write the same (``app.web.call_log``).

Rows are written by group commit: a call returns only once its row is committed, but calls
finishing at the same time in one process share one transaction, so under load one commit
(one disk flush, one turn at SQLite's write lock) serves many calls instead of one each.

A call that only reads has its row committed without waiting for the disk flush (SQLite
``synchronous=NORMAL`` in write-ahead-log mode, PostgreSQL ``synchronous_commit=off``, on a
connection kept for such rows: ``app.mcp.audit_rows``): the row is visible to every process
when the call returns, and it reaches the disk with the next flush, a moment later; only a
crash of the machine in that moment could lose it, never corrupt anything. A call that may
write keeps the full flush: the record of a change is as durable as the change.

A call that runs an action (``execute_action``) has its row inserted in the action's own
transaction, just before its commit (``with_the_change``): the change and its record commit
together or not at all, with one flush instead of two. That row says "ok" and the time taken
up to the commit; a call whose action fails gets its row after, like any other.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from flask import current_app
from sqlalchemy import Table, insert, or_, select, update
from sqlalchemy.engine import Engine

from app.actions import ballot_secrecy
from app.actions.effects import needs_write
from app.core.identity import Identity
from app.extensions import db
from app.mcp import audit_rows
from app.mcp.context import ToolContext
from app.mcp.registry import call_observer
from app.models import User
from app.models.base import utcnow
from app.models.mcp import McpToolCall

log = logging.getLogger("harmonic.mcp")
WRITER_KEY = "harmonic.mcp.audit_writer"


class _Row:
    def __init__(self, values: dict[str, Any], durable: bool) -> None:
        self.values = values
        self.durable = durable
        self.turn = threading.Event()  # set when the row is stored, or when it must write
        self.writes = False


class GroupCommit:
    """Stores rows in batches; ``write`` returns once the caller's row is committed.

    The first caller that finds nobody writing becomes the writer: it commits every row queued
    so far in one transaction, then hands the writer's turn to the oldest row queued meanwhile
    (so no caller serves others for long) or ends it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[_Row] = []
        self._writing = False

    def write(self, engine: Engine, values: dict[str, Any], durable: bool = True) -> None:
        mine = _Row(values, durable)
        with self._lock:
            self._queue.append(mine)
            mine.writes = not self._writing
            self._writing = True
        if not mine.writes:
            mine.turn.wait()
            if not mine.writes:
                return  # a writer stored it
        with self._lock:
            batch, self._queue = self._queue, []
        try:
            audit_rows.store(engine, [row.values for row in batch],
                             any(row.durable for row in batch))
        finally:
            with self._lock:
                if self._queue:
                    self._queue[0].writes = True
                    self._queue[0].turn.set()
                else:
                    self._writing = False
            for row in batch:
                if row is not mine:
                    row.writes = False
                    row.turn.set()


def _outcome(result: dict[str, Any] | None) -> tuple[str, str | None]:
    if result is None:
        return "cancelled", None
    if result.get("isError"):
        texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
        return "tool_error", (texts[0][:500] if texts else None)
    return "ok", None


@call_observer
def record(ctx: ToolContext, tool: str, args: dict[str, Any], result: dict[str, Any] | None,
           seconds: float) -> None:
    """A call observer: one McpToolCall row per call, on both transports."""
    outcome, message = _outcome(result)
    if message is not None and ballot_secrecy.casts_a_ballot(tool, args):
        message = ballot_secrecy.WITHHELD  # a refusal names the ballot's options and values
    stored = ctx.audit.get(STORED)
    # Inserted with the action's change (``with_the_change``): nothing to add if it went well;
    # otherwise the row says how it ended (cancelled after the commit), or, when the commit
    # itself failed and took the row with it, a row is written below like any other.
    if stored is not None and (outcome == "ok" or _correct(stored, outcome, message)):
        return
    values = _values(ctx, tool, args, outcome, message, seconds)
    if values is None:
        return
    # Never commit a tool's half-done work: end the session's transaction (and so any lock it
    # holds) before the row goes in on a connection of its own. close() rather than rollback():
    # both roll back and let go of the connection, but rollback also expires every loaded
    # object for a reload nobody will make (the call is over), at twice the cost.
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    writer: GroupCommit | None = app.extensions.get(WRITER_KEY)
    if writer is None:  # (made once per app: a default given to setdefault is made every call)
        writer = app.extensions.setdefault(WRITER_KEY, GroupCommit())
    try:
        db.session.close()
        writer.write(db.engine, values, durable=_may_write(app, tool, args))
    except Exception:
        log.exception("could not record the call of %s", tool)


STORED = "stored"  # ctx.audit key: the id of the row already committed with the change


def with_the_change(ctx: ToolContext, tool: str, args: dict[str, Any]) -> Callable[[], None] | None:
    """For ``app.core.dispatch``'s ``before_commit``: the call's row, inserted in the action's
    own transaction, so the record of a change commits with it or not at all, in one flush
    instead of two. The row says "ok" with the time taken so far; ``record`` then adds no
    second row. None when this call is not recorded (no identity, a task's background run)."""
    if ctx.identity is None or not ctx.observed:
        return None

    def with_change() -> None:
        values = _values(ctx, tool, args, "ok", None, time.perf_counter() - ctx.started)
        if values is not None:
            insert_row(values)
            ctx.audit[STORED] = values["id"]

    return with_change


def _values(ctx: ToolContext, tool: str, args: dict[str, Any], outcome: str,
            message: str | None, seconds: float) -> dict[str, Any] | None:
    identity = ctx.identity
    if identity is None:  # /mcp with auth off (loopback development): nobody to show it to
        return None
    params = args.get("params")
    names = sorted(params) if isinstance(params, dict) else sorted(args)
    path = ctx.audit.get("path") or _text(args.get("path"))
    action = ctx.audit.get("action") or _text(args.get("action"))
    return row(identity, tool=tool, door=getattr(ctx.session, "transport", "stdio"),
               session_id=None if ctx.session.stateless else ctx.session.id,
               path=path, action=action, names=names, context=ctx.audit.get("context"),
               outcome=outcome, message=message, seconds=seconds)


def row(identity: Identity, *, tool: str, door: str, session_id: str | None,
        path: str | None, action: str | None, names: list[str], context: str | None,
        outcome: str, message: str | None, seconds: float) -> dict[str, Any]:
    """One call of the call log, whatever the door (``door``: ``stdio`` or ``http`` for MCP,
    ``html``, ``md`` or ``json`` for an action POST): who called (``identity``, the caller
    itself, never the principal it runs as) and, in a representation session, for whom."""
    session = identity.acting_for()  # a call in a representation session: for whom
    return {"id": uuid.uuid4(), "created_at": utcnow(),
            "user_id": identity.user_id,
            "represented_user_id": session.principal_id if session is not None else None,
            "context": context, "token_id": identity.token_id,
            "session_id": session_id[:64] if session_id else None,
            "transport": door[:8], "tool": tool[:128], "path": path,
            "action": action[:128] if action else None,
            "param_names": ",".join(str(n) for n in names)[:2000], "outcome": outcome,
            "message": message[:500] if message else None, "duration_ms": int(seconds * 1000)}


def insert_row(values: dict[str, Any]) -> None:
    """Insert a call's row in the session's transaction (committed with it)."""
    db.session.execute(insert(cast(Table, McpToolCall.__table__)), [values])


def _correct(row_id: Any, outcome: str, message: str | None) -> bool:
    """Set the outcome of a row stored with its change; False if there is no such row."""
    table = cast(Table, McpToolCall.__table__)
    try:
        db.session.close()
        with db.engine.begin() as conn:
            found = conn.execute(update(table).where(table.c.id == row_id)
                                 .values(outcome=outcome, message=message))
        return bool(found.rowcount)
    except Exception:
        log.exception("could not correct the audit row %s", row_id)
        return True  # the row may be there: never risk a second one


def _may_write(app: Any, tool: str, args: dict[str, Any]) -> bool:
    """Whether the call may have changed something (unknown: assume it did)."""
    found = app.extensions["mcp"].find_tool(tool) if "mcp" in app.extensions else None
    return needs_write(found.call_effect(args) if found is not None else None)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class CallRow:
    """One call of a person's call log: who made it, and for whom when not for themselves."""

    call: McpToolCall
    caller: User | None
    principal: User | None  # the person it was made for in a representation session

    @property
    def declared(self) -> dict[str, Any] | None:
        """The context the call declared (``app.core.declared``), if any."""
        try:
            found = json.loads(self.call.context) if self.call.context else None
        except ValueError:
            return None
        return found if isinstance(found, dict) else None


def day_bounds(day: str | None, now: datetime | None = None) -> tuple[datetime, datetime] | None:
    """The UTC day ``day`` names (``today``, ``yesterday`` or YYYY-MM-DD), or None for any
    day; ValueError for anything else."""
    text = (day or "").strip().lower()
    if not text:
        return None
    today = (now or datetime.now(UTC)).replace(hour=0, minute=0, second=0, microsecond=0)
    if text == "today":
        start = today
    elif text == "yesterday":
        start = today - timedelta(days=1)
    else:
        start = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    return start, start + timedelta(days=1)


def calls_for(person: User, agent: User | None = None, day: str | None = None,
              limit: int = 200) -> list[CallRow]:
    """Every call made for ``person``, newest first: with their own tokens, by their agents,
    and by anyone acting for them in a representation session; only ``agent``'s (one of
    their agents, or a representative) and only on ``day`` (``day_bounds``) when given."""
    table = McpToolCall
    agents = select(User.id).where(User.owner_id == person.id).scalar_subquery()
    query = select(table).where(or_(table.user_id == person.id, table.user_id.in_(agents),
                                    table.represented_user_id == person.id))
    if agent is not None:
        query = query.where(table.user_id == agent.id)
    bounds = day_bounds(day)
    if bounds is not None:
        query = query.where(table.created_at >= bounds[0], table.created_at < bounds[1])
    calls = list(db.session.scalars(query.order_by(table.created_at.desc()).limit(limit)))
    ids = {c.user_id for c in calls} | {c.represented_user_id for c in calls}
    people = {u.id: u for u in db.session.scalars(select(User).where(
        User.id.in_([i for i in ids if i is not None])))} if calls else {}
    return [CallRow(c, people.get(c.user_id) if c.user_id else None,
                    people.get(c.represented_user_id) if c.represented_user_id else None)
            for c in calls]

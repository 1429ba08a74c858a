"""Change events: what changed is written to an outbox in the changing transaction and told to
subscribers only after that transaction commits.

Every writer says what it changed with one call, ``record(uri_or_path, ...)``:

- on the ORM session (the action path, ``app.web.pages.execute_action``, and anything else
  using ``db.session``): the URIs are staged on the session; just before it commits they are
  inserted into ``change_events`` in that same transaction, and after the commit they are
  handed to this process's listeners (SQLAlchemy session events). A rollback (of the whole
  transaction, or of the savepoint they were recorded in) forgets them: nothing recorded in a
  transaction that rolls back is ever delivered.
- on a Core connection (``record(..., conn=conn)``, the workflow queue): the caller wraps the
  transaction's body in ``staging(conn)``, which writes the staged rows as the body ends and
  returns them for ``deliver`` once the commit has succeeded.

Readers: in-process listeners (``listen``: stdio sessions, ``subscriptions/listen`` streams)
are called after commit with each URI; MCP 2025-11-25 HTTP sessions, served by any process,
read the table with a cursor (``app.mcp.store``). Listeners must not touch the database: they
run inside the commit of someone else's transaction.

Ordering: a reader's cursor is the last id it has seen, so ids must become visible in id order.
SQLite serializes writers. On PostgreSQL ids come from a sequence, which does not follow commit
order, so the insert first takes a transaction-level advisory lock (held from the insert, just
before the commit, until the commit): writers of change events commit one at a time.

Pruning: every ``PRUNE_EVERY``-th event deletes the events older than ``KEEP`` (one indexed
DELETE). ``KEEP`` matches the MCP session idle limit, so no live session can miss an event it
has not read yet.

Backlogs: a resource whose changes are numbered events (a workflow run's
``harmonic://runs/<id>/events``) registers a ``backlog`` provider, so a listen stream opened
after some (or all) of its events were written is first sent the events past the client's
cursor: a run that finished before the client listened is never missed.

Other processes: on PostgreSQL every transaction that writes change events also sends a
``NOTIFY`` on ``NOTIFY_CHANNEL`` (delivered at commit), and ``on_written`` hooks are told
the ids this process wrote, so that ``app.core.feed`` relays other processes' events to this
process's listeners without repeating its own.

Page URIs: ``harmonic://page/<path without the leading slash>``; ``record`` takes a page path
("/studios/x/d/abcd1234") or any URI ("floorplan://studios/x/plan").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, delete, event, func, insert, select, text
from sqlalchemy.orm import Session, SessionTransaction

from app.extensions import db
from app.models.base import utcnow
from app.models.changes import ChangeEvent
from app.services.listeners import Listeners

log = logging.getLogger("harmonic.changes")

KEEP = timedelta(hours=24)
PRUNE_EVERY = 256
MAX_URI = 2000  # longer URIs are not recorded (no page path or resource name gets near this)
_ADVISORY_KEY = 0x68726D63  # "hrmc": the change-event writers' lock on PostgreSQL
_STAGED = "harmonic.changes"  # Session.info key: [(transaction, uri, written)]

Listener = Callable[[str], None]
_listeners: Listeners[Listener] = Listeners()
_written_hooks: Listeners[Callable[[list[int]], None]] = Listeners()
NOTIFY_CHANNEL = "harmonic_changes"  # (app.core.feed listens on it)


def page_uri(path: str) -> str:
    """The resource URI under which a page of this app is readable (harmonic://page/...)."""
    return "harmonic://page/" + path.lstrip("/")


def as_uri(target: str) -> str:
    """A page path (with any query or fragment dropped) as its page URI; a URI as it is."""
    if "://" in target:
        return target
    return page_uri(target.split("#", 1)[0].split("?", 1)[0])


def _uris(targets: Iterable[str | None]) -> list[str]:
    return [u for u in dict.fromkeys(as_uri(t) for t in targets if t) if len(u) <= MAX_URI]


# -- listeners (this process) ----------------------------------------------------------------

listen = _listeners.add


def unlisten(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def deliver(uris: Iterable[str]) -> None:
    """Tell this process's listeners that ``uris`` changed, in a transaction already committed
    (here, or in another process: e.g. a workflow run's events seen by ``watch``)."""
    for uri in uris:
        for listener in list(_listeners):
            try:
                listener(uri)
            except Exception:  # a broken listener must not fail the change behind it
                log.exception("change listener failed for %s", uri)


# Call ``hook`` with the ids of the change events this process writes (before commit).
on_written = _written_hooks.add


def off_written(hook: Callable[[list[int]], None]) -> None:
    if hook in _written_hooks:
        _written_hooks.remove(hook)


# -- backlogs (numbered events a late listener must still hear) --------------------------------

# (uri, after seq, identity) -> the events past ``after`` the caller may see, or None when the
# provider does not know the URI. Called in an app context, never inside someone's commit.
Backlog = Callable[[str, int, Any], list[dict[str, Any]] | None]
_backlogs: Listeners[Backlog] = Listeners()
add_backlog = _backlogs.add


def backlog(uri: str, after: int, identity: Any) -> list[dict[str, Any]]:
    """The numbered events of ``uri`` after ``after`` (oldest first); [] when it has none."""
    for provider in list(_backlogs):
        try:
            found = provider(uri, after, identity)
        except Exception:  # an unreadable backlog must not break the listen stream
            log.exception("backlog of %s failed", uri)
            return []
        if found is not None:
            return found
    return []


# -- recording ---------------------------------------------------------------------------------

def record(*targets: str | None, conn: Connection | None = None) -> None:
    """Record that these pages or resources change in the current transaction."""
    uris = _uris(targets)
    if not uris:
        return
    if conn is not None:
        staged = _core_staged.get(id(conn))
        if staged is None:
            raise RuntimeError("record(conn=...) outside changes.staging(conn)")
        staged.extend(u for u in uris if u not in staged)
        return
    session = db.session()
    session.connection()  # begin the transaction the changes belong to, if none is open yet
    current = session.get_nested_transaction() or session.get_transaction()
    entries = session.info.setdefault(_STAGED, [])
    entries.extend([current, uri, False] for uri in uris)


def latest_id(connection: Any = None) -> int:
    """The id of the newest change event (0 when there is none)."""
    query = select(func.coalesce(func.max(ChangeEvent.id), 0))
    runner = connection if connection is not None else db.session
    return int(runner.execute(query).scalar() or 0)


# PostgreSQL: take the writers' lock, insert, and queue the NOTIFY (sent at commit) in one round
# trip. The lock is taken before any row is produced (the insert's rows come out of a join with
# the lock's one-row CTE), so before any id is drawn from the sequence.
_WRITE_PG = text(
    "WITH locked AS (SELECT pg_advisory_xact_lock(:key), pg_notify(:channel, '')) "
    "INSERT INTO change_events (uri, created_at) "
    "SELECT u.uri, :now FROM locked, unnest(CAST(:uris AS text[])) WITH ORDINALITY AS u(uri, n) "
    "ORDER BY u.n RETURNING id")


def _write(runner: Any, uris: list[str]) -> None:
    """Insert change events for ``uris`` (just before the commit of ``runner``'s transaction)."""
    if not uris:
        return
    connection = runner.connection() if isinstance(runner, Session) else runner
    now = utcnow()
    if connection.dialect.name == "postgresql":
        ids = runner.execute(_WRITE_PG, {"key": _ADVISORY_KEY, "channel": NOTIFY_CHANNEL,
                                         "now": now, "uris": uris}).scalars().all()
    else:
        ids = runner.execute(insert(ChangeEvent).values([{"uri": u, "created_at": now}
                                                         for u in uris])
                             .returning(ChangeEvent.id)).scalars().all()
    for hook in list(_written_hooks):
        hook(list(ids))
    if any(i % PRUNE_EVERY == 0 for i in ids):
        runner.execute(delete(ChangeEvent).where(ChangeEvent.created_at < now - KEEP))


# ORM sessions: write before commit, deliver after commit, forget on rollback.

@event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    entries = session.info.get(_STAGED)
    if not entries:
        return
    unwritten = [e for e in entries if not e[2]]
    if not unwritten:
        return
    for entry in unwritten:
        entry[2] = True  # (a savepoint's commit writes its part; the root writes the rest)
    _write(session, list(dict.fromkeys(e[1] for e in unwritten)))


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a savepoint released: the changes are not committed until the root is
    entries = session.info.pop(_STAGED, None)
    if entries:
        deliver(dict.fromkeys(e[1] for e in entries))


def _within(transaction: SessionTransaction | None, ancestor: SessionTransaction) -> bool:
    while transaction is not None:
        if transaction is ancestor:
            return True
        transaction = transaction.parent
    return False


@event.listens_for(Session, "after_soft_rollback")
def _after_rollback(session: Session, previous: SessionTransaction) -> None:
    entries = session.info.get(_STAGED)
    if entries:
        entries[:] = [e for e in entries if not _within(e[0], previous)]


@event.listens_for(Session, "after_transaction_end")
def _after_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:  # the root ended without a commit (closed): forget it all
        session.info.pop(_STAGED, None)


# Core connections: the caller marks the transaction's body.

_core_staged: dict[int, list[str]] = {}


@contextmanager
def staging(conn: Connection) -> Iterator[list[str]]:
    """Around the body of a Core transaction on ``conn``: ``record(..., conn=conn)`` stages
    URIs, written to the outbox when the body ends without error (still inside the
    transaction). Pass the yielded list to ``deliver`` after the commit."""
    staged: list[str] = []
    _core_staged[id(conn)] = staged
    try:
        yield staged
        _write(conn, staged)
    except BaseException:
        staged.clear()
        raise
    finally:
        _core_staged.pop(id(conn), None)

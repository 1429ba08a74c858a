"""Where the audit's rows go: a read's row on the app's own connection, a write's through the
pool, both stored alike; a lost audit connection loses no row and is replaced."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text

from app.extensions import db
from tests.helpers import server_backends
from tests.mcp.conftest import Http

pytestmark = pytest.mark.data_layer

PAGE = "/studios/team/note"


def _rows(app: Flask) -> list[Any]:
    from app.models.mcp import McpToolCall

    with app.app_context():
        rows = db.session.query(McpToolCall).order_by(McpToolCall.created_at).all()
        db.session.expunge_all()
        return rows


def _is_postgres(app: Flask) -> bool:
    return not app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite")


def _audit_backends(app: Flask, expect: int | None = None) -> list[int]:
    """PostgreSQL: the server processes of audit connections to this database."""
    return server_backends(app, "harmonic-audit", expect)


def test_a_reads_row_and_a_writes_row_are_stored_alike(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """navigate's row goes in on the audit's own connection, execute_action's (a write)
    through the pool: both read back with the same types and, in SQLite's text, the same
    formats."""
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path=PAGE).get("isError")
    done = http.tool("execute_action", action="create_note", path=PAGE,
                     params={"title": "Audited", "text": "A write's row"})
    assert not done.get("isError"), done
    read, write = _rows(app)
    assert (read.tool, read.path, read.outcome) == ("navigate", PAGE, "ok")
    assert (write.tool, write.action, write.param_names) == ("execute_action", "create_note",
                                                             "text,title")
    for field in ("id", "user_id", "token_id", "created_at", "session_id", "duration_ms"):
        assert type(getattr(read, field)) is type(getattr(write, field)), field
    assert read.user_id == write.user_id and read.token_id == write.token_id
    assert read.created_at.tzinfo is not None and read.created_at <= write.created_at
    if not _is_postgres(app):
        with app.app_context(), db.engine.connect() as conn:
            stored = conn.execute(text(
                "SELECT id, user_id, token_id, created_at FROM mcp_tool_calls "
                "ORDER BY created_at")).all()
        shapes = [tuple(re.sub(r"[0-9a-f]", "x", re.sub(r"\d", "9", str(v))) for v in row)
                  for row in stored]
        assert shapes[0] == shapes[1], stored
    else:
        assert _audit_backends(app), "the read's row went in on the audit's own connection"


def test_a_lost_audit_connection_loses_no_row(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path=PAGE).get("isError")
    if _is_postgres(app):
        with app.app_context(), db.engine.connect() as conn:
            killed = conn.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'harmonic-audit' AND datname = current_database()"
            )).scalars().all()
        assert killed and all(killed)
    else:
        # SQLite has no server to cut the connection: close it under the app instead.
        from app.mcp.audit_rows import AUDIT_BESIDE

        with app.app_context():
            side = AUDIT_BESIDE.get(db.engine)
        assert side is not None and side.connection is not None
        # The engine's one connection, kept between batches, closed under it.
        side.connection.connection.driver_connection.close()
    # The next read finds its connection dead: its row goes through the pool instead...
    assert not http.tool("navigate", path="/studios/team").get("isError")
    # ...and the one after opens a new audit connection.
    assert not http.tool("navigate", path="/studios").get("isError")
    assert [r.path for r in _rows(app)] == [PAGE, "/studios/team", "/studios"]
    if _is_postgres(app):
        assert len(_audit_backends(app, expect=1)) == 1


def test_the_audit_connection_ends_with_the_engine(app: Flask, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """Disposing of the engine (an app shutting down, a database about to be dropped) closes
    the audit's connection too: none is left behind on the server."""
    if not _is_postgres(app):
        pytest.skip("a SQLite file has no server connections to leave behind")
    http = Http(live_server, studio.token)
    http.initialize()
    assert not http.tool("navigate", path=PAGE).get("isError")
    assert len(_audit_backends(app, expect=1)) == 1
    with app.app_context():
        db.engine.dispose()
    assert _audit_backends(app, expect=0) == []
    assert not http.tool("navigate", path="/studios").get("isError")
    assert [r.path for r in _rows(app)] == [PAGE, "/studios"]


def _transactions(app: Flask) -> tuple[list[list[str]], Any]:
    """Statements the app's engine commits, one list per transaction (and a detach function)."""
    from sqlalchemy import event

    open_: dict[int, list[str]] = {}
    committed: list[list[str]] = []

    def statement(conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        open_.setdefault(id(conn), []).append(sql)

    def commit(conn: Any) -> None:
        committed.append(open_.pop(id(conn), []))

    def rollback(conn: Any) -> None:
        open_.pop(id(conn), None)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", commit)
    event.listen(engine, "rollback", rollback)

    def detach() -> None:
        event.remove(engine, "before_cursor_execute", statement)
        event.remove(engine, "commit", commit)
        event.remove(engine, "rollback", rollback)

    return committed, detach


def test_a_writes_row_commits_with_the_change(app: Flask, studio, client) -> None:  # type: ignore[no-untyped-def]
    """execute_action's row is inserted in the action's own transaction: the note and the
    record of its creation commit together (one flush), and no second row is written."""
    from tests.mcp.test_http import _FlaskClient

    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    committed, detach = _transactions(app)
    try:
        done = http.tool("execute_action", action="create_note", path=PAGE,
                         params={"title": "Together", "text": "One commit"})
        refused = http.tool("execute_action", action="create_note", path=PAGE, params={})
    finally:
        detach()
    assert not done.get("isError") and refused["isError"] is True
    audited = [tx for tx in committed if any("INSERT INTO mcp_tool_calls" in s for s in tx)]
    assert len(audited) == 2, committed
    assert any("INSERT INTO notes" in s for s in audited[0]), audited[0]
    assert not any("INSERT INTO notes" in s for s in audited[1]), audited[1]
    rows = _rows(app)
    assert [(r.action, r.outcome) for r in rows] == [("create_note", "ok"),
                                                     ("create_note", "tool_error")]
    assert rows[1].message and "text" in rows[1].message


FAILED = {"isError": True, "content": [{"type": "text", "text": "POST answered 503"}]}


@pytest.mark.parametrize(("committed", "result", "expected"), [
    # Cancelled after the action committed: its one row, marked cancelled.
    (True, None, ("create_note", "cancelled", None)),
    # The commit failed and took the row with it: the row is written afterwards.
    (False, FAILED, ("create_note", "tool_error", "POST answered 503")),
])
def test_a_row_stored_with_its_change_says_how_the_call_ended(
        app: Flask, studio, committed: bool, result: Any, expected: tuple[Any, ...]) -> None:  # type: ignore[no-untyped-def]
    from app.core.token_cache import identity_from_token
    from app.mcp import audit
    from app.mcp.context import SessionState, ToolContext

    class Quiet:
        def notify(self, message: dict[str, Any]) -> None:
            pass

    with app.app_context():
        ctx = ToolContext(identity=identity_from_token(studio.token),
                          session=SessionState("test"), channel=Quiet(),  # type: ignore[arg-type]
                          observed=True)
        ctx.audit.update(path=PAGE, action="create_note")
        insert_row = audit.with_the_change(ctx, "execute_action", {"action": "create_note"})
        assert insert_row is not None
        insert_row()
        if committed:
            db.session.commit()
        else:
            db.session.rollback()  # the action's commit failed
        audit.record(ctx, "execute_action", {"action": "create_note"}, result, 0.01)
    assert [(r.action, r.outcome, r.message) for r in _rows(app)] == [expected]


def _row() -> dict[str, Any]:
    import uuid

    from app.models.base import utcnow

    return {"id": uuid.uuid4(), "created_at": utcnow(), "user_id": None,
            "token_id": uuid.uuid4(), "session_id": "s", "transport": "http", "tool": "navigate",
            "path": PAGE, "action": None, "param_names": "path", "outcome": "ok",
            "message": None, "duration_ms": 1}


def _audit_engine(url: str) -> Any:
    from sqlalchemy import create_engine
    from sqlalchemy.pool import StaticPool

    from app.models.mcp import McpToolCall

    engine = create_engine(url, poolclass=StaticPool) if url == "sqlite://" \
        else create_engine(url)
    McpToolCall.__table__.create(engine)  # type: ignore[attr-defined]
    return engine


def test_an_in_memory_database_is_written_through_the_pool(
        caplog: pytest.LogCaptureFixture) -> None:
    """Another connection to ``sqlite://`` would open another, empty database: no side
    connection, no warning, every row stored."""
    from app.mcp.audit_rows import AUDIT_BESIDE, store

    engine = _audit_engine("sqlite://")
    for _ in range(3):
        store(engine, [_row()], durable=False)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM mcp_tool_calls")).scalar() == 3
    assert AUDIT_BESIDE.get(engine) is None and not caplog.records


def test_a_forked_worker_opens_its_own_and_leaves_its_parents(tmp_path: Any) -> None:
    import os

    from app.mcp.audit_rows import AUDIT_BESIDE, store

    engine = _audit_engine(f"sqlite:///{tmp_path / 'audit.db'}")
    store(engine, [_row()], durable=False)
    parent = AUDIT_BESIDE.get(engine)
    assert parent is not None
    child = os.fork()
    if child == 0:  # the child: a new connection of its own, the row stored
        code = 1
        try:
            store(engine, [_row()], durable=False)
            mine = AUDIT_BESIDE.get(engine)
            code = 0 if mine is not None and mine is not parent else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    store(engine, [_row()], durable=False)  # the parent's connection still works
    assert AUDIT_BESIDE.get(engine) is parent
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM mcp_tool_calls")).scalar() == 3

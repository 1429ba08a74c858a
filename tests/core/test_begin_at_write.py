"""Transactions that begin at their first write (app.models.begin_at_write): on PostgreSQL the
reads before a write run alone, each in its own transaction; the first write (or a locking
read, or a server-side cursor) begins a transaction that holds it and everything after it, and
a rollback undoes all of it; a read-only transaction leaves its connection ready for the next
one, which may write; REPEATABLE READ keeps its one snapshot. Atomicity on both backends."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select, text

from app.extensions import db
from app.models.begin_at_write import plain_read
from app.models.playbooks import Playbook
from tests.helpers import playbook_owners, playbook_row


def _postgresql_only() -> None:
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite's transactions are its own: nothing here changes them")


def _now() -> Any:
    value = db.session.scalar(select(func.now()))
    time.sleep(0.005)
    return value


@pytest.mark.parametrize(("statement", "alone"), [
    ("SELECT users.id FROM users WHERE users.id = %(id)s", True),
    ("  select 1", True),
    # Words that only look like a lock still begin the transaction: the safe side.
    ("SELECT title FROM notes WHERE text = 'for update'", False),
    ("INSERT INTO notes (id) VALUES (%(id)s)", False),
    ("UPDATE notes SET title = 'x'", False),
    ("DELETE FROM notes", False),
    ("WITH picked AS (SELECT id FROM jobs) UPDATE jobs SET state = 'x'", False),
    ("SAVEPOINT sa_savepoint_1", False),
    ("SELECT id FROM jobs FOR UPDATE SKIP LOCKED", False),
    ("SELECT id FROM runs FOR UPDATE OF runs", False),
    ("SELECT id FROM runs\nFOR  SHARE", False),
    ("SELECT id FROM runs FOR NO KEY UPDATE", False),
    ("SELECT id FROM runs FOR KEY SHARE", False),
    ("SELECT pg_advisory_xact_lock(1)", False),
    ("SELECT pg_notify('changes', '')", False),
    ("SELECT set_config('x.y', '1', true)", False),
    ("SELECT nextval('s')", False),
    ("SET LOCAL statement_timeout = 1000", False),
])
def test_which_statements_run_before_the_transaction(statement: str, alone: bool) -> None:
    assert plain_read(statement) is alone


def test_every_write_and_what_follows_it_is_undone_together(app: Flask) -> None:
    with app.app_context():
        db.engine.dispose()  # one connection: each step finds the one the last left
        db.session.add(playbook_row("kept"))
        db.session.commit()
        for _ in range(3):  # a transaction that only read, then one that wrote
            assert db.session.scalars(select(Playbook.owner)).all() == ["kept"]
            db.session.remove()
        assert db.session.scalar(select(func.count(Playbook.id))) == 1  # a read first
        db.session.add(playbook_row("first"))
        db.session.flush()
        db.session.execute(text("UPDATE playbooks SET owner = 'changed'"))
        db.session.add(playbook_row("last", 2))
        db.session.flush()
        db.session.rollback()
        assert playbook_owners() == ["kept"]


def test_reads_before_the_first_write_run_alone_and_the_rest_in_one_transaction(
        app: Flask) -> None:
    with app.app_context():
        _postgresql_only()
        # now() is when a transaction began: alone, each read is its own transaction.
        assert _now() != _now()
        db.session.add(playbook_row("one"))
        db.session.flush()
        began = _now()
        assert _now() == began
        db.session.commit()
        assert _now() != _now()  # the next transaction begins at its write again
        db.session.remove()
        assert playbook_owners() == ["one"]


def test_a_locking_read_holds_its_lock_until_the_transaction_ends(app: Flask) -> None:
    with app.app_context():
        _postgresql_only()
        db.session.add(playbook_row("locked"))
        db.session.commit()
        db.session.remove()
        # The lock is the transaction's first statement: it must begin the transaction.
        assert db.session.scalars(select(Playbook.owner).with_for_update()).all() == ["locked"]
        with db.engine.connect() as other:
            with pytest.raises(Exception, match="(?i)could not obtain lock"):
                other.execute(text("SELECT owner FROM playbooks FOR UPDATE NOWAIT")).all()
            other.rollback()
            db.session.remove()
            assert other.execute(text("SELECT owner FROM playbooks FOR UPDATE NOWAIT")) \
                .scalars().all() == ["locked"]
            other.rollback()


def test_a_server_side_cursor_gets_its_transaction(app: Flask) -> None:
    with app.app_context():
        db.session.add_all([playbook_row("a", 1), playbook_row("b", 2), playbook_row("c", 3)])
        db.session.commit()
        db.session.remove()
        rows = db.session.execute(select(Playbook.owner).order_by(Playbook.entries)
                                  .execution_options(yield_per=1))
        assert [row.owner for row in rows] == ["a", "b", "c"]
        db.session.remove()


def test_repeatable_read_keeps_one_snapshot(app: Flask) -> None:
    with app.app_context():
        _postgresql_only()
        with db.engine.connect() as reader:
            reader = reader.execution_options(isolation_level="REPEATABLE READ")
            count = select(func.count(Playbook.id))
            assert reader.scalar(count) == 0
            db.session.add(playbook_row("late"))
            db.session.commit()
            db.session.remove()
            assert reader.scalar(count) == 0  # still the snapshot of its first read
            reader.rollback()
            assert reader.scalar(count) == 1
            reader.rollback()


def test_pages_then_a_change_over_http(app: Flask, studio: Any) -> None:
    with app.app_context():
        db.engine.dispose()  # the pages' connection is the one the change then finds
    for _ in range(3):
        assert studio.get("/studios/team/cycles/today").status_code == 200
    made = studio.post("/studios/team/cycles/today/actions/create_note",
                       json={"title": "Begun at write", "text": "Saved with its history."},
                       accept="text/markdown")
    assert made.status_code == 201, made.get_data(as_text=True)[:300]
    note = studio.get(made.headers["Location"])
    assert note.status_code == 200 and "Begun at write" in note.get_data(as_text=True)
    refused = studio.post("/studios/team/cycles/today/actions/create_note",
                          json={"title": "Half", "body": "..."}, accept="text/markdown")
    assert refused.status_code == 422
    assert "Half" not in studio.get("/studios/team/cycles/today").get_data(as_text=True)

"""The data layer (app.db): while the app serves a call, reads run alone (autocommit) and a
change goes in a ``writing`` block, one transaction; a change outside a block is refused
before anything is written; ``read_many`` answers what the same queries answer one by one,
pipelined on PostgreSQL. Outside a call the session is SQLAlchemy's as it comes: atomicity,
locks and snapshots as usual. Both backends."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import bindparam, event, func, select, text, update

from app.core import feed
from app.db import (
    Query,
    WriteOutsideBlock,
    read,
    read_many,
    rows_of,
    value_of,
    writing,
)
from app.db.reads import first_row
from app.extensions import db
from app.models.playbooks import Playbook
from app.services.locking import lock_row
from tests.helpers import playbook_owners, playbook_row

pytestmark = pytest.mark.data_layer


def _postgresql_only() -> None:
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite's transactions are its own: nothing here changes them")


def _now() -> Any:
    value = db.session.scalar(select(func.now()))
    time.sleep(0.005)
    return value


@contextmanager
def _serving(app: Flask) -> Iterator[None]:
    """Code run as a request's view runs: the app's hooks before it and after it."""
    with app.test_request_context("/"):
        app.preprocess_request()
        try:
            yield
        finally:
            app.do_teardown_request(None)


@contextmanager
def _statements(app: Flask) -> Iterator[list[str]]:
    """The statements SQLAlchemy runs meanwhile (the pipeline's go to the driver directly),
    but for the change feed relay's polls, which its own thread makes on the same engine."""
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not feed.on_relay_thread():
            seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", note)


OWNED = (select(Playbook.owner, Playbook.entries, Playbook.created_at, Playbook.id)
         .where(Playbook.owner == bindparam("owner")).order_by(Playbook.entries))
COUNT = select(func.count(Playbook.id)).where(Playbook.teaching == bindparam("teaching"))
OWNERS_IN = select(Playbook.owner).where(Playbook.owner.in_(bindparam("owners", expanding=True)))


def _seed(*rows: Any) -> None:
    db.session.add_all(list(rows))
    db.session.commit()
    db.session.remove()


def test_reads_while_serving_run_alone_and_a_block_is_one_transaction(app: Flask) -> None:
    with app.app_context():
        _postgresql_only()
        with _serving(app):
            # now() is when a transaction began: alone, each read is its own transaction.
            assert _now() != _now()
            with writing():
                db.session.add(playbook_row("one"))
                db.session.flush()
                began = _now()
                assert _now() == began
            assert _now() != _now()  # reading alone again after the block
        assert playbook_owners() == ["one"]


def test_a_change_outside_a_block_while_serving_is_refused_and_nothing_is_written(
        app: Flask) -> None:
    with app.app_context():
        _seed(playbook_row("kept"))
        with _serving(app):
            db.session.add(playbook_row("stray", 2))
            with pytest.raises(WriteOutsideBlock, match="writing"):
                db.session.flush()
            db.session.rollback()
            with pytest.raises(WriteOutsideBlock):
                db.session.execute(update(Playbook).values(owner="changed"))
            found = db.session.scalars(select(Playbook)).one()
            found.owner = "edited"
            with pytest.raises(WriteOutsideBlock):
                db.session.flush()
            db.session.rollback()
            with pytest.raises(WriteOutsideBlock, match="row lock"):
                lock_row(Playbook, found.id)
        assert playbook_owners() == ["kept"]


def test_a_block_that_raises_writes_nothing(app: Flask) -> None:
    with app.app_context():
        with _serving(app), pytest.raises(RuntimeError):
            with writing():
                db.session.add(playbook_row("first"))
                db.session.flush()
                db.session.execute(text("UPDATE playbooks SET owner = 'changed'"))
                raise RuntimeError("half way")
        assert playbook_owners() == []


def test_a_block_keeps_what_the_reads_before_it_loaded(app: Flask) -> None:
    with app.app_context():
        _seed(playbook_row("before"))
        with _serving(app):
            found = db.session.scalars(select(Playbook)).one()
            with writing():
                found.owner = "after"  # the entity read alone, changed in the block
            assert found.owner == "after"
        assert playbook_owners() == ["after"]


def test_read_many_answers_as_the_queries_one_by_one(app: Flask) -> None:
    with app.app_context():
        _seed(playbook_row("amy", 1), playbook_row("amy", 2), playbook_row("bob", 3),
              playbook_row("cy", 4, teaching=True))
        queries = (rows_of(OWNED, {"owner": "amy"}), value_of(COUNT, {"teaching": False}),
                   Query(OWNED, {"owner": "nobody"}, first_row),
                   rows_of(OWNERS_IN, {"owners": ["bob", "cy"]}),
                   Query(select(Playbook).where(Playbook.owner == "bob"), {},
                         lambda rows: [row[0] for row in rows]))
        with _serving(app):
            alone = [read(query) for query in queries]
            with _statements(app) as seen:
                together = read_many(*queries)
        assert [tuple(row) for row in together[0]] == [tuple(row) for row in alone[0]]
        assert [row.entries for row in together[0]] == [1, 2]
        assert together[0][0].created_at.tzinfo is not None
        assert isinstance(together[0][0].id, uuid.UUID)
        assert together[1] == alone[1] == 3 and together[2] is None is alone[2]
        assert sorted(row.owner for row in together[3]) == ["bob", "cy"]
        assert [p.owner for p in together[4]] == ["bob"] and together[4][0] is alone[4][0]
        # The column statements ran on the driver's cursor (on PostgreSQL in one pipeline),
        # past SQLAlchemy's events, on both databases; only the entity query went through
        # the ORM.
        assert len(seen) == 1, seen


def test_read_many_with_the_pipeline_off_runs_each_through_sqlalchemy(app: Flask) -> None:
    with app.app_context():
        _seed(playbook_row("amy"))
        app.config["HARMONIC_DB_PIPELINE"] = False
        try:
            with _serving(app), _statements(app) as seen:
                owned, count = read_many(rows_of(OWNED, {"owner": "amy"}),
                                         value_of(COUNT, {"teaching": False}))
        finally:
            app.config.pop("HARMONIC_DB_PIPELINE")
        assert [row.owner for row in owned] == ["amy"] and count == 1
        assert len(seen) == 2


OWNED_ONCE = (select(Playbook.owner, Playbook.entries, Playbook.created_at, Playbook.id)
              .where(Playbook.owner.in_(bindparam("owners", expanding=True)),
                     Playbook.teaching == bindparam("teaching"))
              .order_by(Playbook.entries))


def test_a_statement_read_alone_reads_on_the_driver_as_core_reads_it(app: Flask) -> None:
    """Read alone while serving, a statement of columns goes to the driver's cursor (no
    engine event sees it) and answers what Core answers: its values converted by their types
    both ways (an expanding ``IN`` list, a boolean, an aware time, a UUID), rows by name."""
    with app.app_context():
        _seed(playbook_row("amy", 2), playbook_row("amy", 1), playbook_row("bob", 3),
              playbook_row("cy", 4, teaching=True))
        params = {"owners": ["amy", "cy"], "teaching": False}
        with _serving(app):
            with _statements(app) as seen:
                driver = read(rows_of(OWNED_ONCE, params))
                again = read(rows_of(OWNED_ONCE, {"owners": ["cy"], "teaching": True}))
            assert seen == []
            app.config["HARMONIC_DB_PIPELINE"] = False
            try:
                with _statements(app) as seen:
                    core = read(rows_of(OWNED_ONCE, params))
            finally:
                app.config.pop("HARMONIC_DB_PIPELINE")
            assert len(seen) == 1
        assert [tuple(row) for row in driver] == [tuple(row) for row in core]
        assert [(row.owner, row.entries) for row in driver] == [("amy", 1), ("amy", 2)]
        assert driver[0].created_at.tzinfo is not None
        assert isinstance(driver[0].id, uuid.UUID)
        assert [row.owner for row in again] == ["cy"]


BY_OWNER_ONCE = (select(Playbook.owner, Playbook.entries)
                 .where(Playbook.owner == bindparam("owner"), Playbook.teaching == False,  # noqa: E712 - a value bound in the statement itself
                        Playbook.entries > 0)
                 .order_by(Playbook.entries))


def test_a_statement_without_an_in_list_reads_each_call_s_values(app: Flask) -> None:
    """Its SQL and converters are kept after the first read; each read still binds its own
    values, beside those bound in the statement itself."""
    with app.app_context():
        _seed(playbook_row("amy", 2), playbook_row("bob", 3),
              playbook_row("bob", 4, teaching=True))
        with _serving(app), _statements(app) as seen:
            answers = [[tuple(row) for row in read(rows_of(BY_OWNER_ONCE, {"owner": owner}))]
                       for owner in ("amy", "bob", "cy", "amy")]
        assert seen == []
        assert answers == [[("amy", 2)], [("bob", 3)], [], [("amy", 2)]]


MISSING_ONCE = select(text("x")).select_from(text("no_such_table"))


def test_a_read_on_the_driver_that_fails_raises_sqlalchemy_s_error(app: Flask) -> None:
    """The driver's own error is not what callers (and the 503 mapping) know: Core runs the
    statement again and raises its error; the next read answers."""
    from sqlalchemy.exc import SQLAlchemyError

    with app.app_context():
        _seed(playbook_row("amy"))
        with _serving(app):
            with pytest.raises(SQLAlchemyError):
                read(rows_of(MISSING_ONCE))
            owned = read(rows_of(OWNED_ONCE, {"owners": ["amy"], "teaching": False}))
        assert [row.owner for row in owned] == ["amy"]


def test_a_failing_query_among_many_raises_and_the_next_reads_answer(app: Flask) -> None:
    from sqlalchemy.exc import SQLAlchemyError

    missing = text("SELECT nothing FROM no_such_table")
    with app.app_context():
        _seed(playbook_row("amy"))
        with _serving(app):
            with pytest.raises(SQLAlchemyError):
                read_many(rows_of(OWNED, {"owner": "amy"}),
                          rows_of(select(text("x")).select_from(text("no_such_table"))),
                          rows_of(missing))
            owned, count = read_many(rows_of(OWNED, {"owner": "amy"}),
                                     value_of(COUNT, {"teaching": False}))
        assert [row.owner for row in owned] == ["amy"] and count == 1


def test_a_read_in_a_block_sees_what_the_block_wrote(app: Flask) -> None:
    with app.app_context():
        with _serving(app), writing():
            db.session.add(playbook_row("pending"))  # not flushed yet: the read flushes it
            owned, count = read_many(rows_of(OWNED, {"owner": "pending"}),
                                     value_of(COUNT, {"teaching": False}))
            assert [row.owner for row in owned] == ["pending"] and count == 1
        assert playbook_owners() == ["pending"]


def test_a_request_leaves_no_transaction_open_in_its_app_context(app: Flask,
                                                                 client: Any) -> None:
    with app.app_context():
        assert client.get("/").status_code == 200
        assert not db.session().in_transaction()
        db.session.add(playbook_row("after"))  # outside a call: SQLAlchemy's own session
        db.session.rollback()
        assert playbook_owners() == []


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


def test_outside_a_call_the_session_is_one_transaction_from_its_first_read(
        app: Flask) -> None:
    with app.app_context():
        _postgresql_only()
        began = _now()
        assert _now() == began
        db.session.rollback()
        assert _now() != began
        db.session.remove()


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

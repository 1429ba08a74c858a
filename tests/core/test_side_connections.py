"""Reads on the app's own reader connections (app.models.plain_reads.read_aside over
app.models.side_connections): the rows read_alone gives, and what another connection has just
committed; the request's open transaction joined; a failed reader dropped without failing the
read; never more readers than the bound; none left open once the engine is disposed. On both
backends."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import bindparam, create_engine, event, select, text, update

from app.extensions import db
from app.models import plain_reads, side_connections
from app.models.playbooks import Playbook
from tests.helpers import playbook_row, server_backends

ONE = select(Playbook.owner, Playbook.entries, Playbook.created_at).where(
    Playbook.owner == bindparam("owner"))


def _fresh(owner: str) -> None:
    """One playbook of ``owner`` committed, no reader left from earlier tests (the engine's
    disposal closes them), and the statement prepared by two reads."""
    db.engine.dispose()
    db.session.add(playbook_row(owner, 1))
    db.session.commit()
    db.session.remove()
    for _ in range(2):
        plain_reads.read_aside(ONE, {"owner": owner})


def _readers() -> side_connections.Readers:
    found = side_connections.readers(db.engine)
    assert found is not None
    return found


def _reader_backends(app: Flask, expect: int) -> int:
    return len(server_backends(app, side_connections.READER_NAME, expect))


def test_a_read_aside_is_read_alone_s_answer_and_sees_the_latest_commit(app: Flask) -> None:
    with app.app_context():
        _fresh("aside")
        core = [tuple(r) for r in plain_reads.read_alone(ONE, {"owner": "aside"})]
        for _ in range(3):  # the first run is left to the pool (not prepared yet)
            rows = plain_reads.read_aside(ONE, {"owner": "aside"})
            assert [tuple(r) for r in rows] == core
            assert not db.session().in_transaction()
        assert len(_readers()._idle) == 1  # the runs were served by one reader
        # Another connection commits: the very next read sees it (no snapshot is kept).
        with db.engine.begin() as other:
            other.execute(update(Playbook).where(Playbook.owner == "aside").values(entries=41))
        assert plain_reads.read_aside(ONE, {"owner": "aside"})[0].entries == 41


def test_a_read_aside_joins_the_request_s_open_transaction(app: Flask) -> None:
    with app.app_context():
        for _ in range(2):
            plain_reads.read_aside(ONE, {"owner": "joined"})
        db.session.add(playbook_row("joined", 1))
        db.session.flush()
        assert [r.owner for r in plain_reads.read_aside(ONE, {"owner": "joined"})] == ["joined"]
        db.session.rollback()
        assert plain_reads.read_aside(ONE, {"owner": "joined"}) == []


def test_a_failed_reader_is_dropped_and_the_read_still_answers(app: Flask) -> None:
    with app.app_context():
        _fresh("failing")
        readers = _readers()
        [reader] = readers._idle
        reader.close()  # as a server restart would leave it
        assert [r.owner for r in plain_reads.read_aside(ONE, {"owner": "failing"})] == [
            "failing"]
        assert readers._idle == [] and readers._opened == 0  # dropped, not lent again
        plain_reads.read_aside(ONE, {"owner": "failing"})
        assert len(readers._idle) == 1 and readers._idle[0] is not reader  # a new one


def test_every_reader_lent_the_read_goes_through_the_pool(app: Flask) -> None:
    with app.app_context():
        _fresh("busy")
        readers = _readers()
        lent = [readers.take() for _ in range(readers.limit)]
        try:
            assert all(connection is not None for connection in lent)
            assert readers.take() is None  # the bound
            assert [r.owner for r in plain_reads.read_aside(ONE, {"owner": "busy"})] == ["busy"]
        finally:
            for connection in lent:
                readers.give(connection)
        assert len(readers._idle) == readers.limit


def test_a_listened_engine_sees_a_read_aside(app: Flask) -> None:
    """The statement counters of tests and benchmarks listen to the engine: they see it."""
    with app.app_context():
        for _ in range(2):
            plain_reads.read_aside(ONE, {"owner": "seen"})
        seen: list[str] = []

        def listen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            seen.append(statement)

        event.listen(db.engine, "before_cursor_execute", listen)
        try:
            plain_reads.read_aside(ONE, {"owner": "seen"})
        finally:
            event.remove(db.engine, "before_cursor_execute", listen)
        assert any("playbooks" in statement for statement in seen)


def test_the_readers_end_with_the_engine(app: Flask) -> None:
    """Disposing of the engine closes every reader, idle or lent at that moment."""
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        pytest.skip("a SQLite file has no server connections to leave behind")
    with app.app_context():
        _fresh("ending")
        readers = _readers()
        assert _reader_backends(app, 1) == 1
        lent = readers.take()  # the one idle reader
        plain_reads.read_aside(ONE, {"owner": "ending"})  # opens a second, left idle
        assert _reader_backends(app, 2) == 2
        db.engine.dispose()
        assert _reader_backends(app, 1) == 1  # the lent one, until it comes back
        readers.give(lent)
        assert _reader_backends(app, 0) == 0
        assert side_connections.readers(db.engine) is not readers  # a new set from now on


def test_an_in_memory_database_has_no_readers() -> None:
    engine = create_engine("sqlite://")
    try:
        assert side_connections.readers(engine) is None
    finally:
        engine.dispose()


def test_a_forked_worker_opens_its_own_readers_and_leaves_its_parents(tmp_path: Any) -> None:
    import os

    engine = create_engine(f"sqlite:///{tmp_path / 'readers.db'}")
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
            conn.execute(text("INSERT INTO t VALUES (7)"))
        parent = side_connections.readers(engine)
        assert parent is not None
        reader = parent.take()
        assert reader is not None
        parent.give(reader)
        child = os.fork()
        if child == 0:  # the child: a set of its own, whose reader reads
            code = 1
            try:
                mine = side_connections.readers(engine)
                connection = mine.take() if mine is not None else None
                ok = (mine is not parent and connection is not None
                      and connection is not reader
                      and connection.execute("SELECT x FROM t").fetchall() == [(7,)])
                code = 0 if ok else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert side_connections.readers(engine) is parent  # the parent's are untouched
        assert reader.execute("SELECT x FROM t").fetchall() == [(7,)]
    finally:
        engine.dispose()


def test_no_readers_where_the_setting_allows_none(tmp_path: Any) -> None:
    """HARMONIC_DB_READERS=0: every read aside goes through the pool."""
    engine = create_engine(f"sqlite:///{tmp_path / 'none.db'}")
    try:
        assert side_connections.readers(engine, 0) is None
        assert side_connections.readers(engine, 2) is not None
    finally:
        engine.dispose()


def test_the_reader_setting_is_a_whole_number(monkeypatch, tmp_path: Any) -> None:  # type: ignore[no-untyped-def]
    from config import SettingError, build_config

    monkeypatch.setenv("HARMONIC_DB_READERS", "2")
    assert build_config(str(tmp_path))["HARMONIC_DB_READERS"] == 2
    monkeypatch.setenv("HARMONIC_DB_READERS", "some")
    with pytest.raises(SettingError, match="HARMONIC_DB_READERS must be a whole number"):
        build_config(str(tmp_path))

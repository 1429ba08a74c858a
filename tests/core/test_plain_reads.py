"""Plain-column reads on the driver's cursor (app.models.plain_reads): the same rows, of the
same types, as SQLAlchemy Core gives; every statement still seen by whoever listens to the
engine; a driver's error raised as SQLAlchemy's; the request's own pending writes visible.
On both backends."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from flask import Flask
from sqlalchemy import bindparam, column, event, exc, select, table

from app.extensions import db
from app.models import plain_reads
from app.models.playbooks import Playbook
from tests.helpers import playbook_row

COLUMNS = select(Playbook.id, Playbook.owner, Playbook.teaching, Playbook.created_at,
                 Playbook.entries, Playbook.user_id, Playbook.stopped_at).where(
    Playbook.owner == bindparam("owner")).order_by(Playbook.session_id)
MISSING = select(column("x")).select_from(table("no_such_table"))


def test_the_driver_gives_the_rows_core_gives(app: Flask) -> None:
    with app.app_context():
        stopped = datetime(2026, 11, 27, 3, 4, 5, 678000, tzinfo=UTC)
        db.session.add_all([playbook_row("amy", 1),
                            playbook_row("amy", 2, teaching=True, stopped_at=stopped),
                            playbook_row("bob", 3)])
        db.session.commit()
        core = db.session.connection().execute(COLUMNS, {"owner": "amy"}).all()
        for _ in range(3):  # the second run is the first on the driver's cursor
            rows = plain_reads.execute(COLUMNS, {"owner": "amy"})
            assert [tuple(r) for r in rows] == [tuple(r) for r in core]
        assert (id(COLUMNS), db.engine.dialect.name) in plain_reads._PREPARED
        assert plain_reads._PREPARED[(id(COLUMNS), db.engine.dialect.name)] is not None
        first, second = rows
        assert isinstance(first.id, uuid.UUID) and first.owner == "amy"
        assert first.teaching is False and second.teaching is True
        assert second.stopped_at == stopped and second.stopped_at.tzinfo is not None
        assert first.stopped_at is None and first.user_id is None
        assert rows.scalar() == first.id and rows.all() == list(rows)
        assert plain_reads.execute(COLUMNS, {"owner": "nobody"}).scalar() is None


def test_a_listened_engine_sees_every_statement(app: Flask) -> None:
    with app.app_context():
        for _ in range(2):
            plain_reads.execute(COLUMNS, {"owner": "amy"})
        seen: list[str] = []

        def listen(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
            seen.append(statement)

        event.listen(db.engine, "before_cursor_execute", listen)
        try:
            plain_reads.execute(COLUMNS, {"owner": "amy"})
        finally:
            event.remove(db.engine, "before_cursor_execute", listen)
        assert len(seen) == 1 and "playbooks" in seen[0]


def test_a_driver_error_is_raised_as_sqlalchemy_s(app: Flask) -> None:
    with app.app_context():
        for _ in range(2):  # the second run would go to the driver's cursor
            with pytest.raises(exc.DBAPIError):
                plain_reads.execute(MISSING)
            db.session.rollback()


def test_a_read_sees_the_request_s_pending_writes(app: Flask) -> None:
    with app.app_context():
        for number in range(3):
            db.session.add(playbook_row("cy", number + 10))  # not committed: flushed first
            assert len(plain_reads.execute(COLUMNS, {"owner": "cy"})) == number + 1
        db.session.rollback()
        assert plain_reads.execute(COLUMNS, {"owner": "cy"}) == []


def test_get_loads_the_entity_session_get_would(app: Flask) -> None:
    """plain_reads.get: the same values as Session.get, a persistent unchanged entity whose
    relationships load when touched and whose changes are saved; None for no such row; the
    session's own object when it holds one."""
    from app.models import ApiToken, User

    with app.app_context():
        user = User(handle="getter", name="Get Ter", timezone="Europe/Paris")
        db.session.add(user)
        db.session.flush()
        db.session.add(ApiToken(user_id=user.id, name="t", token_hash="h" * 64,
                                prefix="hk_abcd"))
        db.session.commit()
        user_id = user.id
        db.session.remove()
        expected = {prop.key: getattr(db.session.get(User, user_id), prop.key)
                    for prop in db.inspect(User).column_attrs}
        db.session.remove()
        for _ in range(2):  # the second read runs on the driver's cursor
            found = plain_reads.get(User, user_id)
            assert found is not None and found in db.session
            assert {key: getattr(found, key) for key in expected} == expected
            state = db.inspect(found)
            assert state.persistent and not state.modified and not db.session.dirty
            assert [t.name for t in found.tokens] == ["t"]  # a lazy load, as after a query
            assert plain_reads.get(User, user_id) is found  # held: the session's own
            db.session.remove()
        found = plain_reads.get(User, user_id)
        found.name = "Renamed"
        db.session.commit()
        db.session.remove()
        assert db.session.get(User, user_id).name == "Renamed"
        assert plain_reads.get(User, uuid.uuid4()) is None


def test_read_alone_reads_outside_a_transaction_or_joins_the_open_one(app: Flask) -> None:
    """Before the request has begun a transaction, read_alone begins none (the session stays
    without one) and gives the committed rows; once one is open, it reads inside it and so
    sees the request's own pending rows."""
    with app.app_context():
        db.session.add(playbook_row("alone", 1))
        db.session.commit()
        db.session.remove()
        for _ in range(3):  # the second run is the first on the driver's cursor
            rows = plain_reads.read_alone(COLUMNS, {"owner": "alone"})
            assert [r.owner for r in rows] == ["alone"]
            assert not db.session().in_transaction()
        db.session.add(playbook_row("alone", 2))
        db.session.flush()
        assert db.session().in_transaction()
        assert len(plain_reads.read_alone(COLUMNS, {"owner": "alone"})) == 2
        db.session.rollback()
        assert len(plain_reads.read_alone(COLUMNS, {"owner": "alone"})) == 1
        with pytest.raises(exc.OperationalError if db.engine.dialect.name == "sqlite"
                           else exc.ProgrammingError):
            plain_reads.read_alone(MISSING)


def test_read_alone_on_a_connection_pinged_at_checkout(app: Flask, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A pooled PostgreSQL connection idle for a while is pinged when checked out; the ping
    must leave it idle, or a read in autocommit could not switch it (it failed with "can't
    change 'autocommit' now" before the ping ended its transaction)."""
    import app.extensions as extensions

    monkeypatch.setattr(extensions, "IDLE_PING_SECONDS", 0.0)  # every checkout pings
    with app.app_context():
        db.session.add(playbook_row("pinged", 1))
        db.session.commit()
        db.session.remove()
        for _ in range(3):
            assert [r.owner for r in plain_reads.read_alone(COLUMNS, {"owner": "pinged"})] == [
                "pinged"]
            db.session.remove()


def test_read_alone_sees_the_sessions_unflushed_changes(app: Flask) -> None:
    """An object added but not yet flushed: the read flushes it and reads in the session's
    transaction, as ``execute`` does."""
    with app.app_context():
        db.session.remove()
        pending = Playbook(name="p1", session_id="s-pending-1", owner="pending", upstream="",
                           teaching=False, entries=1)
        pending.id = uuid.uuid4()
        pending.short_id = pending.id.hex[:8]  # set here: assign_ids would begin a transaction
        db.session.add(pending)  # begins the session's transaction (no statement yet)
        assert [r.owner for r in plain_reads.read_alone(COLUMNS, {"owner": "pending"})] == [
            "pending"]
        db.session.rollback()

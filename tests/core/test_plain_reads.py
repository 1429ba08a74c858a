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

COLUMNS = select(Playbook.id, Playbook.owner, Playbook.teaching, Playbook.created_at,
                 Playbook.entries, Playbook.user_id, Playbook.stopped_at).where(
    Playbook.owner == bindparam("owner")).order_by(Playbook.session_id)
MISSING = select(column("x")).select_from(table("no_such_table"))


def _playbook(owner: str, number: int, **fields: object) -> Playbook:
    playbook = Playbook(name=f"p{number}", session_id=f"s-{owner}-{number}", owner=owner,
                        upstream="", teaching=number % 2 == 0, entries=number, **fields)
    playbook.assign_ids()
    return playbook


def test_the_driver_gives_the_rows_core_gives(app: Flask) -> None:
    with app.app_context():
        stopped = datetime(2026, 11, 27, 3, 4, 5, 678000, tzinfo=UTC)
        db.session.add_all([_playbook("amy", 1), _playbook("amy", 2, stopped_at=stopped),
                            _playbook("bob", 3)])
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
            db.session.add(_playbook("cy", number + 10))  # not committed: flushed first
            assert len(plain_reads.execute(COLUMNS, {"owner": "cy"})) == number + 1
        db.session.rollback()
        assert plain_reads.execute(COLUMNS, {"owner": "cy"}) == []

"""Statements kept prepared across requests on PostgreSQL (app.models.statement_reuse): a
page's statements are still prepared on the server after several requests; a transaction that
wrote is still undone when it ends without a commit, through either way a session ends; a
failed transaction rolls back and its connection serves the next request; row locks taken by
a read end with it. The last three on both backends."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, text

from app.extensions import db
from app.models.playbooks import Playbook
from tests.helpers import playbook_owners, playbook_row


def test_a_page_s_statements_stay_prepared_from_request_to_request(app: Flask,
                                                                  studio: Any) -> None:
    with app.app_context():
        if db.engine.dialect.name == "sqlite":
            pytest.skip("SQLite prepares no statement on a server")
        db.engine.dispose()  # one connection from here on: the requests come one at a time
    for _ in range(8):  # psycopg prepares a statement at its fifth run on a connection
        assert studio.get("/studios/team").status_code == 200
    with app.app_context():
        assert db.engine.pool.checkedin() == 1
        prepared = db.session.scalars(text(
            "SELECT statement FROM pg_prepared_statements")).all()
        db.session.remove()
    assert any("FROM studios" in statement for statement in prepared), prepared


@pytest.mark.parametrize("end", ["rollback", "remove"])
def test_a_change_not_committed_is_still_undone(app: Flask, end: str) -> None:
    with app.app_context():
        db.session.add(playbook_row("kept"))
        db.session.commit()
        db.session.add(playbook_row("dropped"))
        db.session.flush()  # written in the open transaction
        getattr(db.session, end)()
        assert playbook_owners() == ["kept"]


def test_a_change_made_with_a_plain_statement_is_still_undone(app: Flask) -> None:
    with app.app_context():
        db.session.add(playbook_row("kept"))
        db.session.commit()
        db.session.execute(text("UPDATE playbooks SET owner = 'changed'"))
        db.session.remove()
        assert playbook_owners() == ["kept"]


def test_a_failed_transaction_rolls_back_and_the_connection_serves_again(app: Flask) -> None:
    with app.app_context():
        db.engine.dispose()
        db.session.add(playbook_row("half"))
        db.session.flush()
        with pytest.raises(Exception, match="(?i)no such table|does not exist"):
            db.session.execute(text("SELECT * FROM no_such_table"))
        db.session.rollback()
        assert playbook_owners() == []
        assert db.session.scalar(text("SELECT 1")) == 1
        db.session.remove()


def test_a_lock_taken_by_a_read_ends_with_its_transaction(app: Flask) -> None:
    with app.app_context():
        if db.engine.dialect.name == "sqlite":
            pytest.skip("SQLite locks the whole file, not rows")
        db.session.add(playbook_row("locked"))
        db.session.commit()
        db.session.scalars(select(Playbook.owner).with_for_update()).all()
        db.session.remove()
        with db.engine.connect() as other:  # NOWAIT: fails at once if the row is still locked
            assert other.scalars(select(Playbook.owner).with_for_update(nowait=True)).all() \
                == ["locked"]
            other.rollback()

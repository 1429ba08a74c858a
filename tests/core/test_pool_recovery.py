"""Pooled PostgreSQL connections cut under the app: no ping on the hot path, yet no restart
needed. A connection that sat idle is pinged and replaced before use (the request never sees
it); one cut right after use fails its next request with a clean 503, and the pool is renewed
for the requests after it."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from flask import Flask

from app import extensions
from app.extensions import db
from tests.conftest import PG_ADMIN_URL

pytestmark = pytest.mark.data_layer


def _cut_connections(app: Flask) -> int:
    """Terminate every server connection of the app's database (as a restart would)."""
    name = app.config["SQLALCHEMY_DATABASE_URI"].rsplit("/", 1)[1].split("?")[0]
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        rows = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE datname = %s AND pid <> pg_backend_pid()", (name,)).fetchall()
    return len(rows)


@pytest.fixture
def pg_app(app: Flask) -> Iterator[Flask]:
    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        pytest.skip("SQLite files have no connection to lose")
    yield app
    # Other pooled connections were cut too: the table clean-up after the test needs live ones.
    with app.app_context():
        db.engine.dispose()


def test_an_idle_connection_cut_meanwhile_is_replaced_unseen(pg_app: Flask, studio,
                                                             monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert studio.get("/studios/team").status_code == 200
    assert _cut_connections(pg_app) >= 1
    monkeypatch.setattr(extensions, "IDLE_PING_SECONDS", 0.0)  # every pooled one counts as idle
    answer = studio.get("/studios/team")
    assert answer.status_code == 200, answer.get_data(as_text=True)[:300]


def test_a_connection_cut_while_in_use_costs_one_503_then_the_pool_is_renewed(
        pg_app: Flask, studio, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Nothing counts as idle: on a loaded machine the cut may take longer than the threshold.
    monkeypatch.setattr(extensions, "IDLE_PING_SECONDS", 3600.0)
    assert studio.get("/studios/team").status_code == 200
    assert _cut_connections(pg_app) >= 1
    first = studio.get("/studios/team")  # used a moment ago: not pinged, so it fails here
    assert first.status_code == 503 and first.headers["Retry-After"], first.status_code
    assert "unavailable" in first.get_data(as_text=True)
    again = studio.get("/studios/team")
    assert again.status_code == 200, again.get_data(as_text=True)[:300]

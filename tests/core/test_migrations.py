"""Migrations build the whole schema from empty, and agree with the models."""

from __future__ import annotations

import os
import uuid

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import upgrade

from app.extensions import db
from app.models.search import schema_filter
from tests.conftest import PG_ADMIN_URL, _pg_admin, make_app


def _check(url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(url, tmp_path)
    with app.app_context():
        upgrade(revision="heads")
        with db.engine.connect() as conn:
            # The search index's FTS5 table and tsvector column exist only in the migration.
            context = MigrationContext.configure(conn, opts={"include_object": schema_filter})
            diff = compare_metadata(context, db.metadata)
        db.engine.dispose()
    assert diff == [], f"models and migrations disagree: {diff}"


def test_upgrade_from_empty_sqlite(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _check(f"sqlite:///{tmp_path / 'fresh.db'}", tmp_path)


def test_upgrade_from_empty_postgresql(tmp_path) -> None:  # type: ignore[no-untyped-def]
    if "postgresql" not in os.environ.get("HARMONIC_TEST_BACKENDS", "sqlite,postgresql"):
        return
    name = f"harmonic_mig_{uuid.uuid4().hex[:10]}"
    _pg_admin(f'CREATE DATABASE "{name}"')
    try:
        _check(f"{PG_ADMIN_URL.rsplit('/', 1)[0]}/{name}", tmp_path)
    finally:
        _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

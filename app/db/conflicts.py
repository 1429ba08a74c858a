"""An ``INSERT`` that says what to do when a row of the same key is there: PostgreSQL's or
SQLite's, whose ``on_conflict_do_nothing`` and ``on_conflict_do_update`` take the same
arguments, as the database in use speaks."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite

from app.extensions import db


def insert(table: Any, conn: Connection | None = None) -> Any:
    """``INSERT`` into ``table`` in the dialect of ``conn`` (the session's, when not given)."""
    bind = conn if conn is not None else db.session.get_bind()
    return (postgresql if bind.dialect.name == "postgresql" else sqlite).insert(table)

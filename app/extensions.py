"""The Flask extension singletons, created unbound and attached in ``create_app``."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from typing import Any

import click
from flask import Flask
from flask_login import LoginManager
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect
from sqlalchemy import MetaData, Uuid, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase

# Named constraints keep Alembic migrations identical on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class _MigrationsConfig:
    """``app.extensions["migrate"]`` until something needs Flask-Migrate: its ``directory`` is
    a plain attribute; any other attribute imports Flask-Migrate, attaches it for real and
    answers from the real configuration."""

    def __init__(self, app: Flask, database: SQLAlchemy, directory: str) -> None:
        self.app, self.database, self.directory = app, database, directory

    def __getattr__(self, name: str) -> Any:
        from flask_migrate import Migrate

        Migrate(self.app, self.database, directory=self.directory)  # replaces this object
        return getattr(self.app.extensions["migrate"], name)


class _MigrationCommands(click.Group):
    """``flask db``: Flask-Migrate's own command group, imported when the command runs."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        from flask_migrate.cli import db as commands

        return commands.make_context(info_name, args, parent=parent, **extra)


class Migrations:
    """Flask-Migrate, attached lazily. Importing it imports Alembic (with Mako and Pygments,
    about 11 MB and a tenth of a second), which only a process that migrates needs: web
    workers, ``bin/worker`` and ``bin/mcp-server`` never do."""

    def init_app(self, app: Flask, database: SQLAlchemy, directory: str) -> None:
        app.extensions["migrate"] = _MigrationsConfig(app, database, directory)
        app.cli.add_command(_MigrationCommands("db", help="Perform database migrations."))


def use_sqlite_wal(engine: Engine) -> None:
    """Put a SQLite database in write-ahead-log mode. A commit then costs one flush of the log
    instead of the rollback journal's several, readers no longer block the writer, and
    durability is unchanged (the synchronous level stays FULL). The mode belongs to the file,
    so the app, bin/mcp-server, bin/worker and the queue's own engine all share it."""
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _wal(dbapi_connection: Any, _record: Any) -> None:
        try:
            dbapi_connection.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:  # another process holds a lock: it is WAL already
            pass


# SQLite keeps a UUID as 32 hex characters and a time as text, and every row read turns each
# of its UUID columns (id, studio, author, ...) back into a uuid.UUID and each time into an
# aware datetime: a page of 200 rows parsed 500-650 UUIDs and ~400 times, the most expensive
# steps of reading a row. The same rows come back on every page, and both values are
# immutable, so parsed ones are shared, keyed by their text (bounded: emptied when full).
SHARED_READS_MAX = 32_768


def shared_reads(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``parse`` (a column's result processor) remembering its answer per stored value."""
    seen: dict[Any, Any] = {}

    def read(value: Any) -> Any:
        if value is None:
            return None
        found = seen.get(value)
        if found is None:
            if len(seen) >= SHARED_READS_MAX:
                seen.clear()
            found = seen[value] = parse(value)
        return found

    return read


_parsed_uuid = shared_reads(uuid.UUID)


class _SharedUuid(Uuid):
    """``Uuid`` as SQLite reads it, parsing each distinct text once (``_parsed_uuid``)."""

    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        if not self.as_uuid or (dialect.supports_native_uuid and self.native_uuid):
            return super().result_processor(dialect, coltype)
        return _parsed_uuid


def share_sqlite_uuids(engine: Engine) -> None:
    """Have ``engine`` (SQLite only) read UUID columns through ``_parsed_uuid``. Set on the
    engine's own dialect before its first statement, so no other engine is touched."""
    if engine.dialect.name != "sqlite":
        return
    engine.dialect.colspecs = {**engine.dialect.colspecs, Uuid: _SharedUuid}


db = SQLAlchemy(model_class=Base)
migrate = Migrations()
login_manager = LoginManager()
csrf = CSRFProtect()

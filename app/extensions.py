"""The Flask extension singletons, created unbound and attached in ``create_app``."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import click
from flask import Blueprint, Flask
from flask_login import LoginManager
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect
from sqlalchemy import MetaData, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import DeclarativeBase

from app.db.session import DataSession

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
        from flask_migrate import (  # lazy: only for a migration
            Migrate,
        )

        Migrate(self.app, self.database, directory=self.directory)  # replaces this object
        return getattr(self.app.extensions["migrate"], name)


class _MigrationCommands(click.Group):
    """``flask db``: Flask-Migrate's own command group, imported when the command runs."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        from flask_migrate.cli import (  # lazy: only for a migration
            db as commands,
        )

        return commands.make_context(info_name, args, parent=parent, **extra)


class Migrations:
    """Flask-Migrate, attached lazily. Importing it imports Alembic (with Mako and Pygments),
    which only a process that migrates needs: web workers, ``bin/worker`` and
    ``bin/mcp-server`` never do."""

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


# A pooled connection idle this long is pinged before use; one used more recently is not.
# Under load connections come back within milliseconds, so they are never pinged; a database
# restart takes longer than this, so a connection of a quiet process that lived through one
# is pinged (and replaced) before its next use, unseen.
IDLE_PING_SECONDS = 1.0


def ping_after_idle(engine: Engine) -> None:
    """Ping a pooled server connection before use only when it sat idle for a while.

    SQLAlchemy's ``pool_pre_ping`` costs a round trip on every checkout, that is on every
    request. A connection used a moment ago is almost surely alive; one idle for
    ``IDLE_PING_SECONDS`` may have been cut (a database restart, a firewall's idle timeout) and
    is pinged, and replaced if dead. A connection cut while busy fails its next statement
    instead: that request answers 503 with Retry-After (``app.web.health``) and SQLAlchemy then
    replaces every connection of the pool, so the following requests reconnect. SQLite files
    have no connection to lose and are never pinged."""
    if engine.dialect.name == "sqlite":
        return

    @event.listens_for(engine, "checkin")
    def _idle_from(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute("SELECT 1")
            finally:
                cursor.close()
            # The ping began a transaction (the driver begins one before any statement): end
            # it, so the connection is handed out idle, as after any other checkout (a
            # connection switched to autocommit must not be in a transaction).
            engine.dialect.do_rollback(dbapi_connection)
        except Exception as exc:
            # The pool discards this connection and checks out (or opens) another.
            raise DisconnectionError("the pooled connection is gone") from exc


db = SQLAlchemy(model_class=Base, session_options={"class_": DataSession})
migrate = Migrations()
login_manager = LoginManager()


class Csrf(CSRFProtect):
    """flask-wtf's CSRF protection (``app.web.auth`` runs it for cookie sessions). What
    ``exempt`` marks, flask-wtf keeps in private members: ``exempted`` keeps it too, by
    blueprint name or view (``module.function``)."""

    def __init__(self) -> None:
        super().__init__()
        self.exempted: set[str] = set()

    def exempt(self, view: Any) -> Any:
        # flask-wtf also takes a view's "module.function" as a string.
        self.exempted.add(view.name if isinstance(view, Blueprint)
                          else view if isinstance(view, str) else view_name(view))
        return super().exempt(view)


def view_name(view: Any) -> str:
    return f"{view.__module__}.{view.__name__}"


csrf = Csrf()


def session_exists() -> bool:
    """Whether this app context has made its database session yet. Asking ``db.session()``
    makes one, and the context's end then closes it: work for nothing in a request that never
    needed it (an agent's call that reads nothing, or only from the caches)."""
    return db.session.registry.has()

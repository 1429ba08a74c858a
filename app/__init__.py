"""Harmonic for Python: the application factory.

One Flask app serves people (HTML), agents over HTTP (Markdown + actions) and agents over MCP
(which dispatch in-process into the same routes). Feature packages plug in through ``FEATURES``.
"""

from __future__ import annotations

import gc
import importlib
import os
from collections.abc import Callable
from typing import Any

from flask import Flask

from app.core.url_rules import LazyBuilderRule
from config import build_config, env

# Each feature module exposes ``init_app(app)``; order matters only for URL precedence.
FEATURES: tuple[str, ...] = (
    "app.web",
    "app.design_model.web",
    "app.floorplans.web",
    "app.mcp.web",
    "app.notifications.web",
    "app.automations.web",
    "app.oauth.web",
    "app.playbooks.web",
    "app.workflows.web",
    "app.search.web",
)


class HarmonicFlask(Flask):
    """Flask, asking once per function whether it is a coroutine.

    Flask asks ``inspect.iscoroutinefunction`` of every view and hook on every request; the
    answer never changes for a function, so it is kept. Flask documents ``ensure_sync`` as the
    method to override for this.

    Its URL rules compile their URL builders when first used (``app.core.url_rules``)."""

    url_rule_class = LazyBuilderRule

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        cache: dict[Callable[..., Any], Callable[..., Any]] = self.__dict__.setdefault(
            "_ensured", {})
        try:
            return cache[func]
        except KeyError:
            pass
        except TypeError:  # an unhashable callable: asked each time, as Flask does
            return super().ensure_sync(func)
        ensured = super().ensure_sync(func)
        if len(cache) < 4096:  # views and hooks are a fixed set; a bound per-call one is not
            cache[func] = ensured
        return ensured


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
    """Build an app; ``overrides`` replaces settings (tests pass DATABASE_URL and friends)."""
    # Building the app imports most of the code and makes the models and routes: objects that
    # live as long as the process, and little garbage. The cyclic collector, left on, would walk
    # them all several times over for nothing, so it is paused while the app is built. Frozen
    # afterwards, they are skipped by every later collection, the one at the process's exit
    # included (which a bin/mcp-server's client waits for). Every process pays start-up: each
    # bin/mcp-server an agent's client spawns, each server and queue worker, each CLI command.
    collecting = gc.isenabled()
    gc.disable()
    try:
        app = _build_app(overrides)
    finally:
        if collecting:
            gc.enable()
    gc.freeze()
    return app


def _build_app(overrides: dict[str, Any] | None) -> Flask:
    # Every ``import app.x`` runs this file first: the app's own code is imported here, when an
    # app is built, so that importing one module of it does not load them all.
    from app.cli import register_cli  # lazy: loaded when an app is built
    from app.db import session as data_session  # lazy: loaded when an app is built
    from app.extensions import (  # lazy: loaded when an app is built
        csrf,
        db,
        login_manager,
        migrate,
        ping_after_idle,
        use_sqlite_wal,
    )

    app = HarmonicFlask(
        __name__,
        instance_path=env("HARMONIC_INSTANCE") or os.path.join(os.getcwd(), "instance"),
        template_folder=os.path.join(os.path.dirname(os.path.dirname(__file__)), "templates"),
        static_folder=os.path.join(os.path.dirname(__file__), "static"),
    )
    app.config.update(build_config(app.instance_path, overrides))
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep parameters in declared order

    importlib.import_module("app.models")  # registers every table

    db.init_app(app)
    data_session.init_app(app)  # before any other hook: requests read in autocommit
    with app.app_context():
        use_sqlite_wal(db.engine)
        ping_after_idle(db.engine)
    migrate.init_app(app, db, directory=os.path.join(os.path.dirname(os.path.dirname(__file__)),
                                                     "migrations"))
    # No template reads flask-login's ``current_user`` (they read ``viewer``): without its
    # context processor an HTML page does not ask flask-login for the person again.
    login_manager.init_app(app, add_context_processor=False)
    app.config["WTF_CSRF_CHECK_DEFAULT"] = False  # checked in app.web.auth for cookie sessions
    csrf.init_app(app)

    for name in FEATURES:
        # A feature that fails to import stops the app with its own error: a half-built app
        # that silently lacks a feature would answer 404s nobody can explain.
        importlib.import_module(name).init_app(app)

    register_cli(app)
    return app

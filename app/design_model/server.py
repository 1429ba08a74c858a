"""The standalone design-model server behind ``bin/model-server``: ``POST /rpc``, ``GET /health``.

A deliberately small Flask app (only the database and these two routes, no pages, no login),
served by gunicorn: real worker management and graceful shutdown, and several workers can share
the database because no state lives in the process. It takes no token, so it binds loopback
only (``app.core.netpolicy.auth_may_be_off``; ``bin/model-server`` refuses any other address).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from sqlalchemy import inspect
from sqlalchemy.exc import SQLAlchemyError

from app.design_model import loader, settings
from app.design_model.rpc import handle_body
from app.extensions import db
from config import build_config


def create_server_app(overrides: dict[str, Any] | None = None) -> Flask:
    instance = os.environ.get("HARMONIC_INSTANCE") or os.path.join(os.getcwd(), "instance")
    app = Flask("model_server", instance_path=instance)
    app.config.update(build_config(app.instance_path, overrides))
    importlib.import_module("app.models")
    db.init_app(app)
    settings.configure(app.config)

    @app.post("/rpc")
    def rpc() -> Response:
        body = handle_body(request.get_data(cache=False), via="http")
        return Response(body, status=200, mimetype="application/json")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "model": settings.current().model}

    return app


def prepare(upgrade: bool, demo: bool, full_app: Callable[[], Flask]) -> None:
    """Optionally migrate the database and load the demo, in a throwaway full app built by
    ``full_app`` (``create_app``: the caller, on the top layer, passes it down)."""
    if not (upgrade or demo):
        return
    from flask_migrate import (  # lazy: only for a migration
        upgrade as run_upgrade,
    )

    full = full_app()
    with full.app_context():
        if upgrade:
            run_upgrade(directory=str(Path(__file__).resolve().parents[2] / "migrations"),
                        revision="heads")
        if demo:
            loader.load_demo(db.session(), settings.current().model)
            db.session.commit()
        db.session.remove()
        db.engine.dispose()


def schema_problem(app: Flask) -> str | None:
    """Why this database cannot serve the design model yet, or None when it can."""
    with app.app_context():
        try:
            ready = inspect(db.engine).has_table("design_elements")
        except SQLAlchemyError as exc:
            return f"cannot open the database: {exc.__class__.__name__}: {exc}"
        finally:
            db.engine.dispose()  # no connection may cross gunicorn's fork
    if not ready:
        return "the database has no design-model tables: run 'flask db upgrade' or pass --upgrade"
    return None


def serve(app: Flask, host: str, port: int, workers: int, threads: int) -> None:
    from gunicorn.app.base import BaseApplication  # lazy: gunicorn only when serving

    class Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("threads", threads)
            self.cfg.set("timeout", 60)
            self.cfg.set("graceful_timeout", 5)
            self.cfg.set("accesslog", None)
            self.cfg.set("proc_name", "model-server")
            # No shared control socket in $HOME: several servers may run side by side.
            self.cfg.set("control_socket_disable", True)

        def load(self) -> Flask:
            return app

    Server().run()

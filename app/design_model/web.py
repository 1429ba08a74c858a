"""The design-model server inside the app: ``POST /design-model/rpc`` and ``flask design-model``.

``/design-model/rpc`` is the embedded default upstream for playbooks and an agent door, so it
answers only callers with a token (401 + ``WWW-Authenticate: Bearer`` otherwise). No page of
ours calls it from a browser, so a browser's cookie session is refused rather than checked for
CSRF: a JSON-RPC client has no form token to send, and a cookie a third-party page can make
the browser attach must not be enough to run a method. Without cookies, the blueprint is exempt
from CSRF.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask import Blueprint, Flask, Response, g, request
from flask.cli import AppGroup

from app.core import jsonrpc
from app.core.identity import Identity
from app.design_model import loader, settings
from app.design_model.protocol import RpcError
from app.design_model.rpc import handle_body
from app.extensions import csrf, db
from app.services.errors import DomainError, Unauthorized
from app.web.auth import load_identity

bp = Blueprint("design_model", __name__, url_prefix="/design-model")


def _identity() -> Identity | None:
    if not hasattr(g, "identity"):
        # The app's auth hook normally ran already; resolve here when it has not.
        try:
            load_identity()
        except DomainError:
            return None
    return getattr(g, "identity", None)


def rpc_response(body: str) -> Response:
    return Response(body, status=200, mimetype="application/json")


@bp.post("/rpc")
@jsonrpc.door
def rpc_endpoint() -> Response:
    identity = _identity()
    if identity is None or identity.via == "session":
        refusal = Unauthorized("send 'Authorization: Bearer <token>'" if identity is None else
                               "send 'Authorization: Bearer <token>': a browser's sign-in "
                               "cookie is not accepted here")
        error = RpcError(refusal.jsonrpc_code, f"Unauthorized: {refusal.message}",
                         {"code": refusal.error_code})
        response = rpc_response(json.dumps(jsonrpc.error(None, error)))
        response.status_code = refusal.http_status
        response.headers["WWW-Authenticate"] = "Bearer"
        return response
    return rpc_response(handle_body(request.get_data(cache=False), via="app",
                                    identity=identity))


cli = AppGroup("design-model", help="Load and inspect the design model (Revit/Rhino).")


@cli.command("load")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--model", default=None, help="Model name (default: HARMONIC_DESIGN_MODEL).")
@click.option("--replace", is_flag=True, help="Clear the model first.")
def load_command(file: Path, model: str | None, replace: bool) -> None:
    """Load a design model from a JSON file."""
    name = model or settings.current().model
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        count = loader.load(db.session(), data, name, replace=replace)
    except (ValueError, loader.LoadError) as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from exc
    db.session.commit()
    click.echo(f"loaded {count} elements into model '{name}'")


@cli.command("load-demo")
@click.option("--model", default=None, help="Model name (default: HARMONIC_DESIGN_MODEL).")
@click.option("--reset", is_flag=True, help="Reload even when the model holds elements.")
def load_demo_command(model: str | None, reset: bool) -> None:
    """Load the demo model (two levels, walls, beams) unless the model already has one."""
    name = model or settings.current().model
    count = loader.load_demo(db.session(), name, reset=reset)
    db.session.commit()
    if count is None:
        click.echo(f"model '{name}' already loaded; nothing to do (--reset reloads it)")
    else:
        click.echo(f"loaded the demo ({count} elements) into model '{name}'")


def init_app(app: Flask) -> None:
    settings.configure(app.config)
    csrf.exempt(bp)
    app.register_blueprint(bp)
    app.cli.add_command(cli)

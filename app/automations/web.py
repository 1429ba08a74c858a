"""Wiring automations into the app: pages and actions, the event listeners, the inbound
webhook endpoint (``POST /hooks/automations/<id>``, signed, no session), and the sweep every
worker runs (schedules due, then firings to carry out)."""

from __future__ import annotations

import importlib

import click
from flask import Blueprint, Flask, Response, jsonify, request

from app.automations import effects, pages, rules, settings, triggers
from app.db import writing
from app.extensions import csrf
from app.workflows import every

REGISTERS = ("app.automations.actions", "app.automations.triggers")
hooks = Blueprint("automation_hooks", __name__)


@hooks.post("/hooks/automations/<rule_id>")
@csrf.exempt  # a machine's signed call: the signature is its proof, no cookie is involved
def inbound(rule_id: str) -> Response:
    body = request.get_data(cache=False)
    with writing():
        row = rules.receive(rule_id, dict(request.headers), body)
        answer = ({"fired": True, "firing": row.short_id} if row is not None
                  else {"fired": False, "reason": "already received, or the rule is paused"})
    response = jsonify(answer)
    response.status_code = 202 if row is not None else 200
    return response


def sweep() -> tuple[int, int]:
    """Fire the schedules that are due, then carry out pending firings."""
    return triggers.due_schedules(), effects.perform_pending()


def init_app(flask_app: Flask) -> None:
    for name in REGISTERS:
        importlib.import_module(name)
    flask_app.register_blueprint(pages.bp)
    flask_app.register_blueprint(hooks)
    every("automations", lambda: settings.get_float("AUTOMATIONS_SWEEP_SECONDS"), sweep)

    @flask_app.cli.group("automations")
    def group() -> None:
        """Automations."""

    @group.command("sweep")
    def sweep_command() -> None:
        """Fire the schedules that are due and carry out pending firings (as every worker
        does)."""
        fired, done = sweep()
        click.echo(f"fired {fired} schedule(s), carried out {done} firing(s)")

"""``flask workflows validate|compile|run|events``: the playbook language from a terminal."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import click
import yaml
from flask import current_app
from flask.cli import AppGroup
from sqlalchemy import select

from app.extensions import db
from app.models import User
from app.services.errors import DomainError
from app.workflows import queue, runs
from app.workflows.compile import compile_document
from app.workflows.document import DocumentError, parse, read_file
from app.workflows.validate import validate
from app.workflows.worker import ensure_thread

group = AppGroup("workflows", help="Validate, compile and run workflow playbooks.")


def _load(path: str) -> dict[str, Any]:
    try:
        return parse(read_file(path))
    except DocumentError as exc:
        raise click.ClickException("\n".join(str(p) for p in exc.problems)) from None


@group.command("validate")
@click.argument("file", type=click.Path(dir_okay=False))
def validate_command(file: str) -> None:
    """Check FILE; print each problem with its path. Exit status 1 when there are any."""
    problems = validate(_load(file))
    if problems:
        for problem in problems:
            click.echo(str(problem), err=True)
        raise SystemExit(1)
    click.echo(f"{file}: valid")


@group.command("compile")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
def compile_command(file: str, as_json: bool) -> None:
    """Print the compiled workflow of FILE (every step, hidden ones included)."""
    try:
        compiled = compile_document(_load(file), Path(file).stem)
    except DocumentError as exc:
        for problem in exc.problems:
            click.echo(str(problem), err=True)
        raise SystemExit(1) from None
    if as_json:
        click.echo(json.dumps(compiled, indent=2, ensure_ascii=False))
    else:
        click.echo(yaml.safe_dump(compiled, sort_keys=False, allow_unicode=True, width=100))


def _inputs(pairs: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r}: use key=value", param_hint="--input")
        try:
            out[key] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError:
            out[key] = value
    return out


def format_event(event: dict[str, Any]) -> str:
    data = json.dumps(event["data"], ensure_ascii=False, default=str)
    if len(data) > 300:
        data = data[:297] + "..."
    step = f" {event['step']}" if event["step"] else ""
    return f"{event['seq']:>4} {event['time']:%H:%M:%S.%f}"[:-3] + f" {event['type']}{step} {data}"


def follow(run_id: uuid.UUID, poll: float = 0.2, timeout: float | None = None) -> str:
    """Print the run's events as they arrive until it finishes; returns its final status."""
    seen = 0
    started = time.monotonic()
    while True:
        for event in queue.events_after(run_id, seen):
            click.echo(format_event(event))
            seen = event["seq"]
        status = (queue.get_run(run_id) or {}).get("status")
        if status in ("succeeded", "failed", "cancelled"):
            for event in queue.events_after(run_id, seen):
                click.echo(format_event(event))
            return str(status)
        if timeout is not None and time.monotonic() - started > timeout:
            return str(status)
        time.sleep(poll)


@group.command("run")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--input", "inputs", multiple=True, help="key=value overriding the workload.")
@click.option("--as", "as_user", default=None, help="Run as this user (for page/mcp tools).")
@click.option("--follow", "follow_", is_flag=True, help="Print events live until it ends.")
@click.option("--worker/--no-worker", "inline", default=None,
              help="Run a worker in this process until the run ends (default: on for SQLite "
                   "with --follow, else off: bin/worker or the server's thread runs it).")
def run_command(file: str, inputs: tuple[str, ...], as_user: str | None, follow_: bool,
                inline: bool | None) -> None:
    """Enqueue a run of FILE; with --follow, print its events until it finishes."""
    user_id = None
    if as_user:
        user = db.session.scalars(select(User).where(User.handle == as_user)).one_or_none()
        if user is None:
            raise click.ClickException(f"no user '{as_user}'")
        user_id = user.id
    if inline is None:
        inline = follow_ and current_app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite")
    # This process runs jobs only when asked to: a run started here must not be leased by a
    # worker thread that the process's exit would kill half-way, nor by one --no-worker
    # refused. (Starting a run wakes the in-process worker when the settings want one.)
    wanted = current_app.config.get("WORKFLOWS_WORKER")
    current_app.config["WORKFLOWS_WORKER"] = "off"
    try:
        run_id = runs.start(read_file(file), _inputs(inputs), user_id,
                            name=Path(file).stem, operator=True)
    except DocumentError as exc:
        raise click.ClickException("\n".join(str(p) for p in exc.problems)) from None
    except DomainError as exc:
        details = [f"{e['param']}: {e['message']}" for e in exc.errors]
        raise click.ClickException("\n".join([exc.message, *details])) from None
    finally:
        if wanted is None:
            current_app.config.pop("WORKFLOWS_WORKER", None)
        else:
            current_app.config["WORKFLOWS_WORKER"] = wanted
    click.echo(f"run {run_id.hex[:8]} queued ({current_app.config.get('HARMONIC_BASE_URL', '')}"
               f"/runs/{run_id.hex[:8]})")
    if not follow_ and not inline:
        return
    if inline:
        ensure_thread(current_app._get_current_object(), force=True)  # type: ignore[attr-defined]
    status = follow(run_id) if follow_ else wait(run_id)
    if status != "succeeded":
        raise SystemExit(1)


def wait(run_id: uuid.UUID, poll: float = 0.2) -> str:
    """Wait quietly until the run finishes; returns its final status."""
    while True:
        status = str((queue.get_run(run_id) or {}).get("status"))
        if status in ("succeeded", "failed", "cancelled"):
            click.echo(f"run {run_id.hex[:8]} {status}")
            return status
        time.sleep(poll)


@group.command("events")
@click.argument("run")
def events_command(run: str) -> None:
    """Print the events of RUN (short id or UUID)."""
    try:
        found = runs.find(run)
    except DomainError as exc:
        raise click.ClickException(exc.message) from None
    for event in queue.events_after(found["id"]):
        click.echo(format_event(event))

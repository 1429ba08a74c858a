"""``flask playbooks replay SESSION|recipe.json --arg k=v [--dry-run] [--user HANDLE]``.

The operator's own command line: a recipe file may live anywhere (the data-directory confinement
protects the HTTP endpoint, not the machine's owner). Upstream steps run as the operator;
Harmonic steps (MCP tools) need ``--user`` to say whose identity they use. Recipe governance
applies here as on every door: for real, only approved versions (a file in the playbooks data
folder's ``reviewed/``, or a version approved on its page) or the operator's own taught session,
and only after a ``--dry-run`` with the same arguments. Progress is shown as a bar, one tick
per step; the exit status is 0 when the run succeeded, 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from flask import Flask
from flask.cli import AppGroup

from app.extensions import db
from app.services.errors import DomainError


def _parse_args(pairs: tuple[str, ...]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r}: use --arg name=value", param_hint="--arg")
        try:
            args[key.strip()] = json.loads(value)
        except ValueError:
            args[key.strip()] = value  # plain text; typed later by the recipe's inputs
    return args


def register(app: Flask) -> None:
    group = AppGroup("playbooks", help="Teach sessions and recipe replays.")

    @group.command("replay")
    @click.argument("target")
    @click.option("--arg", "pairs", multiple=True, help="A variable: name=value (repeatable).")
    @click.option("--dry-run", is_flag=True, help="Preview: no writes.")
    @click.option("--user", "handle", default=None,
                  help="Run Harmonic (MCP tool) steps as this user.")
    @click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
    def replay_command(target: str, pairs: tuple[str, ...], dry_run: bool, handle: str | None,
                       as_json: bool) -> None:
        """Replay a session's recipe (by session id or name) or a recipe.json file."""
        from app.playbooks import recipe as recipes
        from app.playbooks import service
        from app.playbooks.replay import Hooks, replay

        identity = None
        try:
            if handle:
                from app.core.identity import Identity
                from app.services import accounts

                identity = Identity(user_id=accounts.get_user(handle).id, via="session")
            path = Path(target)
            if target.endswith(".json") or path.is_file():
                loaded = recipes.load(recipes.parse_text(path.read_text(encoding="utf-8")))
                playbook, source = None, path
            else:
                loaded, playbook, source = service.load_for_replay(None, target, None)
            args = _parse_args(pairs)
            with click.progressbar(length=len(loaded.steps), label=loaded.title,
                                   file=sys.stderr, show_pos=True) as bar:
                done = [0]

                def progress(index: int, total: int, message: str) -> None:
                    if index > done[0]:
                        bar.update(index - done[0])
                        done[0] = index

                report, _run = replay(loaded, args, dry_run, identity, playbook,
                                      Hooks(progress=progress), source=source, door="cli")
                report.pop("httpStatus", None)
        except (DomainError, OSError) as exc:
            db.session.rollback()
            message = exc.message if isinstance(exc, DomainError) else str(exc)
            for problem in exc.errors if isinstance(exc, DomainError) else []:
                message += f"\n  {problem.get('param')}: {problem.get('message')}"
            raise click.ClickException(message) from exc
        if as_json:
            click.echo(json.dumps(report, indent=2, default=str))
        else:
            for detail in report["details"]:
                line = f"{detail.get('status', '?'):8} {detail.get('name')}"
                if detail.get("planned"):
                    line += f"  planned {json.dumps(detail['planned'])}"
                if detail.get("error"):
                    line += f"  — {detail['error']}"
                click.echo(line)
            steps = report["steps"]
            click.echo(f"{report['status']}: {steps['succeeded']}/{steps['total']} steps "
                       f"succeeded, {steps['failed']} failed · run {report['run']}")
            if report.get("error"):
                click.echo(report["error"], err=True)
        if report.get("rule"):
            click.echo(f"refused by rule {report['rule']}: {report.get('next')}", err=True)
        if not report["ok"]:
            raise SystemExit(1)

    app.cli.add_command(group)

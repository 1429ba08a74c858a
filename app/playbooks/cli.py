"""``flask playbooks ...``: the machine operator's own command line for playbooks.

``replay SESSION|recipe.json --arg k=v [--dry-run] [--user HANDLE]``
    A recipe file may live anywhere (the data-directory confinement protects the HTTP endpoint,
    not the machine's owner). Upstream steps run as the operator; Harmonic steps (MCP tools)
    need ``--user`` to say whose identity they use. The rules are every door's: for real, only
    approved versions (a file in the playbooks data folder's ``reviewed/``, or a version
    approved on its page or with ``approve``) or the operator's own taught session, and only
    after a ``--dry-run`` with the same arguments, which says whether that real run would be
    allowed. Progress is shown as a bar, one tick per step; the exit status is 0 when the run
    succeeded, 1 otherwise.
``generate SESSION``
    Make the session's capture a new draft recipe version (stopping a teach session does that
    already, on every door).
``show SESSION [--version V]``
    The review of a version: its state, variables, bounds, the caps in force (and which the
    recipe raises above the defaults), its write steps and its diff from the version before.
``approve SESSION [--version V] [--yes] [--note TEXT]``
    The operator approves a draft or reviewed version after reading its review: it is written
    into ``reviewed/``, exactly as copying the file there by hand would approve it (seed 000
    §6.9), and recorded in the playbook's audit as the operator's. This is how a local
    install's one person (``PLAYBOOK_AUTH=off``, no studio, no second member) approves what
    they taught.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from flask import Flask
from flask.cli import AppGroup

from app.core.identity import Identity
from app.extensions import db
from app.playbooks import governance, service, settings
from app.playbooks import recipe as recipes
from app.playbooks.replay import Hooks, real_run_words, replay
from app.services import accounts
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
        identity = None
        try:
            if handle:
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
            caps = ", ".join(f"{key} {cap['value']:g} ({cap['source']})"
                             for key, cap in (report.get("caps") or {}).items())
            if caps:
                click.echo(f"caps: {caps}")
            if report.get("realRun"):
                click.echo(real_run_words(report["realRun"]))
            if report.get("error"):
                click.echo(report["error"], err=True)
        if report.get("rule"):
            click.echo(f"refused by rule {report['rule']}: {report.get('next')}", err=True)
        if not report["ok"]:
            raise SystemExit(1)

    @group.command("generate")
    @click.argument("session")
    def generate_command(session: str) -> None:
        """Make SESSION's capture a new draft recipe version."""
        playbook = _session(session)
        try:
            raw = service.generate_recipe(playbook, None)
        except DomainError as exc:
            db.session.rollback()
            raise click.ClickException(exc.message) from exc
        required = [k for k, v in (raw.get("vars") or {}).items() if v is None]
        click.echo(f"draft {raw['name']}@{raw.get('version')}: {len(raw['steps'])} steps, "
                   f"written to {service.recipe_path(playbook)}"
                   + (f"; required at replay: {', '.join(required)}" if required else ""))

    @group.command("show")
    @click.argument("session")
    @click.option("--version", default=None, help="A version (1.2.3); the newest by default.")
    def show_command(session: str, version: str | None) -> None:
        """Print the review of SESSION's recipe version."""
        _echo_review(_version(_session(session), version))

    @group.command("approve")
    @click.argument("session")
    @click.option("--version", default=None, help="A version (1.2.3); the newest by default.")
    @click.option("--note", default="", help="What you checked.")
    @click.option("--yes", is_flag=True, help="Approve without asking (after reading it).")
    def approve_command(session: str, version: str | None, note: str, yes: bool) -> None:
        """Approve SESSION's recipe version as the machine's operator (into reviewed/)."""
        playbook = _session(session)
        chosen = _version(playbook, version)
        _echo_review(chosen)
        if not yes:
            click.confirm(f"Approve version {chosen.version} so it replays for real?",
                          abort=True)
        try:
            path = governance.approve_as_operator(playbook, chosen, settings.current().data_dir,
                                                  note)
        except DomainError as exc:
            db.session.rollback()
            raise click.ClickException(exc.message) from exc
        click.echo(f"approved {chosen.version}: {path}")

    app.cli.add_command(group)


def _session(reference: str) -> Any:
    playbook = service.find_session(reference, None)
    if playbook is None:
        raise click.ClickException(f"no teach session {reference}")
    return playbook


def _version(playbook: Any, version: str | None) -> Any:
    try:
        return governance.find_version(playbook, version)
    except DomainError as exc:
        raise click.ClickException(exc.message) from exc


def _echo_review(version: Any) -> None:
    """The review a reviewer reads on the playbook's page, as text."""
    review = governance.review_of(version)
    click.echo(f"version {version.version} ({version.state}), by {version.author}")
    click.echo("variables:")
    for var in review["variables"] or [{"name": "(none)", "default": None,
                                        "required": False}]:
        click.echo(f"  {var['name']}" + (" (required)" if var["required"] else
                                         f" = {json.dumps(var['default'])}"))
    click.echo("bounds:")
    for bound in review["bounds"]:
        click.echo(f"  {bound['step']}: {bound['check']} ({bound['source']})")
    click.echo("caps (every write step):")
    for cap in review["caps"]:
        said = "default" if cap["source"] == "default" else "declared by the recipe"
        if cap["raised"]:
            said += (f", RAISES the default {cap['default']:g}" if cap["default"] is not None
                     else ", beyond the defaults")
        click.echo(f"  {cap['key']} {cap['value']:g}: {said}")
    click.echo("write steps:")
    for write in review["writes"] or [{"name": "(none: the recipe only reads)", "call": "",
                                       "confirm": True, "bounded": True}]:
        click.echo(f"  {write['name']} {write['call']}".rstrip()
                   + ("" if write["confirm"] else ", NO confirm")
                   + ("" if write["bounded"] else ", no bounds of its own"))
    before = review["previous"]
    click.echo(f"difference from {before.version if before is not None else 'nothing'}:")
    click.echo(review["diff"] or "(no difference)")

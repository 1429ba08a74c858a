"""Command-line commands (``flask users``, ``flask tokens``, ``flask seed-demo``, ...).

Feature packages add their own groups in their ``init_app``; this module holds the core ones.
"""

from __future__ import annotations

import click
from flask import Flask
from flask.cli import AppGroup

from app.extensions import db
from app.services import accounts, errors, seed, tokens


def _fail(exc: errors.DomainError) -> None:
    raise click.ClickException(str(exc))


def register_cli(app: Flask) -> None:
    users = AppGroup("users", help="Manage people and agents.")
    tokens_group = AppGroup("tokens", help="Manage API tokens.")

    @users.command("create")
    @click.option("--handle", required=True, help="Unique handle, [a-z0-9-_].")
    @click.option("--name", default=None, help="Display name (defaults to the handle).")
    @click.option("--email", default=None)
    @click.option("--password", default=None, help="Omit for an agent that signs in by token.")
    @click.option("--agent", is_flag=True, help="Create an AI agent rather than a person.")
    @click.option("--owner", default=None,
                  help="Handle of the person the agent belongs to (they see and revoke it in "
                       "their settings).")
    def create_user(handle: str, name: str | None, email: str | None, password: str | None,
                    agent: bool, owner: str | None) -> None:
        """Create a user."""
        try:
            if owner is not None and not agent:
                raise errors.Invalid("--owner is for agents: add --agent")
            owner_user = accounts.get_user(owner) if owner is not None else None
            user = accounts.create_user(handle=handle, name=name or handle, email=email,
                                        password=password,
                                        user_type="ai_agent" if agent else "human")
            if owner_user is not None:
                user.owner_id = owner_user.id
            db.session.commit()
        except errors.DomainError as exc:
            _fail(exc)
        click.echo(f"created user {user.handle}")

    @tokens_group.command("create")
    @click.option("--user", "handle", required=True, help="Handle of the token's owner.")
    @click.option("--name", default="cli", help="A label to recognise the token by.")
    @click.option("--scopes", default="read,write", help="Comma list of read, write.")
    @click.option("--expires", default="90d", help="Lifetime like 30d, 12h, 1w, or 'never'.")
    def create_token(handle: str, name: str, scopes: str, expires: str) -> None:
        """Create an API token; its plaintext is the last line of output, shown once."""
        try:
            user = accounts.get_user(handle)
            token, plaintext = tokens.create_token(user, name=name, scopes=scopes,
                                                   expires=expires)
            db.session.commit()
        except errors.DomainError as exc:
            _fail(exc)
        click.echo(f"token {token.prefix}… for {user.handle}, scopes {token.scopes}, "
                   f"expires {token.expires_at.isoformat() if token.expires_at else 'never'}")
        click.echo(plaintext)

    @app.cli.command("seed-demo")
    def seed_demo() -> None:
        """Create (once) a demo user, the studio 'demo' and a few notes; print a fresh token."""
        plaintext = seed.seed_demo()
        db.session.commit()
        click.echo("demo user: demo (password: demo-password)")
        click.echo(f"HARMONIC_API_TOKEN={plaintext}")

    app.cli.add_command(users)
    app.cli.add_command(tokens_group)

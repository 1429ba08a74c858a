"""Wiring notifications into the app: pages and actions, the action observer, the listeners of
closes and reminders, the header's unread badge, enqueueing committed webhook deliveries and
emails after each request, the queue steps that send them, the deadline sweep every worker
runs, ``flask notifications sweep`` and ``flask mail receive|digest|sweep``."""

from __future__ import annotations

import importlib
import sys
import time

import click
from flask import Flask, Response, g

from app.core import kept
from app.notifications import (
    closings,
    inbox,
    mail_pages,
    mailing,
    outcomes,
    pages,
    replies,
    settings,
    webhooks,
)
from app.notifications.notify import send_committed
from app.workflows import every

# Imported for their registrations: the actions, and the observer of every action.
REGISTERS = ("app.notifications.actions", "app.notifications.events",
             "app.notifications.closings", "app.notifications.outcomes")


def init_app(flask_app: Flask) -> None:
    for name in REGISTERS:
        importlib.import_module(name)

    flask_app.register_blueprint(pages.bp)
    flask_app.register_blueprint(mail_pages.bp)
    webhooks.register_step()
    mailing.register_step()
    # Deadlines act at their time whoever is looking: every worker looks every few seconds.
    every("notifications.deadlines", lambda: settings.get_float("DEADLINES_SWEEP_SECONDS"),
          closings.sweep)
    # So do outcomes' review dates, on the same clock.
    every("notifications.reviews", lambda: settings.get_float("DEADLINES_SWEEP_SECONDS"),
          outcomes.sweep)

    @flask_app.context_processor
    def _badge() -> dict[str, object]:
        def inbox_unread() -> int:
            # Kept per process, forgotten when one of the person's notifications is written or
            # read (inbox.BADGE): every HTML page shows it.
            user = g.get("user")
            if user is None:
                return 0
            copies = kept.of(flask_app, inbox.BADGE)
            found = copies.get(str(user.id)) if copies is not None else None
            if found is None:
                fetched, found = time.monotonic(), inbox.unread_count(user)
                if copies is not None:
                    copies.put(str(user.id), found, fetched)
            return int(found)

        return {"inbox_unread": inbox_unread}

    @flask_app.after_request
    def _enqueue_deliveries(response: Response) -> Response:
        send_committed()
        return response

    @flask_app.cli.group("notifications")
    def group() -> None:
        """Notifications and webhooks."""

    @group.command("sweep")
    def sweep() -> None:
        """Act on deadlines that have passed, reminders and review dates that are due (as every
        worker does), and enqueue webhook deliveries that were committed but never enqueued."""
        closed, reminded = closings.sweep()
        click.echo(f"closed {closed}, reminded of {reminded}")
        click.echo(f"review dates told: {outcomes.sweep()}")
        count = webhooks.sweep()
        click.echo(f"enqueued {count} webhook deliver{'y' if count == 1 else 'ies'}")

    @flask_app.cli.group("mail")
    def mail_group() -> None:
        """Notifications by email: replies, the daily digest."""

    @mail_group.command("receive")
    @click.option("--recipient", default=None,
                  help="The envelope recipient (Postfix's ${recipient}), if the MTA passes it.")
    def receive(recipient: str | None) -> None:
        """Read one email on standard input (as an MTA's pipe hands it over) and add it as a
        comment by its sender; exit 77 with the reason on standard error when refused."""
        try:
            done = replies.receive(sys.stdin.buffer.read(), recipient)
        except replies.Refused as exc:
            click.echo(f"refused: {exc.message}", err=True)
            sys.exit(77)  # EX_NOPERM (sysexits.h): the MTA bounces the message
        click.echo(f"comment by @{done.handle} at {done.location}")

    @mail_group.command("digest")
    def digest() -> None:
        """Send each person who chose the daily digest the day's notifications in one email
        (once a day: run it daily, e.g. from cron; a second run the same day sends nothing)."""
        count = mailing.digest()
        click.echo(f"{count} digest{'s' if count != 1 else ''} to send")

    @mail_group.command("sweep")
    def mail_sweep() -> None:
        """Enqueue emails that were committed but never enqueued."""
        count = mailing.sweep()
        click.echo(f"enqueued {count} email{'s' if count != 1 else ''}")

"""Wiring notifications into the app: pages and actions, the action observer, the listeners of
closes and reminders, the header's unread badge, enqueueing committed webhook deliveries after
each request, the queue step that sends them, the deadline sweep every worker runs, and
``flask notifications sweep``."""

from __future__ import annotations

import importlib
import logging

import click
from flask import Flask, Response, g

from app.notifications import closings, inbox, pages, settings, webhooks
from app.workflows import every

log = logging.getLogger("harmonic.notifications")

# Imported for their registrations: the actions, and the observer of every action.
REGISTERS = ("app.notifications.actions", "app.notifications.events",
             "app.notifications.closings")


def init_app(flask_app: Flask) -> None:
    for name in REGISTERS:
        importlib.import_module(name)

    flask_app.register_blueprint(pages.bp)
    webhooks.register_step()
    # Deadlines act at their time whoever is looking: every worker looks every few seconds.
    every("notifications.deadlines", lambda: settings.get_float("DEADLINES_SWEEP_SECONDS"),
          closings.sweep)

    @flask_app.context_processor
    def _badge() -> dict[str, object]:
        def inbox_unread() -> int:
            user = g.get("user")
            return inbox.unread_count(user) if user is not None else 0

        return {"inbox_unread": inbox_unread}

    @flask_app.after_request
    def _enqueue_deliveries(response: Response) -> Response:
        ids = webhooks.committed_ids()
        if ids:
            try:
                webhooks.enqueue(ids)
            except Exception:  # the rows are durable: `flask notifications sweep` (or the next
                # delivery step) enqueues them later; the change itself has committed.
                log.exception("could not enqueue %d webhook deliveries", len(ids))
        return response

    @flask_app.cli.group("notifications")
    def group() -> None:
        """Notifications and webhooks."""

    @group.command("sweep")
    def sweep() -> None:
        """Act on deadlines that have passed and reminders that are due (as every worker does),
        and enqueue webhook deliveries that were committed but never enqueued."""
        closed, reminded = closings.sweep()
        click.echo(f"closed {closed}, reminded of {reminded}")
        count = webhooks.sweep()
        click.echo(f"enqueued {count} webhook deliver{'y' if count == 1 else 'ies'}")

"""``flask search-reindex``: empty the search index and index every item again.

Items are indexed as they are written (``app.search.index``); this command is for rows that
predate the index (``bin/dev`` runs it after migrating, ``bin/serve --upgrade`` with
``--if-empty``), for the
workflow playbooks in ``WORKFLOWS_DIR`` (files, not rows: re-run it after editing them), and
for repairs. It runs in one transaction: searches see the old index until it commits.
"""

from __future__ import annotations

import time

import click
from flask import Flask

import app.workflows as workflows
from app.extensions import db
from app.search import index


def reindex(if_empty: bool = False) -> int | None:
    """Rebuild the index in one transaction (in an app context); None when ``if_empty`` and
    the index already holds rows."""
    conn = db.session.connection()
    if if_empty and not index.is_empty(conn):
        return None
    count = index.rebuild(conn, [(entry.name, entry.description, entry.text)
                                 for entry in workflows.entries()])
    db.session.commit()
    return count


def register(flask_app: Flask) -> None:
    @flask_app.cli.command("search-reindex")
    @click.option("--if-empty", is_flag=True,
                  help="Only when the index holds nothing yet (after the migration that made "
                       "it); bin/serve --upgrade runs this.")
    def search_reindex(if_empty: bool) -> None:
        """Rebuild the search index from every note, comment, decision, option, commitment,
        floorplan, playbook and workflow."""
        started = time.perf_counter()
        count = reindex(if_empty)
        if count is None:
            click.echo("the index already holds items: nothing to do (drop --if-empty to "
                       "rebuild it)")
            return
        click.echo(f"indexed {count} items in {time.perf_counter() - started:.2f}s")

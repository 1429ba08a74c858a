"""``flask search-reindex``: empty the search index and index every item again.

Items are indexed as they are written (``app.search.index``); this command is for rows that
predate the index (``bin/dev`` and ``bin/serve --upgrade`` run it after migrating), for the
workflow playbooks in ``WORKFLOWS_DIR`` (files, not rows: re-run it after editing them), and
for repairs. It runs in one transaction: searches see the old index until it commits.
"""

from __future__ import annotations

import time

import click
from flask import Flask

from app.extensions import db
from app.search import index


def _workflows() -> list[tuple[str, str, str]]:
    import app.workflows as workflows

    return [(entry.name, entry.description, entry.text) for entry in workflows.entries()]


def register(flask_app: Flask) -> None:
    @flask_app.cli.command("search-reindex")
    def search_reindex() -> None:
        """Rebuild the search index from every note, comment, decision, option, commitment,
        floorplan, playbook and workflow."""
        started = time.perf_counter()
        count = index.rebuild(db.session.connection(), _workflows())
        db.session.commit()
        click.echo(f"indexed {count} items in {time.perf_counter() - started:.2f}s")

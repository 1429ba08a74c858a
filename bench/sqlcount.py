"""Count the SQL statements an app runs: SQLAlchemy's ``before_cursor_execute`` event (with
PostgreSQL's pipeline of reads turned off meanwhile, so that every statement passes it).

Imported by the page and MCP benchmarks and by ``tests/core/test_query_counts.py``; it has no
side effects on import (unlike ``harness``), so tests can use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def counting(app: Any) -> Iterator[list[str]]:
    """Collect the SQL statements run on the app's engine meanwhile, but for the change feed
    relay's polls: its thread reads the outbox on the same engine whenever it is due, whatever
    the counted request does."""
    from sqlalchemy import event

    from app.core.feed import on_relay_thread
    from app.extensions import db

    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not on_relay_thread():
            statements.append(statement)

    with app.app_context():
        engine = db.engine
    # PostgreSQL's pipelined reads (app.db.read_many) go to the driver past SQLAlchemy's
    # events: while counting, they run one after another, so each is seen.
    pipelined = app.config.get("HARMONIC_DB_PIPELINE", True)
    app.config["HARMONIC_DB_PIPELINE"] = False
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)
        app.config["HARMONIC_DB_PIPELINE"] = pipelined


def page_statements(app: Any, token: str, path: str, accept: str, tries: int = 3) -> int:
    """How many statements one GET of ``path`` runs with warm caches: the fewest of ``tries``
    GETs after a first one warmed them. A cache may be cold again for one GET by timing alone
    (the token's copy is used only while this process's change-feed relay is caught up, which
    a busy machine can delay), and that statement is the cache's, not the page's."""
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}", "Accept": accept}
    warm = client.get(path, headers=headers)  # token last use, compiled templates
    assert warm.status_code == 200, (path, warm.status_code)
    counts = []
    for _ in range(tries):
        with counting(app) as statements:
            response = client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:500])
        counts.append(len(statements))
    return min(counts)

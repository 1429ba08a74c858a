"""No N+1: the SQL statements a heavy page runs do not grow with the number of items it shows.

The data comes from the benchmark's own seeder (``bench/seeds.py``): a decision with options and
voters, a commitment they joined, a note they read with comments, pins and links. It is made
twice, small then larger; item pages are compared item to item, studio pages before and after.
Statements are counted with the benchmark's own counter (``bench/sqlcount.py``), per format.
"""

from __future__ import annotations

import time

import pytest
from flask import Flask

from app.core import feed
from app.extensions import db
from bench.seeds import busy_studio
from bench.sqlcount import counting
from bench.sqlcount import page_statements as statements

pytestmark = pytest.mark.data_layer

FORMATS = ("text/markdown", "text/html")
ITEM_PAGES = ("decision", "commitment", "note")
STUDIO_PAGES = ("studio", "team", "backlinks", "cycle")


@pytest.fixture
def demo_token(app: Flask) -> str:
    from app.services import seed

    with app.app_context():
        token = seed.seed_demo()
        db.session.commit()
    return token


def test_heavy_pages_run_as_many_statements_for_many_items_as_for_few(
        app: Flask, demo_token: str) -> None:
    small = busy_studio(app, 2, prefix="s")
    before = {(name, accept): statements(app, demo_token, small[name], accept)
              for name in ITEM_PAGES + STUDIO_PAGES for accept in FORMATS}
    large = busy_studio(app, 6, prefix="l")  # three times the options, voters, comments...
    grew = []
    for name in ITEM_PAGES + STUDIO_PAGES:
        for accept in FORMATS:
            after = statements(app, demo_token, large[name], accept)
            if after > before[(name, accept)]:
                grew.append(f"{name} as {accept}: {before[(name, accept)]} → {after}")
    assert not grew, "statements grow with the items shown (N+1): " + "; ".join(grew)


def test_the_larger_pages_really_show_more(app: Flask, demo_token: str) -> None:
    """The comparison above means something only if the larger data is on the pages."""
    large = busy_studio(app, 6, prefix="m")
    client = app.test_client()
    headers = {"Authorization": f"Bearer {demo_token}", "Accept": "text/markdown"}
    decision = client.get(large["decision"], headers=headers).get_data(as_text=True)
    team = client.get(large["team"], headers=headers).get_data(as_text=True)
    assert all(f"Option {i}" in decision for i in range(6))
    assert all(f"Person m{i}" in team for i in range(15))


def test_the_counter_leaves_the_change_feeds_polls_out(app: Flask) -> None:
    """The change feed's relay reads the outbox on the app's engine from its own thread: a
    count over a request must not take in a poll that happened to fall inside it. Nothing is
    asked here while the counter runs for three of SQLite's poll intervals."""
    feed.ensure_started(app)  # as the first request with a token starts it
    with counting(app) as counted:
        time.sleep(3 * feed.SQLITE_POLL_SECONDS)
    assert counted == []

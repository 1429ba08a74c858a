"""The header's unread badge is kept per process (``inbox.badge_count``, ``app.core.kept``): a
person's HTML pages read the count once, and a notification written or read for them shows at
once in the process that wrote it and in every other one through the change feed."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest
from flask import Flask

from app.notifications import inbox
from bench.sqlcount import counting
from tests.helpers import join_studio
from tests.mcp.conftest import gunicorn

pytestmark = pytest.mark.data_layer

HTML = "text/html"


def _badge(html: str) -> int:
    found = re.search(r'class="inbox-link" data-unread="(\d+)"', html)
    assert found is not None, html[:500]
    return int(found.group(1))


def _page(app: Flask, agent: Any) -> tuple[int, int]:
    """(the badge's count, the statements that read the unread count) of one HTML page."""
    with counting(app) as statements:
        answer = agent.get("/studios/team", accept=HTML)
    assert answer.status_code == 200
    reads = sum("count(notifications.id)" in s for s in statements)
    return _badge(answer.get_data(as_text=True)), reads


def _mention(studio: Any, who: str, n: int) -> None:
    made = studio.act("/studios/team/note", "create_note", text=f"{n}: @{who} look")
    assert made.status_code == 201, made.get_data(as_text=True)


def test_the_count_is_read_once_and_changes_show_at_once(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    assert _page(app, bob) == (0, 1)
    assert _page(app, bob) == (0, 0)  # kept
    _mention(studio, "bob", 1)
    assert _page(app, bob) == (1, 1)  # the write forgot the copy
    _mention(studio, "bob", 2)
    assert _page(app, bob) == (2, 1)
    assert _page(app, bob) == (2, 0)
    listed = bob.get("/inbox").get_data(as_text=True)
    first = re.search(r"^\| ([0-9a-f]{8}) \|", listed, re.M)
    assert first is not None, listed
    assert bob.act("/inbox", "mark_read", id=first.group(1)).status_code == 200
    assert _page(app, bob) == (1, 1)
    assert bob.act("/inbox", "mark_all_read").status_code == 200
    assert _page(app, bob) == (0, 1)
    # Another person's notification leaves bob's copy alone.
    carol = join_studio(make_agent, "carol")
    _mention(studio, "carol", 3)
    assert _page(app, bob) == (0, 0)
    assert _page(app, carol) == (1, 1)


def test_with_the_cache_off_every_page_reads_the_count(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    app.config["HARMONIC_CACHE_SECONDS"] = 0.0
    app.extensions.pop(f"harmonic.kept.{inbox.BADGE}", None)
    try:
        assert _page(app, bob) == (0, 1)
        assert _page(app, bob) == (0, 1)
    finally:
        app.config["HARMONIC_CACHE_SECONDS"] = 60.0
        app.extensions.pop(f"harmonic.kept.{inbox.BADGE}", None)


def test_a_notification_reaches_every_server_process_through_the_change_feed(
        app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    headers = {"Authorization": f"Bearer {bob.token}", "Accept": HTML}
    # An hour's bound: only the change feed can make the other processes forget the count.
    with gunicorn(app, workers=2, threads=4, HARMONIC_CACHE_SECONDS="3600") as base, \
            httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        # Enough requests over fresh connections that both workers keep bob's count.
        for _ in range(24):
            answer = http.get("/studios/team", headers={"Connection": "close"})
            assert answer.status_code == 200 and _badge(answer.text) == 0
        # Written by this (test) process: the servers hear of it only through the outbox.
        _mention(studio, "bob", 1)
        time.sleep(1.0)  # SQLite's relays read the outbox four times a second
        for _ in range(24):
            answer = http.get("/studios/team", headers={"Connection": "close"})
            assert answer.status_code == 200 and _badge(answer.text) == 1

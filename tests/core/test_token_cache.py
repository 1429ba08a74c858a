"""Resolved tokens are reused per process (``app.core.token_cache``): a busy agent's requests
skip the token query, a revocation counts at once in the process that made it and reaches
every other server process through the change feed, well before the cache's own bound."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from flask import Flask

from app.core import kept, token_cache
from app.extensions import db
from app.models import ApiToken
from bench.sqlcount import counting
from config import SettingError, build_config
from tests.mcp.conftest import gunicorn

pytestmark = pytest.mark.data_layer

MD = "text/markdown"


def _token_reads(app: Flask, token: str, path: str = "/studios/team") -> int:
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}", "Accept": MD}
    with counting(app) as statements:
        assert client.get(path, headers=headers).status_code == 200
    return sum(s.lstrip().upper().startswith("SELECT") and "FROM api_tokens" in s
               for s in statements)


def _caught_up(app: Flask) -> kept.Kept[Any]:
    """The app's token copies, once its change feed's relay has caught up: until then no copy
    is used (a relay just started on PostgreSQL is connecting to LISTEN; on a loaded machine
    that can outlast a request)."""
    copies = kept.of(app, token_cache.TOPIC)
    assert copies is not None
    deadline = time.monotonic() + 10
    while not copies.relay.fresh():
        assert time.monotonic() < deadline, "the change feed's relay never caught up"
        time.sleep(0.05)
    return copies


@contextmanager
def _cache_seconds(app: Flask, seconds: float) -> Iterator[None]:
    """The app's token cache rebuilt with ``seconds``, then back to the default."""
    app.config["HARMONIC_CACHE_SECONDS"] = seconds
    app.extensions.pop(f"harmonic.kept.{token_cache.TOPIC}", None)
    try:
        yield
    finally:
        app.config["HARMONIC_CACHE_SECONDS"] = 60.0
        app.extensions.pop(f"harmonic.kept.{token_cache.TOPIC}", None)


def test_a_token_just_used_is_not_read_again(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    with _cache_seconds(app, 60.0):
        _caught_up(app)
        assert _token_reads(app, studio.token) == 1
        assert _token_reads(app, studio.token) == 0


def test_a_copy_read_before_a_forgetting_is_not_kept(app: Flask) -> None:
    """A token resolved while another thread revokes it: the revocation forgets the copies as
    it commits, and the copy the first thread read before is not kept after."""
    copies = _caught_up(app)
    read_before = time.monotonic()
    copies.forget()
    copies.put("digest", "as it was", read_before)
    assert copies.get("digest") is None
    copies.put("digest", "as it is", time.monotonic())
    assert copies.get("digest") == "as it is"


def test_with_the_cache_off_every_request_reads_the_token(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    with _cache_seconds(app, 0.0):
        assert _token_reads(app, studio.token) == 1
        assert _token_reads(app, studio.token) == 1


def test_expiry_is_honoured_on_a_cached_token(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    assert _token_reads(app, studio.token) == 1  # now cached
    with app.app_context():
        # A bulk UPDATE, not an ORM change: the cache notices both kinds.
        db.session.execute(db.update(ApiToken).values(expires_at=db.func.now()))
        db.session.commit()
    answer = app.test_client().get("/studios/team", headers={
        "Authorization": f"Bearer {studio.token}", "Accept": MD})
    assert answer.status_code == 401 and "expired" in answer.get_data(as_text=True)


def test_a_revocation_in_this_process_counts_at_once(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    agent = make_agent("alice")
    assert agent.get("/studios/team").status_code == 200  # cached now
    with app.app_context():
        token_id = str(db.session.scalars(db.select(ApiToken.id).where(
            ApiToken.prefix == agent.token[:12])).one())
    assert studio.act("/u/alice/settings/tokens", "revoke_api_token",
                      token_id=token_id).status_code == 200
    answer = agent.get("/studios/team")
    assert answer.status_code == 401 and "revoked" in answer.get_data(as_text=True)


def test_a_revocation_reaches_every_server_process_through_the_change_feed(
        app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    agent = make_agent("alice")
    headers = {"Authorization": f"Bearer {agent.token}", "Accept": MD}
    # An hour's bound: only the change feed can make the other processes forget the token.
    with gunicorn(app, workers=2, threads=4, HARMONIC_CACHE_SECONDS="3600") as base, \
            httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        # Enough requests over fresh connections that both workers have the token cached.
        for _ in range(24):
            assert http.get("/studios/team", headers={"Connection": "close"}).status_code == 200
        with app.app_context():
            token_id = str(db.session.scalars(db.select(ApiToken.id).where(
                ApiToken.prefix == agent.token[:12])).one())
        # Revoked by this (test) process: the servers hear of it only through the outbox.
        revoked = studio.act("/u/alice/settings/tokens", "revoke_api_token", token_id=token_id)
        assert revoked.status_code == 200
        time.sleep(1.0)  # SQLite's relays read the outbox four times a second
        for _ in range(24):
            answer = http.get("/studios/team", headers={"Connection": "close"})
            assert answer.status_code == 401 and "revoked" in answer.text, answer.text[:300]


@pytest.mark.parametrize("value", ["3601", "-1", "soon"])
def test_a_cache_longer_than_an_hour_is_refused_by_name(value: str, tmp_path,
                                                         monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARMONIC_CACHE_SECONDS", value)
    with pytest.raises(SettingError, match="HARMONIC_CACHE_SECONDS"):
        build_config(str(tmp_path))

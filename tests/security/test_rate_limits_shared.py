"""Rate limits shared by processes: two gunicorn servers keep their budgets in one Redis, so
what one process spent the other refuses."""

from __future__ import annotations

import uuid

import httpx
import pytest
import redis
from flask import Flask

from tests.mcp.conftest import gunicorns

pytestmark = pytest.mark.slow

REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def prefix() -> str:
    """A key prefix of this test run's own; its keys are deleted afterwards."""
    name = f"harmonic-test-{uuid.uuid4().hex[:12]}"
    yield name
    client = redis.Redis.from_url(REDIS)
    for key in client.scan_iter(f"{name}*"):
        client.delete(key)


def test_the_second_process_refuses_once_the_shared_budget_is_spent(
        app: Flask, studio, prefix: str) -> None:  # type: ignore[no-untyped-def]
    settings = {"HARMONIC_RATE_LIMIT_STORAGE": REDIS, "HARMONIC_RATE_LIMIT_PREFIX": prefix,
                "HARMONIC_RATE_LIMIT": "1", "HARMONIC_RATE_BURST": "3"}
    headers = {"Authorization": f"Bearer {studio.token}", "Accept": "application/json"}
    with gunicorns(app, settings, settings) as (first, second):
        spent = [httpx.get(first + "/studios", headers=headers).status_code for _ in range(3)]
        assert spent == [200, 200, 200]
        refused = httpx.get(second + "/studios", headers=headers)
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        assert "too many requests for this token" in refused.json()["error"]["message"]
        # /mcp on the first process refuses too, with its JSON-RPC body.
        ping = httpx.post(first + "/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "ping"},
                          headers={**headers, "Accept": "application/json, text/event-stream"})
        assert ping.status_code == 429
        assert ping.json()["error"]["data"]["reason"] == "rate_limited"
    assert any(redis.Redis.from_url(REDIS).scan_iter(f"{prefix}*"))  # the budget lived there

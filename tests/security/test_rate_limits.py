"""Per-token rate limits: 429 with Retry-After on every agent door, one bucket per token."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from app.web.ratelimit import window

RPC = {"jsonrpc": "2.0", "id": 1, "method": "get_walls", "params": {}}
MCP_PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture
def low_limit(app: Flask, monkeypatch: pytest.MonkeyPatch) -> int:
    """A limit of 1 per minute with a burst of 3, and empty buckets. The slow refill keeps the
    tests independent of how long a request takes on a busy machine (at 60 per minute, three
    requests taking over a second would earn the fourth its unit back)."""
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST", 3)
    app.extensions.pop("harmonic.ratelimit", None)
    yield 3
    app.extensions.pop("harmonic.ratelimit", None)


def doors(agent: Any) -> dict[str, Any]:
    """One request per agent door, each sent with the agent's Bearer token."""
    client, headers = agent.client, agent.headers("application/json")
    mcp = {**headers, "Accept": "application/json, text/event-stream",
           "Content-Type": "application/json"}
    return {
        "page": lambda: client.get("/studios", headers=headers),
        "action": lambda: client.post("/studios/team/note/actions/create_note",
                                      json={"text": "x"}, headers=headers),
        "mcp": lambda: client.post("/mcp", json=MCP_PING, headers=mcp),
        "rpc": lambda: client.post("/rpc", json=RPC, headers=headers),
        "design-model": lambda: client.post("/design-model/rpc", json=RPC, headers=headers),
    }


@pytest.mark.parametrize("door", ["page", "action", "mcp", "rpc", "design-model"])
def test_every_agent_door_answers_429_with_retry_after(studio, make_agent, low_limit: int,
                                                       door: str) -> None:  # type: ignore[no-untyped-def]
    send = doors(studio)[door]
    statuses = [send().status_code for _ in range(low_limit)]
    assert 429 not in statuses and all(s < 500 for s in statuses), statuses
    refused = send()
    assert refused.status_code == 429, refused.get_data(as_text=True)
    assert int(refused.headers["Retry-After"]) >= 1
    if door == "mcp":  # a JSON-RPC error, so that MCP clients surface the reason
        assert refused.json["jsonrpc"] == "2.0" and refused.json["id"] == MCP_PING["id"]
        assert refused.json["error"]["code"] == -32029
        assert refused.json["error"]["data"] == {
            "reason": "rate_limited", "retryAfter": int(refused.headers["Retry-After"])}
        assert "too many requests for this token" in refused.json["error"]["message"]
    else:
        assert refused.json["error"]["kind"] == "rate_limited"
    # The bucket is the token's: another token of another user is untouched.
    other = make_agent("bob")
    assert doors(other)["page"]().status_code == 200


def test_a_refused_action_writes_nothing(app: Flask, studio, low_limit: int) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models import Note

    for _ in range(low_limit):
        studio.get("/studios/team")
    refused = studio.act("/studios/team/note", "create_note", text="over the limit")
    assert refused.status_code == 429
    with app.app_context():
        assert db.session.query(Note).count() == 0


def test_in_process_hops_are_not_counted(app: Flask, studio, client,
                                                              low_limit: int) -> None:  # type: ignore[no-untyped-def]
    # navigate + execute_action dispatch into our own routes: one /mcp request, one unit.
    from tests.mcp.conftest import Http
    from tests.mcp.test_http import _FlaskClient

    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()  # initialize and notifications/initialized: two units
    result = http.tool("navigate", path="/studios/team")  # one unit, several in-process hops
    assert not result.get("isError"), result
    assert http.post(MCP_PING).status_code == 429


def test_limit_zero_turns_limiting_off(app: Flask, studio, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT", 0)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST", 1)
    assert all(studio.get("/studios").status_code == 200 for _ in range(5))


def test_the_window_allows_the_burst_and_the_rate_in_the_long_run() -> None:
    item = window(1, 3)  # the fixture's tier: 3 at once, then one a minute
    assert (item.amount, item.get_expiry()) == (3, 180)
    item = window(12000, 2000)  # the token default: 2000 in any 10 seconds = 12000 a minute
    assert (item.amount, item.get_expiry()) == (2000, 10)
    assert window(60000, 1).get_expiry() == 1  # never below one second


def test_a_person_s_tokens_share_the_person_budget(app: Flask, make_agent,  # type: ignore[no-untyped-def]
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT_PERSON", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST_PERSON", 3)
    app.extensions.pop("harmonic.ratelimit", None)
    try:
        first, second = make_agent("alice"), make_agent("alice")  # two tokens, one person
        assert [first.get("/studios").status_code for _ in range(2)] == [200, 200]
        assert second.get("/studios").status_code == 200
        refused = second.get("/studios", accept="application/json")
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        assert "too many requests for this person" in refused.json["error"]["message"]
        assert make_agent("bob").get("/studios").status_code == 200  # another person
    finally:
        app.extensions.pop("harmonic.ratelimit", None)


def test_a_person_s_agents_and_tokens_share_the_person_budget(app: Flask, make_agent,  # type: ignore[no-untyped-def]
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Calls made for a person by any of their agents spend the person's budget, beside
    their own tokens' calls; another person's budget is untouched."""
    from tests.conftest import Agent

    alice = make_agent("alice")
    agents = []
    for handle in ("scout", "scribe"):  # two agent accounts of Alice's, a token each
        made = alice.act("/u/alice/settings/agents", "create_agent", handle=handle,
                         name=handle.title())
        assert made.status_code == 201, made.get_json()
        agents.append(Agent(alice.client, handle, made.get_json()["result"]["token"]))
    bob = make_agent("bob")
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT_PERSON", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST_PERSON", 3)
    app.extensions.pop("harmonic.ratelimit", None)
    try:
        assert [agent.get("/studios").status_code for agent in agents] == [200, 200]
        assert alice.get("/studios").status_code == 200
        for caller in (alice, agents[0]):  # Alice's budget is spent, whoever asks for her
            refused = caller.get("/studios", accept="application/json")
            assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
            assert "too many requests for this person" in refused.json["error"]["message"]
        assert [bob.get("/studios").status_code for _ in range(3)] == [200] * 3
    finally:
        app.extensions.pop("harmonic.ratelimit", None)


def test_a_studio_budget_is_shared_by_everyone_in_it(app: Flask, studio, make_agent,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.mcp.conftest import Http
    from tests.mcp.test_http import _FlaskClient

    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT_STUDIO", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST_STUDIO", 3)
    app.extensions.pop("harmonic.ratelimit", None)
    try:
        bob = make_agent("bob")
        assert studio.get("/studios/team").status_code == 200
        assert bob.get("/studios/team").status_code in (200, 403, 404)  # counted either way
        # An MCP agent reaches the studio through an in-process hop: that hop counts too.
        http = Http("http://localhost", studio.token, _FlaskClient(studio.client))
        http.initialize()
        assert not http.tool("navigate", path="/studios/team").get("isError")
        refused = studio.get("/studios/team", accept="application/json")
        assert refused.status_code == 429
        assert "too many requests in this studio" in refused.json["error"]["message"]
        assert studio.get("/studios").status_code == 200  # a page outside the studio
        through_mcp = http.tool("navigate", path="/studios/team")
        assert "too many requests in this studio" in json.dumps(through_mcp)
    finally:
        app.extensions.pop("harmonic.ratelimit", None)


def test_storage_must_be_memory_or_redis(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from config import SettingError, build_config

    monkeypatch.setenv("HARMONIC_RATE_LIMIT_STORAGE", "mongodb://nowhere")
    with pytest.raises(SettingError, match="HARMONIC_RATE_LIMIT_STORAGE"):
        build_config(str(tmp_path))


def test_an_unreachable_redis_lets_requests_through(app: Flask, studio,  # type: ignore[no-untyped-def]
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Port 9 (discard) on loopback: nothing listens, so every storage call fails at once.
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT_STORAGE", "redis://127.0.0.1:9/0")
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST", 1)
    app.extensions.pop("harmonic.ratelimit", None)
    try:
        assert [studio.get("/studios").status_code for _ in range(3)] == [200, 200, 200]
    finally:
        app.extensions.pop("harmonic.ratelimit", None)


def test_the_memory_storage_counts_as_limits_own_without_a_timer_thread() -> None:
    """The in-memory budgets (a storage of our own behind ``limits``' public interface) start
    no thread per request, refuse past the budget as ``limits``' own in-memory storage does
    with the same strategy, and forget a window once it has expired."""
    import threading

    from limits.storage import MemoryStorage
    from limits.strategies import SlidingWindowCounterRateLimiter

    from app.web.ratelimit import TOKEN, Limiter, LocalStorage, window

    limiter = Limiter("memory://")
    assert isinstance(limiter._storage, LocalStorage), type(limiter._storage)
    before = {t.ident for t in threading.enumerate()}
    waits = [limiter.take(TOKEN, "someone", 60, 3) for _ in range(5)]
    assert waits[:3] == [0.0, 0.0, 0.0] and waits[-1] > 0
    assert not [t for t in threading.enumerate()
                if t.ident not in before and isinstance(t, threading.Timer)]
    item = window(120, 4)
    ours = SlidingWindowCounterRateLimiter(LocalStorage())
    theirs = SlidingWindowCounterRateLimiter(MemoryStorage())
    assert [ours.hit(item, "k") for _ in range(6)] == [theirs.hit(item, "k") for _ in range(6)]
    assert ours.get_window_stats(item, "k").remaining == \
        theirs.get_window_stats(item, "k").remaining == 0
    storage = LocalStorage()
    storage.incr("gone", 0)
    storage._next_sweep = 0.0  # a second later: the next count sweeps
    storage.incr("kept", 60)
    assert storage.get("gone") == 0 and "gone" not in storage._counts
    assert storage.get("kept") == 1

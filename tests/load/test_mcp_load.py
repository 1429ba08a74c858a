"""Many MCP sessions at once over HTTP, against two ``bin/serve`` servers on one PostgreSQL.

Every session initializes, then for each round navigates to a decision and votes, to a
commitment and joins, to the studio's note form and writes a note, and to that note. Its
requests alternate between the two servers, so each step runs in another process than the
navigation it relies on. The test demands no protocol error and no 5xx, checks every answer
(the page each action ran on is the page navigated to before, on the other server), proves
from the access logs that every session was served by two processes, and compares the votes,
joins and notes in the database with what the clients did: each exactly once.

Short form (CI): 64 sessions, 1 round: four times the 16 request threads of the two servers,
so requests queue and the sessions' writes to the same decision and commitment overlap.
``HARMONIC_LOAD=long``: 200 sessions, 4 rounds, and servers with 2 workers each. Throughput
and p50/p99 are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from flask import Flask

from tests.load.harness import (
    LONG,
    Ledger,
    McpSession,
    Population,
    Stats,
    database_ledger,
    populate,
    serve_app,
)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("load")]

WORKERS = 2 if LONG else 1
THREADS = 8  # per worker (bin/serve's HARMONIC_THREADS)
SESSIONS = 200 if LONG else 64
ROUNDS = 4 if LONG else 1
# More sessions than the servers have threads at once, or nothing here is concurrent load.
assert SESSIONS >= 4 * 2 * WORKERS * THREADS


async def _agent(i: int, session: McpSession, population: Population, ledger: Ledger) -> None:
    handle = population.handles[i]
    await session.initialize()
    for r in range(ROUNDS):
        decision, commitment = population.decisions[r], population.commitments[r]
        assert (await session.tool("navigate", path=decision))["path"] == decision
        choice = ("Yes", "No")[(i + r) % 2]
        voted = await session.tool("execute_action", action="vote",
                                   params={"option_title": choice, "accept": True})
        assert voted["ok"] and voted["path"] == decision, voted
        ledger.votes[(r, handle, choice)] += 1

        assert (await session.tool("navigate", path=commitment))["path"] == commitment
        joined = await session.tool("execute_action", action="join_commitment", params={})
        assert joined["ok"] and joined["path"] == commitment, joined
        ledger.joins[(r, handle)] += 1

        form = f"/studios/{population.studio}/note"
        assert (await session.tool("navigate", path=form))["path"] == form
        title = f"{handle} round {r}"
        wrote = await session.tool("execute_action", action="create_note",
                                   params={"title": title, "text": f"Written by {handle}."})
        assert wrote["ok"] and wrote["path"] == form, wrote
        ledger.notes[(title, handle)] += 1
        note = wrote["location"]
        page = await session.tool("navigate", path=note)
        assert page["path"] == note and page["title"] == title, page


async def _run(urls: list[str], population: Population, stats: Stats) -> Ledger:
    ledger = Ledger()
    # A fresh connection per request, as a load balancer without backend keep-alive makes.
    limits = httpx.Limits(max_connections=SESSIONS * 2, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0), limits=limits) as http:
        sessions = [McpSession(http, urls, token, f"load-{i:03d}", stats, first=i)
                    for i, token in enumerate(population.tokens)]
        outcomes = await asyncio.gather(
            *(_agent(i, s, population, ledger) for i, s in enumerate(sessions)),
            return_exceptions=True)
    failures = [repr(o) for o in outcomes if isinstance(o, BaseException)]
    assert failures == [], f"{len(failures)} sessions failed, first: {failures[:3]}"
    return ledger


def test_many_sessions_across_two_servers_lose_nothing(app: Flask, tmp_path: Path) -> None:
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        pytest.skip("the load suite runs as production does: many processes on PostgreSQL")
    population = populate(app, SESSIONS, ROUNDS)
    stats = Stats()
    with serve_app(app, tmp_path, workers=WORKERS, threads=THREADS) as a, \
            serve_app(app, tmp_path, workers=WORKERS, threads=THREADS) as b:
        started = time.perf_counter()
        ledger = asyncio.run(_run([a.url, b.url], population, stats))
        seconds = time.perf_counter() - started
        pids = {label: a.pids_by_client().get(label, set()) | b.pids_by_client().get(label, set())
                for label in (f"load-{i:03d}" for i in range(SESSIONS))}
    print(f"\nload: {SESSIONS} sessions x {ROUNDS} rounds on 2 servers x {WORKERS} workers: "
          f"{stats.summary(seconds)}")
    assert stats.errors == []
    assert all(status < 500 for status in stats.statuses), stats.statuses
    assert set(stats.statuses) == {200, 202}, stats.statuses
    # Each session's requests really landed in (at least) two processes.
    assert all(len(served) >= 2 for served in pids.values()), pids
    expected_requests = SESSIONS * (2 + ROUNDS * 7)
    assert len(stats.latencies) == expected_requests
    # Nothing lost, nothing doubled: the database holds exactly what the clients did.
    assert sum(ledger.votes.values()) == SESSIONS * ROUNDS
    assert database_ledger(app) == ledger

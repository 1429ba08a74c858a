"""Notifications fanned out across processes: MCP sessions on two ``bin/serve`` servers on one
PostgreSQL, every session subscribed to a page that other agents change through both servers.
The GET /mcp streams are held either by the gunicorn workers on the app's own port (bin/serve's
default) or by each server's evented stream endpoint (``HARMONIC_STREAM_PORT``).

Every change's notification must reach every subscriber exactly once (counted by event id,
compared with the outbox), whichever process made the change and whichever holds the stream.
Delivery latency (from just before the changing request to the event's arrival) is printed as
p50/p99, with each server process's resident memory before the sessions are set up, once every
stream is open, each ``MEMORY_EVERY`` seconds of the long form's soak, after the last change,
and once the streams are closed; never asserted. What holding the streams costs shows from the
start to their opening; growth while only changes arrive, from their opening on.

Short form (CI): 40 sessions, 5 changes. ``HARMONIC_LOAD=long``: ``HARMONIC_LOAD_SESSIONS``
sessions (default 1000) and a soak of ``HARMONIC_LOAD_SECONDS`` (default 1800) with a change
every ``HARMONIC_LOAD_EVERY`` seconds (default 2).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from pathlib import Path

import httpx
import pytest
from flask import Flask
from sqlalchemy import select

from tests.helpers import wait_until_answering
from tests.load.harness import LONG, McpSession, Server, Stats, populate, serve_app
from tests.mcp.conftest import free_port

SESSIONS = int(os.environ.get("HARMONIC_LOAD_SESSIONS", "1000")) if LONG else 40
SOAK_SECONDS = float(os.environ.get("HARMONIC_LOAD_SECONDS", "1800")) if LONG else 0.0
# The long form's soak alone outlasts the suite's per-test timeout (pyproject.toml): its own is
# the soak plus time to set up its sessions and to drain.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("load"),
              *([pytest.mark.timeout(SOAK_SECONDS + 900)] if LONG else [])]
EVERY = float(os.environ.get("HARMONIC_LOAD_EVERY", "2"))
MEMORY_EVERY = 300.0
CHANGES = 5  # the short form's changes (the long form changes until the soak ends)
PAGE = "/studios/load/note"
URI = "harmonic://page/studios/load/note"


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        children = Path(f"/proc/{current}/task/{current}/children")
        if children.exists():
            todo += [int(p) for p in children.read_text().split()]
    return out


def _rss_of(servers: list[Server]) -> dict[str, int]:
    return {name: size for server in servers for name, size in _rss(server).items()}


def _rss(server: Server) -> dict[str, int]:
    """Resident memory (KiB) of each process of a server, named by its command."""
    sizes = {}
    for pid in _tree(server.proc.pid)[1:]:  # not bin/serve's own supervising process
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        kind = "stream" if b"uvicorn" in command else "gunicorn"
        rss = next(int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("VmRSS:"))
        sizes[f"{kind}-{pid}"] = rss
    return sizes


class Subscriber:
    """One session's GET /mcp stream: the event ids it received and when."""

    def __init__(self, session: McpSession, stream_url: str) -> None:
        self.session, self.stream_url = session, stream_url
        self.received: dict[int, float] = {}
        self.duplicates = 0
        self.open = asyncio.Event()

    async def run(self, http: httpx.AsyncClient) -> None:
        headers = {"Accept": "text/event-stream",
                   "Authorization": self.session.headers["Authorization"],
                   "Mcp-Session-Id": str(self.session.session_id),
                   "MCP-Protocol-Version": "2025-11-25"}
        async with http.stream("GET", self.stream_url + "/mcp", headers=headers) as response:
            assert response.status_code == 200, await response.aread()
            self.open.set()
            event_id = None
            async for line in response.aiter_lines():  # until cancelled at the end
                if line.startswith("id:"):
                    event_id = int(line[3:])
                elif line.startswith("data:") and event_id is not None:
                    message = json.loads(line[5:])
                    assert message["params"]["uri"] == URI
                    if event_id in self.received:
                        self.duplicates += 1
                    self.received[event_id] = time.perf_counter()


async def _scenario(servers: list[Server], streams: list[str], tokens: list[str],
                    changer: str, memory: list[tuple[str, dict[str, int]]]
                    ) -> tuple[list[Subscriber], dict[int, float], Stats]:
    """The sessions, their streams and the changes; ``memory`` gets the servers' resident
    memory once the streams are open and through the soak."""
    stats = Stats()
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx.Timeout(120, read=None)
    # The changes come seconds apart, a server's keep-alive (HARMONIC_KEEPALIVE) may end just
    # as one is sent on its idle connection, and a POST is not retried (httpx.ReadError): each
    # change opens a connection of its own.
    fresh = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as http, \
            httpx.AsyncClient(limits=fresh, timeout=timeout) as changes:
        urls = [s.url for s in servers]
        sessions = [McpSession(http, urls, tokens[i], f"load-{i:04d}", stats, first=i)
                    for i in range(SESSIONS)]
        gate = asyncio.Semaphore(50)  # set up 50 at a time: a burst of 1,000 boots nothing

        async def setup(session: McpSession) -> None:
            async with gate:
                await session.initialize()
                await session.request("resources/subscribe", {"uri": URI})

        await asyncio.gather(*(setup(s) for s in sessions))
        subscribers = [Subscriber(s, streams[i % len(streams)]) for i, s in enumerate(sessions)]
        tasks = [asyncio.create_task(sub.run(http)) for sub in subscribers]
        await asyncio.gather(*(asyncio.wait_for(sub.open.wait(), 300) for sub in subscribers))
        sent: dict[int, float] = {}  # change number -> just before its request
        headers = {"Authorization": f"Bearer {changer}", "Accept": "application/json"}
        opened = time.monotonic()
        deadline = opened + SOAK_SECONDS
        memory.append(("streams open", _rss_of(servers)))
        sample_at = opened + MEMORY_EVERY
        n = 0
        while n < CHANGES or time.monotonic() < deadline:
            if time.monotonic() >= sample_at:
                memory.append((f"{sample_at - opened:.0f} s", _rss_of(servers)))
                sample_at += MEMORY_EVERY
            sent[n] = time.perf_counter()
            made = await changes.post(f"{urls[n % len(urls)]}{PAGE}/actions/create_note",
                                      json={"title": f"change {n}", "text": "x"},
                                      headers=headers)
            assert made.status_code == 201, made.text
            n += 1
            await asyncio.sleep(EVERY if LONG else 0.2)
        memory.append((f"{time.monotonic() - opened:.0f} s (the last change)", _rss_of(servers)))
        # Wait until every subscriber has every change (or give up after a generous bound).
        end = time.monotonic() + 120
        while time.monotonic() < end and any(len(s.received) < n for s in subscribers):
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # a late duplicate would arrive now
        for task in tasks:
            task.cancel()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        failed = [repr(o) for o in outcomes if not isinstance(o, asyncio.CancelledError)]
        assert failed == [], failed[:3]
    return subscribers, sent, stats


@pytest.mark.parametrize("where", ["main_port", "stream_port"])
def test_every_subscriber_hears_every_change_exactly_once(app: Flask, tmp_path: Path,
                                                          where: str) -> None:
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        pytest.skip("the load suite runs as production does: many processes on PostgreSQL")
    population = populate(app, SESSIONS + 1, 0)
    changer, tokens = population.tokens[-1], population.tokens[:-1]
    # A server keeps an idle connection longer than the client does (httpx: 5 s), so the client
    # ends it: a server ending it as the client sends a request on it fails that request
    # (httpx.ReadError; a POST is not retried), as the long form's setup showed.
    settings = {"HARMONIC_RATE_LIMIT": "0", "HARMONIC_RATE_LIMIT_PERSON": "0",
                "HARMONIC_RATE_LIMIT_STUDIO": "0", "HARMONIC_DB_MAX_OVERFLOW": "3",
                "HARMONIC_KEEPALIVE": "30"}
    ports = [free_port(), free_port()] if where == "stream_port" else []
    own = [{"HARMONIC_STREAM_PORT": str(port)} for port in ports] or [{}, {}]
    with serve_app(app, tmp_path, workers=2, **own[0], **settings) as a, \
            serve_app(app, tmp_path, workers=2, **own[1], **settings) as b:
        streams = [f"http://127.0.0.1:{port}" for port in ports] or [a.url, b.url]
        deadline = time.monotonic() + 60
        for url in streams:
            wait_until_answering(url + "/mcp", deadline)
        memory = [("start", _rss_of([a, b]))]
        started = time.perf_counter()
        subscribers, sent, stats = asyncio.run(_scenario([a, b], streams, tokens, changer,
                                                         memory))
        seconds = time.perf_counter() - started
        memory.append(("end", _rss_of([a, b])))
    expected = _event_ids(app)
    assert len(expected) == len(sent)  # one outbox event per change of the page
    assert stats.errors == []
    missing = {i: sorted(set(expected) - set(s.received)) for i, s in enumerate(subscribers)
               if set(s.received) != set(expected)}
    assert missing == {}, f"{len(missing)} subscribers missed events: {list(missing.items())[:3]}"
    assert sum(s.duplicates for s in subscribers) == 0
    order = {event_id: n for n, event_id in enumerate(expected)}
    latencies = sorted(at - sent[order[event_id]] for s in subscribers
                       for event_id, at in s.received.items())
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    held = "streams in the workers" if where == "main_port" else "+ 1 stream process each"
    print(f"\nfan-out: {SESSIONS} subscribers on 2 servers (2 gunicorn workers, {held}), "
          f"{len(sent)} changes in {seconds:.0f} s, {len(latencies)} "
          f"deliveries, each once; latency p50 {statistics.median(latencies) * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms")
    for name in sorted(memory[-1][1]):
        print(f"RSS KiB of {name}: " + ", ".join(
            f"{when} {sizes.get(name, 0)}" for when, sizes in memory))


def _event_ids(app: Flask) -> list[int]:
    from app.extensions import db
    from app.models.changes import ChangeEvent

    with app.app_context():
        return list(db.session.scalars(select(ChangeEvent.id).where(ChangeEvent.uri == URI)
                                       .order_by(ChangeEvent.id)))

"""Real servers, a seeded studio and many MCP sessions, for the load and fault suites.

``serve`` runs ``bin/serve`` itself (gunicorn with threaded workers) on a free loopback port
and waits for ``/healthz``; its access log names the worker pid of every request, so a test
can prove which process served what. ``populate`` seeds a studio with member agents, decisions
and commitments. ``McpSession`` is one MCP session over Streamable HTTP (the 2025-11-25
protocol, ``Mcp-Session-Id``) whose requests go round-robin to several servers. ``Ledger``
is what the clients did, to compare with what the database holds.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from flask import Flask

from tests.helpers import stop
from tests.mcp.conftest import ACCEPT, ROOT, app_env, free_port, messages_of

SERVE = ROOT / "bin" / "serve"
PID = re.compile(r'"(load-[^"]+)" pid=<?(\d+)>? ')
LONG = os.environ.get("HARMONIC_LOAD", "short").lower() == "long"
# Sessions of the 2025-11-25 protocol: state on the server, named by Mcp-Session-Id.
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "harmonic-load", "version": "1"}}


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    access_log: Path

    def worker_pids(self) -> list[int]:
        """The gunicorn workers of this server (children of its master process)."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(p) for p in children.read_text().split()] if children.exists() else []

    def pids_by_client(self) -> dict[str, set[int]]:
        """Which worker pids served each client (named by its User-Agent) per the access log."""
        seen: dict[str, set[int]] = defaultdict(set)
        for agent, pid in PID.findall(self.access_log.read_text(errors="replace")):
            seen[agent].add(int(pid))
        return seen


def wait_healthy(url: str, proc: subprocess.Popen[bytes] | None = None,
                 seconds: float = 180) -> None:
    # Generous: on a loaded two-core machine several processes booting the app (and an
    # --upgrade first) can take minutes; a server that dies is reported at once anyway.
    deadline = time.monotonic() + seconds
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"bin/serve exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url}/healthz did not answer 200 in {seconds} s")
        time.sleep(0.1)


@contextmanager
def serve(env: dict[str, str], log_dir: Path, workers: int = 1, threads: int = 8,
          upgrade: bool = False, port: int | None = None, **extra: str) -> Iterator[Server]:
    """``bin/serve`` (``--upgrade`` first when asked) with ``env`` (see ``app_env``) and
    ``extra`` settings on ``port`` (a free loopback port by default), until the end."""
    port = port or free_port()
    access_log = log_dir / f"access-{port}.log"
    with open(log_dir / f"error-{port}.log", "ab") as errors:  # a restart adds to it
        proc = subprocess.Popen(
            [sys.executable, str(SERVE), *(["--upgrade"] if upgrade else [])], cwd=ROOT,
            env={**env, "HOST": "127.0.0.1", "PORT": str(port),
                 "HARMONIC_WORKERS": str(workers), "HARMONIC_THREADS": str(threads),
                 "HARMONIC_ACCESS_LOG": str(access_log), "HARMONIC_GRACEFUL_TIMEOUT": "2",
                 **extra},
            stdout=subprocess.DEVNULL, stderr=errors)
    server = Server(f"http://127.0.0.1:{port}", proc, access_log)
    try:
        try:
            wait_healthy(server.url, proc)
        except (RuntimeError, TimeoutError) as exc:
            tail = (log_dir / f"error-{port}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{exc}\n{tail}") from exc
        yield server
    finally:
        stop(proc, grace=15)


def serve_app(app: Flask, log_dir: Path, **kwargs: Any) -> Any:
    """``serve`` on the database and instance of the test ``app``."""
    return serve(app_env(app), log_dir, **kwargs)


@dataclass
class Population:
    studio: str
    handles: list[str]
    tokens: list[str]
    decisions: list[str]
    commitments: list[str]


def populate(app: Flask, agents: int, rounds: int) -> Population:
    """A studio 'load' with ``agents`` member agents, and per round a decision (options Yes,
    No) and a commitment."""
    from app.extensions import db
    from app.services import accounts, commitments, decisions, items, studios, tokens

    with app.app_context():
        owner = accounts.create_user("load-owner", "Load Owner")
        studio = studios.create_studio(owner, handle="load", name="Load", join_policy="open",
                                       heartbeats_required=False)
        decision_paths, commitment_paths = [], []
        for r in range(rounds):
            decision = decisions.create_decision(studio, owner, f"Question {r}?")
            for title in ("Yes", "No"):
                decisions.add_option(decision, owner, title)
            commitment = commitments.create_commitment(studio, owner, f"Commitment {r}",
                                                       critical_mass=agents)
            decision_paths.append(items.path_of(studio, "decision", decision))
            commitment_paths.append(items.path_of(studio, "commitment", commitment))
        handles = [f"agent-{i:03d}" for i in range(agents)]
        plaintexts = []
        for handle in handles:
            user = accounts.create_user(handle, handle.title())
            studios.join(studio, user)
            plaintexts.append(tokens.create_token(user, name="load")[1])
        db.session.commit()
    return Population("load", handles, plaintexts, decision_paths, commitment_paths)


class ProtocolError(AssertionError):
    """A session's request failed: no answer, an HTTP or JSON-RPC error, or a tool error."""


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    def summary(self, seconds: float) -> str:
        ordered = sorted(self.latencies) or [0.0]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (f"{len(self.latencies)} requests in {seconds:.1f} s = "
                f"{len(self.latencies) / max(seconds, 1e-9):.0f} req/s; "
                f"p50 {statistics.median(ordered) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms; "
                f"statuses {dict(sorted(self.statuses.items()))}")


class McpSession:
    """One MCP session whose requests go round-robin to ``servers``, starting at ``first``."""

    def __init__(self, http: httpx.AsyncClient, servers: list[str], token: str, label: str,
                 stats: Stats, first: int = 0) -> None:
        self.http, self.servers, self.stats, self.turn = http, servers, stats, first
        self.headers = {"Accept": ACCEPT, "Content-Type": "application/json",
                        "Authorization": f"Bearer {token}", "User-Agent": label}
        self.label = label
        self.session_id: str | None = None
        self.last: httpx.Response | None = None
        self.ids = 0

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        url = self.servers[self.turn % len(self.servers)] + "/mcp"
        self.turn += 1
        headers = dict(self.headers)
        if self.session_id:
            headers.update({"Mcp-Session-Id": self.session_id,
                            "MCP-Protocol-Version": INIT["protocolVersion"]})
        started = time.perf_counter()
        try:
            response = await self.http.post(url, json=message, headers=headers)
        except httpx.TransportError as exc:
            raise self._fail(f"{message.get('method')} to {url}: {exc!r} after "
                             f"{time.perf_counter() - started:.1f} s") from exc
        self.stats.latencies.append(time.perf_counter() - started)
        self.stats.statuses[response.status_code] += 1
        self.last = response
        return response

    def _fail(self, what: str) -> ProtocolError:
        self.stats.errors.append(f"{self.label}: {what}")
        return ProtocolError(f"{self.label}: {what}")

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        response = await self.post({"jsonrpc": "2.0", "id": self.ids, "method": method,
                                    "params": params})
        if response.status_code != 200:
            raise self._fail(f"{method}: HTTP {response.status_code} {response.text[:300]}")
        final = messages_of(response)[-1]
        if final.get("id") != self.ids or "result" not in final:
            raise self._fail(f"{method}: {final}")
        return final

    async def initialize(self) -> None:
        response = await self.request("initialize", INIT)
        assert response["result"]["protocolVersion"] == INIT["protocolVersion"]
        assert self.last is not None
        self.session_id = self.last.headers["Mcp-Session-Id"]
        done = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if done.status_code != 202:
            raise self._fail(f"initialized: HTTP {done.status_code}")

    async def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = (await self.request("tools/call", {"name": name,
                                                    "arguments": arguments}))["result"]
        if result.get("isError"):
            raise self._fail(f"{name} {arguments}: {result['content'][0]['text'][:300]}")
        return result["structuredContent"]


@dataclass
class Ledger:
    """Effects, counted: votes (round, agent, option), joins (round, agent), notes (title,
    agent). The clients fill one with what the server confirmed; ``database_ledger`` reads one
    from the database; a test compares the two."""

    votes: Counter[tuple[int, str, str]] = field(default_factory=Counter)
    joins: Counter[tuple[int, str]] = field(default_factory=Counter)
    notes: Counter[tuple[str, str]] = field(default_factory=Counter)


def _round(text: str) -> int:
    return int(re.findall(r"\d+", text)[-1])


def database_ledger(app: Flask) -> Ledger:
    from sqlalchemy import select

    from app.extensions import db
    from app.models import User
    from app.models.collab import Commitment, CommitmentParticipant, Decision, Option, Vote
    from app.models.notes import Note

    ledger = Ledger()
    with app.app_context():
        for question, handle, option in db.session.execute(
                select(Decision.question, User.handle, Option.title).select_from(Vote)
                .join(Option, Vote.option_id == Option.id)
                .join(Decision, Vote.decision_id == Decision.id)
                .join(User, Vote.user_id == User.id).where(Vote.accepted.is_(True))):
            ledger.votes[(_round(question), handle, option)] += 1
        for title, handle in db.session.execute(
                select(Commitment.title, User.handle).select_from(CommitmentParticipant)
                .join(Commitment, CommitmentParticipant.commitment_id == Commitment.id)
                .join(User, CommitmentParticipant.user_id == User.id)):
            ledger.joins[(_round(title), handle)] += 1
        for title, handle in db.session.execute(
                select(Note.title, User.handle).select_from(Note)
                .join(User, Note.created_by_id == User.id)):
            ledger.notes[(title, handle)] += 1
        db.session.remove()
    return ledger

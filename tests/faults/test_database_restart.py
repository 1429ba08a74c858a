"""PostgreSQL restarted while agents work: the app recovers by itself.

A private PostgreSQL (never the shared test server, which other tests use meanwhile) is
started for this test; ``bin/serve`` runs on it; agents vote and join over HTTP and an MCP
session stays open. The database is stopped (fast shutdown, which cuts every connection) and
started again mid-load. While it is away, ``/healthz``, actions and ``/mcp`` answer 503 with
``Retry-After``, never 500. When it is back, the very same server processes (not restarted)
serve again, the MCP session goes on, and every vote and join the clients were told about is in
the database exactly once. The long form restarts it three times.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from flask import Flask

from tests.conftest import migrated_app
from tests.faults.clients import Tally, agent
from tests.load.harness import LONG, database_ledger, populate, serve_app, wait_healthy
from tests.mcp.conftest import Http, free_port

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults")]

AGENTS = 12
STEPS = 12 if LONG else 6
RESTARTS = 3 if LONG else 1


def _pg_bin() -> Path | None:
    """The directory of initdb and pg_ctl: on PATH, else where pg_config says."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    if shutil.which("pg_config"):
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        path = Path(bindir.stdout.strip())
        if (path / "pg_ctl").exists() and (path / "initdb").exists():
            return path
    return None


class PrivatePostgres:
    """A throw-away PostgreSQL cluster on a free loopback port (as the postgres OS user when
    the tests run as root, since PostgreSQL refuses to run as root)."""

    def __init__(self, bindir: Path, folder: Path) -> None:
        self.bindir, self.folder = bindir, folder
        self.data, self.port = folder / "data", free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root needs a 'postgres' OS user to start PostgreSQL")
            if shutil.which("setpriv") is None:
                pytest.skip("running PostgreSQL as the postgres user needs setpriv")
            os.chown(folder, owner.pw_uid, owner.pw_gid)
            self.as_user = ["setpriv", f"--reuid={owner.pw_uid}", f"--regid={owner.pw_gid}",
                            "--clear-groups", "--"]

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([*self.as_user, str(self.bindir / tool), *args],
                              capture_output=True, text=True, timeout=120, cwd=self.folder)
        assert done.returncode == 0, f"{tool} {args}: {done.stdout}{done.stderr}"

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} "
                   f"-c fsync=off -c max_connections=60")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"),
                  "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/harmonic"


@pytest.fixture
def private_pg() -> Iterator[PrivatePostgres]:
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed (Debian: postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="harmonic-pg-"))
    folder.chmod(0o755)
    server = PrivatePostgres(bindir, folder)
    server.init()
    server.start()
    try:
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{server.port}/postgres",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE harmonic")
        yield server
    finally:
        try:
            server.stop("immediate")
        except AssertionError:
            pass  # already stopped
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_app(private_pg: PrivatePostgres, tmp_path: Path) -> Iterator[Flask]:
    with migrated_app(private_pg.url, tmp_path / "instance") as application:
        yield application


def test_the_app_rides_out_a_database_restart(private_pg: PrivatePostgres, pg_app: Flask,
                                              tmp_path: Path) -> None:
    population = populate(pg_app, AGENTS, 1)
    tally = Tally()
    outages: list[dict[str, object]] = []
    with serve_app(pg_app, tmp_path, workers=2) as server:
        workers_before = set(server.worker_pids())
        mcp = Http(server.url, population.tokens[0])
        mcp.initialize()
        assert mcp.tool("navigate", path=population.decisions[0])["structuredContent"]
        threads = [threading.Thread(target=agent, args=(server.url, population, i, tally,
                                                        STEPS, False))
                   for i in range(AGENTS)]
        for thread in threads:
            thread.start()
        for restart in range(RESTARTS):
            with tally.progress:
                tally.progress.wait_for(lambda r=restart: tally.succeeded >= 20 * (r + 1),
                                        timeout=120)
            private_pg.stop("fast")
            outages.append(_probe_outage(server.url, population.tokens[0],
                                         population.decisions[0], mcp))
            time.sleep(1.0)  # clients keep trying meanwhile
            private_pg.start()
        for thread in threads:
            thread.join(300)
        wait_healthy(server.url, seconds=30)
        workers_after = set(server.worker_pids())
        # The MCP session opened before the restarts goes on where it was.
        voted = mcp.tool("execute_action", action="vote",
                         params={"votes": [{"option_title": "Yes", "accept": True}]})
    print(f"\ndatabase restart: {RESTARTS} restarts survived, {tally.succeeded} requests "
          f"served, {tally.statuses.get(503, 0)} answered 503 during outages, "
          f"{tally.dropped} dropped; statuses {dict(tally.statuses)}")
    assert not any(thread.is_alive() for thread in threads)
    assert workers_after == workers_before, "the app was restarted, not recovered"
    for outage in outages:
        assert outage == {"healthz": 503, "database": "unreachable", "action": 503,
                          "retry_after": "2", "kind": "unavailable", "mcp": 503}
    assert 500 not in tally.statuses and tally.dropped == 0, tally.statuses
    assert not voted.get("isError"), voted
    assert voted["structuredContent"]["path"] == population.decisions[0]
    found = database_ledger(pg_app)
    expected = tally.confirmed
    handle0 = population.handles[0]
    expected.votes[(0, handle0, "Yes")] = 1  # the MCP vote on top of the agent's own
    assert found.votes == expected.votes
    assert found.joins == expected.joins


def _probe_outage(base: str, token: str, decision: str, mcp: Http) -> dict[str, object]:
    """What a load balancer and a client see while the database is down."""
    health = httpx.get(base + "/healthz", timeout=30)
    action = httpx.post(f"{base}{decision}/actions/vote", timeout=30,
                        json={"option_title": "Yes", "accept": True},
                        headers={"Authorization": f"Bearer {token}",
                                 "Accept": "application/json"})
    navigate = mcp.post({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                         "params": {"name": "navigate", "arguments": {"path": decision}}})
    return {"healthz": health.status_code, "database": health.json()["database"],
            "action": action.status_code, "retry_after": action.headers.get("Retry-After"),
            "kind": action.json()["error"]["kind"], "mcp": navigate.status_code}

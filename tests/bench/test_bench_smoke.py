"""Every benchmark still runs: each script with ``--smoke`` (a few iterations) as a subprocess.

No timing is asserted — the numbers of a smoke run mean nothing. What is checked is that the
script completes, prints its tables with their rows, and tells how to rerun it; and that the
wrk script behind the HTTP rows numbers its requests and notices every kind of bad answer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.bench.conftest import SCRIPTS

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = os.environ.get("HARMONIC_TEST_BACKENDS", "sqlite,postgresql").split(",")
pytestmark = [pytest.mark.usefixtures("bench_template"), SCRIPTS]

# script, extra arguments, lines the output must contain
CASES = [
    ("core_pages.py", [], ["### SQL statements per request", "| decision (md) |",
                           "### Render time", "| bare Flask, fixed Markdown |"]),
    ("floorplans_bench.py", [], ["parse+val", "### modify_floorplan", "| rename_room |"]),
    ("mcp_bench.py", ["--only", "dispatch,stdio"],
     ["### In-process JSON-RPC dispatch", "| ping: ours |", "### stdio cold start",
      "spawn → initialize response: SDK", "| stdio ping, sequential: ours |"]),
    # One run starts the HTTP rows' servers once and measures them with both load generators:
    # wrk (bin/test installs it) and the Python fallback, one table each.
    ("mcp_bench.py", ["--only", "wrapper,http", "--load", "both"],
     ["### In-process (bin/mcp-server) against a wrapper", "| navigate: wrapper over HTTP |",
      "### Streamable HTTP", "| ceiling: bare Flask JSON-RPC", "| SDK MCPServer (FastMCP)",
      "shared socket", "/mcp navigate", "2026-07-28 stateless",
      "Load generator: the Python generator",
      # Without wrk the fallback runs alone (and is named so under its one table).
      "Load generator: wrk" if shutil.which("wrk") else "wrk is not installed",
      # Where the calls' CPU went: measured around wrk's runs only.
      *(["### CPU per call, µs (SQLite", "the server's own CPU per call, SDK stateful ÷ ours",
         "2026-07-28 stateless — the same: "]
        if shutil.which("wrk") else [])]),
    ("proxy_bench.py", [], ["### Sequential get_walls calls", "| proxied: app /rpc, recording on |",
                            "| proxied: app /rpc, not recording |",
                            "### Throughput", "Proxied / direct:"]),
    ("jsonrpc_dispatch.py", [], ["### Design-model call: jsonrpcserver dispatch",
                                 "| typical: get_walls | rpc.handle |",
                                 "| no-op (no database) | jsonrpcserver + schema |",
                                 "Dispatch (rpc.handle) adds"]),
    ("streams_bench.py", [], ["## Open GET /mcp streams in one process",
                              "| 0 | ", "| 5 | "]),
    ("statement_cost.py", [], ["### One small read per layer", "| driver cursor (baseline) |",
                               "| ORM session, expanding IN (Session.execute) |",
                               "### An MCP session's row, found as each call finds it",
                               "| store.find_session: its copy forgotten, the row read",
                               "| store.find_session: this process's copy |"]),
    ("trivial_call.py", [], ["### A trivial tools/call, the WSGI app alone",
                             "| ours, 2025-11-25 session |", "| ours (app/) |", "| Werkzeug |",
                             "| the session row's read on the bare driver",
                             "What the session adds to a call, in CPU",
                             "sleep costs"]),
    ("leaderboard_bench.py", [], ["### The 50 most linked items of a studio (SQLite",
                                  "| count alone (baseline) | the app's leaderboard |",
                                  "### The backlinks page at"]),
    ("profile_mcp.py", [], ["tools/call navigate (decision page):", "SQL statements per call",
                            "tools/call navigate, 2026-07-28 stateless:",
                            "cumtime"]),
]
PG_CASES = [
    ("core_pages.py", ["--both"], ["### PostgreSQL beside SQLite, same run", "| decision (md) |",
                                   "its SQL pipelined, PG ms",
                                   "Goal: every page's PostgreSQL p50",
                                   "### Whose code each page's time is in, SQLite / PostgreSQL",
                                   "| ours (app/) |", "| database driver |",
                                   "| PostgreSQL's added time: the driver and its wait |",
                                   "their independent reads pipelined or one after another",
                                   "| note (html) | ",
                                   "their reads alone or in a transaction",
                                   "| decision | "]),
    ("leaderboard_bench.py", ["--postgres"], ["### The 50 most linked items of a studio "
                                              "(PostgreSQL", "| /studios/demo/backlinks (md) |"]),
    ("queue_bench.py", [], ["### Jobs per second on PostgreSQL",
                            "ceiling (bare SKIP LOCKED loop)", "### Enqueue → run succeeded"]),
]


def run(script: str, args: list[str]) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--smoke", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.parametrize(("script", "args", "expected"), CASES,
                         ids=[" ".join([c[0], *c[1][1:]]) for c in CASES])
def test_benchmark_completes_and_prints_its_tables(script: str, args: list[str],
                                                   expected: list[str]) -> None:
    out = run(script, args)
    missing = [line for line in expected if line not in out]
    assert not missing, f"{script} printed no {missing}:\n{out[-3000:]}"
    assert f"Rerun: `.venv/bin/python bench/{script} --smoke" in out


@pytest.mark.skipif("postgresql" not in BACKENDS, reason="the queue benchmark needs PostgreSQL")
@pytest.mark.parametrize(("script", "args", "expected"), PG_CASES, ids=[c[0] for c in PG_CASES])
def test_postgresql_benchmark_completes(script: str, args: list[str],
                                        expected: list[str]) -> None:
    out = run(script, args)
    missing = [line for line in expected if line not in out]
    assert not missing, f"{script} printed no {missing}:\n{out[-3000:]}"


GOOD = {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}}


@pytest.mark.skipif(not shutil.which("wrk"), reason="wrk is not installed (bin/test installs it)")
@pytest.mark.parametrize(("status", "answer", "counter"), [
    (200, GOOD, None),
    (500, {"oops": True}, "bad_status"),
    (200, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no such method"}},
     "rpc_errors"),
    (200, {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": True}}, "rpc_errors"),
], ids=["good", "http-500", "json-rpc-error", "tool-error"])
def test_wrk_script_numbers_requests_and_counts_bad_answers(
        status: int, answer: dict[str, Any], counter: str | None) -> None:
    seen: list[tuple[dict[str, Any], str | None, str | None]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the servers under test

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((json.loads(body), self.headers.get("Mcp-Session-Id"),
                         self.headers.get("Authorization")))
            out = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    request = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "t", "arguments": {}}}
    try:
        done = subprocess.run(
            ["wrk", "-t2", "-c2", "-d1s", "-HAuthorization: Bearer x", "-s",
             str(ROOT / "bench" / "wrk_jsonrpc.lua"), f"http://127.0.0.1:{server.server_port}/",
             "--", json.dumps(request), "session-a", "session-b"],
            capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    result = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    counts = {key: int(value) for key, value in (pair.split("=") for pair in result.split()[1:])}
    assert seen and counts["requests"] >= len(seen) - 2  # a request may be cut off at the end
    ids = [body.pop("id") for body, _, _ in seen]
    assert len(set(ids)) == len(ids), "every request has its own id"
    assert all(body == request for body, _, _ in seen)
    assert {session for _, session, _ in seen} == {"session-a", "session-b"}
    assert {auth for _, _, auth in seen} == {"Bearer x"}
    for name in ("bad_status", "rpc_errors"):
        assert counts[name] == (counts["requests"] if name == counter else 0), (name, counts)
    assert ("FIRST_BAD " in done.stdout) == (counter is not None)

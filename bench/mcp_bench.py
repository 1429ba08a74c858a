"""MCP benchmarks, ours beside the official Python SDK in the same run (ratios, not absolutes).

    .venv/bin/python bench/mcp_bench.py [--quick]

1. In-process dispatch: our McpServer.handle against jsonrpcserver's dispatch, for ping and
   for a tools/call of a trivial tool (why the core is plain code).
2. stdio cold start: spawn -> initialize response, bin/mcp-server against the SDK's server;
   plus ours spawn -> first tools/list (that one loads the Flask app and the database).
3. stdio sequential ping round trips, both servers.
4. Streamable HTTP tools/call throughput with 16 keep-alive clients: our /mcp under gunicorn
   (gthread; conformance profile's test_simple_text, auth off, SQLite) against the SDK under
   uvicorn (echo tool, JSON responses; stateless and stateful).
Prints a Markdown table; medians of several runs.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = sys.executable
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}
ACCEPT = "application/json, text/event-stream"
QUICK = "--quick" in sys.argv


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# 1. in-process dispatch --------------------------------------------------------------------

def bench_dispatch() -> list[tuple[str, str]]:
    from jsonrpcserver import Success, dispatch, method

    from app.mcp.context import SessionState
    from app.mcp.registry import Registry
    from app.mcp.server import McpServer

    registry = Registry()
    registry.tool("echo", "echo", {"type": "object", "properties": {"text": {"type": "string"}},
                                   "required": ["text"]})(lambda ctx, args: args["text"])
    server = McpServer(registry)
    session = SessionState("bench")
    session.initialized = True

    class Sink:
        def notify(self, message: dict[str, Any]) -> None:
            pass

        def request(self, *args: Any) -> dict[str, Any]:
            return {}

    @method(name="ping")
    def ping() -> Success:
        return Success({})

    @method(name="tools/call")
    def call(name: str, arguments: dict[str, Any]) -> Success:
        return Success({"content": [{"type": "text", "text": arguments["text"]}]})

    ping_msg = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    call_msg = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"text": "hi"}}})
    sink = Sink()

    def ours(raw: str) -> Callable[[], Any]:
        return lambda: json.dumps(server.handle(json.loads(raw), session, sink))

    def theirs(raw: str) -> Callable[[], Any]:
        return lambda: dispatch(raw)

    rows = []
    n = 2000 if QUICK else 10000
    for label, raw in (("ping", ping_msg), ("tools/call echo", call_msg)):
        for who, fn in (("ours (McpServer.handle + json)", ours(raw)),
                        ("jsonrpcserver 5 dispatch", theirs(raw))):
            fn()
            best = []
            for _ in range(5):
                started = time.perf_counter()
                for _ in range(n):
                    fn()
                best.append((time.perf_counter() - started) / n * 1e6)
            rows.append((f"in-process {label}: {who}", f"{statistics.median(best):.1f} µs"))
    return rows


# 2 and 3. stdio ----------------------------------------------------------------------------

def _spawn_until(cmd: list[str], env: dict[str, str], lines: list[bytes],
                 want_id: Any) -> tuple[float, subprocess.Popen[bytes]]:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=ROOT)
    assert proc.stdin and proc.stdout
    proc.stdin.write(b"".join(line + b"\n" for line in lines))
    proc.stdin.flush()
    while True:
        out = proc.stdout.readline()
        if not out:
            raise RuntimeError(f"{cmd} ended early")
        if json.loads(out).get("id") == want_id:
            return time.perf_counter() - started, proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _stdio_setup() -> tuple[dict[str, str], str]:
    """A fresh instance with a migrated SQLite database and a token; returns env and token."""
    instance = tempfile.mkdtemp(prefix="mcp-bench-")
    env = dict(os.environ, HARMONIC_INSTANCE=instance, FLASK_APP="wsgi.py",
               DATABASE_URL=f"sqlite:///{instance}/harmonic.db")
    subprocess.run([PY, "-m", "flask", "db", "upgrade", "heads"], env=env, cwd=ROOT,
                   check=True, capture_output=True)
    seeded = subprocess.run([PY, "-m", "flask", "seed-demo"], env=env, cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    token = next(line.split("=", 1)[1] for line in seeded.splitlines()
                 if line.startswith("HARMONIC_API_TOKEN="))
    return env, token


def bench_stdio(env: dict[str, str], token: str) -> list[tuple[str, str]]:
    ours_cmd = [PY, str(ROOT / "bin" / "mcp-server")]
    sdk_cmd = [PY, str(ROOT / "bench" / "mcp_sdk_server.py")]
    ours_env = dict(env, HARMONIC_API_TOKEN=token)
    init = json.dumps(INIT).encode()
    initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    tools = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    runs = 3 if QUICK else 7
    rows = []
    for label, cmd, run_env in (("ours bin/mcp-server", ours_cmd, ours_env),
                                ("SDK MCPServer", sdk_cmd, env)):
        times = []
        for _ in range(runs):
            took, proc = _spawn_until(cmd, run_env, [init], 1)
            times.append(took)
            _stop(proc)
        rows.append((f"stdio cold start, spawn → initialize response: {label}",
                     f"{statistics.median(times) * 1000:.0f} ms"))
    times = []
    for _ in range(runs):
        took, proc = _spawn_until(ours_cmd, ours_env, [init, initialized, tools], 2)
        times.append(took)
        _stop(proc)
    rows.append(("stdio spawn → first tools/list (ours; loads Flask app + DB)",
                 f"{statistics.median(times) * 1000:.0f} ms"))
    # Sequential ping round trips over an open pipe.
    for label, cmd, run_env in (("ours", ours_cmd, ours_env), ("SDK", sdk_cmd, env)):
        _took, proc = _spawn_until(cmd, run_env, [init, initialized], 1)
        assert proc.stdin and proc.stdout
        n = 500 if QUICK else 2000
        latencies = []
        for i in range(n):
            started = time.perf_counter()
            proc.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (i + 10))
            proc.stdin.flush()
            proc.stdout.readline()
            latencies.append(time.perf_counter() - started)
        _stop(proc)
        latencies.sort()
        rows.append((f"stdio sequential ping: {label}",
                     f"{n / sum(latencies):.0f}/s, p50 {latencies[n // 2] * 1000:.2f} ms, "
                     f"p99 {latencies[int(n * 0.99)] * 1000:.2f} ms"))
    return rows


# 4. HTTP -----------------------------------------------------------------------------------

@contextmanager
def _server(cmd: list[str], env: dict[str, str], url: str) -> Iterator[None]:
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.post(url, json={}, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"{cmd} did not start") from None
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(10)


def _load(url: str, tool: str, arguments: dict[str, Any], seconds: float,
          clients: int = 16, sessions: bool = True) -> tuple[float, float]:
    """Requests per second and p50 latency (ms) of tools/call from ``clients`` threads."""
    counts: list[int] = []
    latencies: list[float] = []
    lock = threading.Lock()
    # The clock starts once every client has its session, so slow set-up never eats the run.
    stop = [0.0]
    ready = threading.Barrier(clients + 1,
                              action=lambda: stop.__setitem__(0, time.monotonic() + seconds))

    def worker() -> None:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        with httpx.Client(timeout=30) as client:
            if sessions:
                response = client.post(url, json=INIT, headers=headers)
                session = response.headers.get("mcp-session-id")
                if session:
                    headers["Mcp-Session-Id"] = session
                    headers["MCP-Protocol-Version"] = "2025-11-25"
                    client.post(url, json={"jsonrpc": "2.0",
                                           "method": "notifications/initialized"},
                                headers=headers)
            done, mine = 0, []
            ready.wait()
            while time.monotonic() < stop[0]:
                body = {"jsonrpc": "2.0", "id": done + 2, "method": "tools/call",
                        "params": {"name": tool, "arguments": arguments}}
                started = time.perf_counter()
                response = client.post(url, json=body, headers=headers)
                assert response.status_code == 200, response.text
                assert '"isError":true' not in response.text, response.text
                mine.append(time.perf_counter() - started)
                done += 1
        with lock:
            counts.append(done)
            latencies.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for thread in threads:
        thread.start()
    ready.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    return sum(counts) / elapsed, latencies[len(latencies) // 2] * 1000


def bench_http(env: dict[str, str]) -> list[tuple[str, str]]:
    seconds = 3 if QUICK else 8
    rows = []
    ours_env = dict(env, HARMONIC_MCP_AUTH="off", HARMONIC_MCP_CONFORMANCE="1",
                    HOST="127.0.0.1")
    for workers, threads in ((1, 16), (2, 8)):
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        cmd = [PY, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-k", "gthread",
               "--threads", str(threads), "-w", str(workers), "wsgi:app"]
        with _server(cmd, ours_env, url):
            _load(url, "test_simple_text", {}, 1)
            rate, p50 = _load(url, "test_simple_text", {}, seconds)
        rows.append((f"HTTP tools/call, 16 clients: ours gunicorn gthread {workers}×{threads}",
                     f"{rate:.0f} req/s, p50 {p50:.1f} ms"))
    for mode in ("stateless", "stateful"):
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        cmd = [PY, str(ROOT / "bench" / "mcp_sdk_server.py"), "http", str(port), mode]
        with _server(cmd, env, url):
            _load(url, "echo", {"text": "hi"}, 1)
            rate, p50 = _load(url, "echo", {"text": "hi"}, seconds)
        rows.append((f"HTTP tools/call, 16 clients: SDK uvicorn 1 worker, JSON, {mode}",
                     f"{rate:.0f} req/s, p50 {p50:.1f} ms"))
    return rows


def main() -> None:
    env, token = _stdio_setup()
    rows = bench_dispatch() + bench_stdio(env, token) + bench_http(env)
    print(f"| measurement ({os.cpu_count()} CPUs, Python {sys.version.split()[0]}) | result |")
    print("| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()

"""MCP benchmarks, ours beside the alternatives in the same run (ratios, not absolutes).

    .venv/bin/python bench/mcp_bench.py [--quick | --smoke] [--postgres [--database-cpu]]
                                        [--only SECTIONS] [--load wrk|python|both]

``--database-cpu`` puts the PostgreSQL server on the machine's last CPU and everything the
benchmark runs on the others: the database as it runs on a machine of its own, whose work takes
no CPU from the servers measured (on a shared machine the SDK's server, which keeps no state in
a database, gets the CPU our database's work takes from ours). It moves the server's processes
for the run and puts them back after; it needs root or the server's own user.

Sections (``--only dispatch,wrapper,stdio,http``):

- ``dispatch``: in-process, our McpServer.handle against jsonrpcserver's dispatch (ping and a
  trivial tools/call): why the protocol core is plain code.
- ``wrapper`` (issue item 1): ``navigate`` on a busy decision page (20 options, 50 voters) and
  ``execute_action`` (a vote) through ``bin/mcp-server`` (in-process dispatch) against a
  separate wrapper process fetching the same pages over HTTP from the app under gunicorn.
  Goal: in-process at least 3x faster.
- ``stdio`` (item 3): cold start, spawn -> initialize response, and resident memory, of
  ``bin/mcp-server`` against the SDK's MCPServer (FastMCP) with one tool; ours also to the first
  tools/list (that one loads the Flask app and the database). Sequential stdio ping round trips.
  Goals: faster than the SDK, under 400 ms, under 80 MB.
- ``http`` (item 2): ``tools/call`` of a trivial tool with 16 keep-alive clients against
  /mcp under gunicorn (2 processes, bin/serve's gthread worker), beside the SDK's server under
  uvicorn and a bare Flask endpoint returning a fixed JSON-RPC result under the same gunicorn
  settings (the ceiling). Two processes are run as two single-process servers on two ports with
  the clients split evenly (processes sharing one socket get a very uneven share of keep-alive
  clients; the shared-socket row reports the spread it got). Also ``navigate`` on the busy
  decision page; and last three rows with one connection each (one
  agent's calls one after another, ours in a session, under bin/serve's worker and under
  gunicorn's own gthread, and the SDK's stateful server: latency, not saturation).
  Goals: at least 1.5x the SDK (1x on PostgreSQL), at least 50% of the ceiling on SQLite.
  The load comes from wrk (``wrk_jsonrpc.lua``) where it is installed, else (or with
  ``--load python``) from Python threads, which on two cores saturate before the servers do.
  ``--load both`` measures the same servers with each generator in turn, one table each (the
  smoke test's way to run both paths while starting the servers once).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import PY, ROOT, Sample  # noqa: E402

VERSION = "2025-11-25"
PLACEMENT = ""  # --database-cpu: where the database and the benchmark run, for the titles
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
ACCEPT = "application/json, text/event-stream"
BENCH = ROOT / "bench"


def fmt(sample: Sample) -> list[str]:
    return [f"{sample.rate:,.0f}", f"{sample.p50:.2f}", f"{sample.p99:.2f}"]


# dispatch ------------------------------------------------------------------------------------

def bench_dispatch() -> None:
    from jsonrpcserver import Success, dispatch, method

    from app.actions.effects import READ
    from app.mcp.context import SessionState
    from app.mcp.registry import Registry
    from app.mcp.server import McpServer

    registry = Registry()
    echo_schema = {"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"]}
    registry.tool("echo", "echo", echo_schema, effect=READ)(lambda ctx, args: args["text"])
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

    sink = Sink()
    messages = {"ping": '{"jsonrpc":"2.0","id":1,"method":"ping"}',
                "tools/call echo": json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                               "params": {"name": "echo",
                                                          "arguments": {"text": "hi"}}})}
    calls: dict[str, Callable[[], Any]] = {}
    for label, raw in messages.items():
        calls[f"{label}: ours"] = (
            lambda raw=raw: json.dumps(server.handle(json.loads(raw), session, sink)))
        calls[f"{label}: jsonrpcserver"] = lambda raw=raw: dispatch(raw)
    n = harness.size(20000, 5000, 20)
    samples = harness.interleaved(calls, rounds=5, per_round=max(n // 5, 1))
    rows = [[name, f"{s.p50 * 1000:.1f}"] for name, s in samples.items()]
    harness.print_table("In-process JSON-RPC dispatch (µs per message, median)",
                        ["message: dispatcher", "µs"], rows)


# stdio ---------------------------------------------------------------------------------------

class Stdio:
    """A spawned stdio MCP server, talked to line by line."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=ROOT)
        self.next_id = 100

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, want_id: Any) -> dict[str, Any]:
        assert self.proc.stdout
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the stdio server ended early")
            message = json.loads(line)
            if message.get("id") == want_id:
                return message

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                   **({"params": params} if params is not None else {})})
        answer = self.wait_for(self.next_id)
        if "error" in answer or answer.get("result", {}).get("isError"):
            raise RuntimeError(f"{method} failed: {json.dumps(answer)[:500]}")
        return answer

    def initialize(self) -> float:
        """Send initialize; seconds from spawn to its response."""
        self.send(INIT)
        self.wait_for(1)
        took = time.perf_counter() - self.started
        self.send(INITIALIZED)
        return took

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def stdio(cmd: list[str], env: dict[str, str]) -> Iterator[Stdio]:
    server = Stdio(cmd, env)
    try:
        yield server
    finally:
        server.close()


def ours_cmd() -> list[str]:
    return [PY, str(ROOT / "bin" / "mcp-server")]


SDK_CMD = [PY, str(BENCH / "mcp_sdk_server.py")]


def bench_stdio(inst: harness.Instance) -> None:
    ours_env = dict(inst.env, HARMONIC_API_TOKEN=inst.token)
    runs = harness.size(9, 3, 1)
    rows = []
    results: dict[str, tuple[float, float, float]] = {}
    for label, cmd, env in (("ours: bin/mcp-server", ours_cmd(), ours_env),
                            ("SDK MCPServer (FastMCP), one tool", SDK_CMD, inst.env)):
        times, rss, peak = [], [], []
        for _ in range(runs):
            with stdio(cmd, env) as server:
                times.append(server.initialize())
                now, high = harness.rss_mb(server.proc.pid)
                rss.append(now)
                peak.append(high)
        results[label] = (harness.median(times) * 1000, harness.median(rss),
                          harness.median(peak))
        rows.append([f"spawn → initialize response: {label}",
                     f"{results[label][0]:.0f}", f"{results[label][1]:.1f}",
                     f"{results[label][2]:.1f}"])
    times, rss = [], []
    for _ in range(runs):
        with stdio(ours_cmd(), ours_env) as server:
            server.initialize()
            server.call("tools/list")
            times.append(time.perf_counter() - server.started)
            rss.append(harness.rss_mb(server.proc.pid)[1])
    loaded = harness.median(rss)
    rows.append(["spawn → first tools/list: ours (loads the Flask app and the database)",
                 f"{harness.median(times) * 1000:.0f}", "", f"{loaded:.1f}"])
    ours, sdk = results["ours: bin/mcp-server"], results["SDK MCPServer (FastMCP), one tool"]
    harness.print_table(
        f"stdio cold start and memory (median of {runs} spawns)",
        ["measurement", "ms", "RSS MB", "peak RSS MB"], rows,
        [f"Ours / SDK cold start: {ours[0] / sdk[0]:.2f} (goal < 1: "
         f"{harness.goal(ours[0] < sdk[0])}); under 400 ms: {harness.goal(ours[0] < 400)}; "
         f"peak RSS under 80 MB at initialize: {harness.goal(ours[2] < 80)}, and once the "
         f"app is loaded: {harness.goal(loaded < 80)}"])

    count = harness.size(2000, 500, 5)
    rows = []
    for label, cmd, env in (("ours", ours_cmd(), ours_env), ("SDK", SDK_CMD, inst.env)):
        with stdio(cmd, env) as server:
            server.initialize()
            sample = harness.sequential(lambda server=server: server.call("ping"), count)
        rows.append([f"stdio ping, sequential: {label}", *fmt(sample)])
    harness.print_table("stdio round trips", ["series", "calls/s", "p50 ms", "p99 ms"], rows)


# wrapper (item 1) ----------------------------------------------------------------------------

def bench_wrapper(inst: harness.Instance, paths: dict[str, str]) -> None:
    port = harness.free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(inst.env, HARMONIC_API_TOKEN=inst.token)
    decision = paths["decision"]
    vote = {"action": "vote", "path": decision,
            "params": {"option_title": "Option 1", "accept": True, "prefer": False}}
    count = harness.size(300, 100, 3)
    with ExitStack() as stack:
        stack.enter_context(harness.server(harness.gunicorn(port, threads=4), inst.env,
                                           f"{base}/", probe=_get))
        ours = stack.enter_context(stdio(ours_cmd(), env))
        wrapper = stack.enter_context(stdio([PY, str(BENCH / "mcp_wrapper_server.py"), base],
                                            env))
        sdk_wrapper = stack.enter_context(
            stdio([PY, str(BENCH / "mcp_sdk_wrapper_server.py"), base], env))
        for server in (ours, wrapper, sdk_wrapper):
            server.initialize()
        nav = {"name": "navigate", "arguments": {"path": decision}}
        act = {"name": "execute_action", "arguments": vote}
        samples = harness.interleaved({
            "navigate: ours (bin/mcp-server, in-process)": lambda: ours.call("tools/call", nav),
            "navigate: wrapper over HTTP": lambda: wrapper.call("tools/call", nav),
            "execute_action vote: ours": lambda: ours.call("tools/call", act),
            "execute_action vote: wrapper over HTTP": lambda: wrapper.call("tools/call", act),
            "navigate: option B (SDK service over HTTP)":
                lambda: sdk_wrapper.call("tools/call", nav),
            "execute_action vote: option B (SDK service over HTTP)":
                lambda: sdk_wrapper.call("tools/call", act),
        }, rounds=5, per_round=max(count // 5, 1))
    names = list(samples)
    rows = [[name, *fmt(s)] for name, s in samples.items()]
    notes = []
    for ours_name, lean, sdk in ((names[0], names[1], names[4]), (names[2], names[3], names[5])):
        for label, theirs_name in (("lean wrapper", lean), ("option B (SDK)", sdk)):
            ratio = samples[theirs_name].p50 / samples[ours_name].p50
            notes.append(f"{ours_name.split(':')[0]}: {label} p50 / ours p50 = {ratio:.2f} "
                         f"(goal ≥ 3: {harness.goal(ratio >= 3)})")
    harness.print_table(
        f"In-process (bin/mcp-server) against a wrapper service over HTTP, sequential, "
        f"decision page with {paths['options']} options and {paths['voters']} voters",
        ["series", "calls/s", "p50 ms", "p99 ms"], rows, notes)


def _get(url: str) -> Any:
    import httpx

    return httpx.get(url, timeout=2)


# http (item 2) -------------------------------------------------------------------------------

MODERN = "2026-07-28"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN,
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}


@dataclass(frozen=True)
class Call:
    """The request of one row: ``tools/call`` of ``tool`` in one protocol era.

    ``era`` is "session" (2025-11-25: each client initializes first and sends its session id),
    "stateless" (2026-07-28: no initialize, the version and method in ``_meta`` and headers)
    or "bare" (no handshake at all: the ceiling's fixed endpoint).
    """

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    era: str = "session"
    token: str | None = None

    def base_headers(self) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def headers(self) -> dict[str, str]:
        """Every request's headers but the session id."""
        headers = self.base_headers()
        if self.era == "session":
            headers["MCP-Protocol-Version"] = VERSION
        elif self.era == "stateless":
            headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                            "Mcp-Name": self.tool})
        return headers

    def body(self) -> dict[str, Any]:
        """The request without its id (each generator numbers its own)."""
        params: dict[str, Any] = {"name": self.tool, "arguments": self.arguments}
        if self.era == "stateless":
            params["_meta"] = MODERN_META
        return {"jsonrpc": "2.0", "method": "tools/call", "params": params}

    def open_session(self, client: Any, url: str) -> str | None:
        """initialize and notifications/initialized in the session era; the session id, or
        None where the server keeps none (a stateless SDK server) or the era has no handshake."""
        if self.era != "session":
            return None
        response = client.post(url, json=INIT, headers=self.base_headers())
        assert response.status_code == 200, response.text
        session = response.headers.get("mcp-session-id")
        headers = self.headers() | ({"Mcp-Session-Id": session} if session else {})
        client.post(url, json=INITIALIZED, headers=headers)
        return session


def _python_load(call: Call, urls: list[str], clients: int, seconds: float,
                 meters: dict[str, Callable[[], float]]) -> harness.Load:
    """The fallback: one thread and one keep-alive httpx connection per client; the first bad
    answer ends the run with an error. (It meters no CPU: its own shares this process.)"""
    body = call.body()

    def setup(client: Any, url: str) -> dict[str, str]:
        session = call.open_session(client, url)
        return call.headers() | ({"Mcp-Session-Id": session} if session else {})

    def request(client: Any, url: str, headers: dict[str, str], n: int) -> None:
        response = client.post(url, content=json.dumps({"id": n + 2, **body}), headers=headers)
        if response.status_code != 200 or '"isError":true' in response.text.replace(" ", ""):
            raise RuntimeError(f"{url}: {response.status_code} {response.text[:300]}")

    return harness.http_load(urls, clients, seconds, setup, request)


def _wrk_load(call: Call, urls: list[str], clients: int, seconds: float,
              meters: dict[str, Callable[[], float]]) -> harness.Load:
    """wrk, its connections split evenly over ``urls``; in the session era each connection's
    share of requests has a session of its own, opened here first (before ``meters`` start)."""
    import httpx

    per = clients // len(urls)
    with httpx.Client(timeout=30) as client:
        targets = {url: [s for s in (call.open_session(client, url) for _ in range(per)) if s]
                   for url in urls}
    return harness.wrk_load(targets, per, max(1, round(seconds)), call.body(), call.headers(),
                            meters)


def _connections_per_process(port: int) -> str:
    """How the established connections to ``port`` are spread over server processes."""
    out = subprocess.run(["ss", "-tnpH", "state", "established"],
                         capture_output=True, text=True).stdout
    per: dict[str, int] = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[2].endswith(f":{port}") or "pid=" not in line:
            continue
        pid = line.split("pid=")[1].split(",")[0]
        per[pid] = per.get(pid, 0) + 1
    return "/".join(str(n) for n in sorted(per.values(), reverse=True)) or "?"


@dataclass
class Row:
    """One series of the HTTP table: its label, its servers' URLs and the request it sends;
    ``shared_port`` is set for the shared-socket row, whose spread is counted with ss."""

    label: str
    urls: list[str]
    call: Call
    shared_port: int | None = None
    connections: int | None = None  # the row's own number of clients (else the table's)
    specs: range = range(0)  # its servers' places in the list of every row's servers
    meters: dict[str, Callable[[], float]] = field(default_factory=dict)  # set once started


def _measure(rows: list[Row], load_with: Callable[..., harness.Load], rounds: int,
             seconds: float, clients: int) -> list[tuple[list[harness.Load], list[str]]]:
    """Every row measured in turn, round after round: a change in the machine's load during the
    run hits every row alike instead of one. Per row, its loads and (shared socket) spreads."""
    measured: list[tuple[list[harness.Load], list[str]]] = [([], []) for _ in rows]
    for _ in range(rounds):
        for row, (loads, spreads) in zip(rows, measured, strict=True):
            timer = None
            if row.shared_port:  # connections are counted half-way through, while open
                port = row.shared_port
                timer = threading.Timer(seconds / 2, lambda spreads=spreads, port=port:
                                        spreads.append(_connections_per_process(port)))
                timer.start()
            loads.append(load_with(row.call, row.urls, row.connections or clients, seconds,
                                   row.meters))
            if timer:
                timer.join()
    return measured


def bench_http(inst: harness.Instance, paths: dict[str, str], generators: list[str]) -> None:
    """Every row's servers are started first, then measured with each load generator of
    ``generators`` ("wrk", "python") in turn, one table per generator."""
    rounds = harness.size(5, 3, 1)
    clients = harness.size(16, 16, 4)
    load_average = os.getloadavg()[0]
    token_env = dict(inst.env)
    ours_env = dict(token_env, HARMONIC_MCP_AUTH="off", HARMONIC_MCP_CONFORMANCE="1",
                    HOST="127.0.0.1")
    two = 1 if harness.SMOKE else 2
    rows: list[Row] = []
    results: list[tuple[str, float, list[tuple[list[harness.Load], list[str]]]]] = []
    specs: list[tuple[list[str], dict[str, str], str]] = []
    # A smoke run checks that every row runs, not its figures: a row whose servers would be
    # started exactly as an earlier row's (the same command and environment) is measured on
    # that row's servers instead, so each kind of server starts once.
    started: dict[tuple[Any, ...], Row] = {}
    with ExitStack() as stack:
        def add(label: str, cmd_of: Callable[[int], list[str]], env: dict[str, str],
                call: Call, servers: int = two, shared: bool = False,
                connections: int | None = None) -> None:
            kind = (tuple(cmd_of(0)), tuple(sorted(env.items())), servers, shared)
            if harness.SMOKE and not shared and kind in started:
                same = started[kind]
                rows.append(Row(label, same.urls, call, None, connections, same.specs))
                return
            ports = [harness.free_port() for _ in range(servers)]
            urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]
            first = len(specs)
            specs.extend((cmd_of(p), env, url) for p, url in zip(ports, urls, strict=True))
            rows.append(Row(label, urls, call, ports[0] if shared else None, connections,
                            range(first, len(specs))))
            started[kind] = rows[-1]

        add("ceiling: bare Flask JSON-RPC, gunicorn 2 × (1 process, 8 threads)",
            lambda p: harness.gunicorn(p, "bare_jsonrpc:app"),
            dict(inst.env, PYTHONPATH=str(BENCH)), Call("test_simple_text", era="bare"))
        add("ours: /mcp tools/call, gunicorn 2 × (1 process, 8 threads)", harness.gunicorn,
            ours_env, Call("test_simple_text"))
        add(f"ours: /mcp tools/call, {MODERN} stateless, gunicorn 2 × (1 process, 8 threads)",
            harness.gunicorn, ours_env, Call("test_simple_text", era="stateless"))
        add("ours: /mcp tools/call, gunicorn 1 × (2 processes, 8 threads), shared socket",
            lambda p: harness.gunicorn(p, workers=2), ours_env, Call("test_simple_text"),
            servers=1, shared=True)
        echo = Call("echo", {"text": "This is a simple text response for testing."})

        def sdk(mode: str) -> Callable[[int], list[str]]:
            return lambda p: [PY, str(BENCH / "mcp_sdk_server.py"), "http", str(p), mode]

        for mode in ("stateful", "stateless"):
            add(f"SDK MCPServer (FastMCP), uvicorn 2 × 1 process, JSON, {mode}", sdk(mode),
                inst.env, echo)
        nav = {"path": paths["decision"]}
        add(f"ours: /mcp navigate, decision page ({paths['options']} options, "
            f"{paths['voters']} voters), token auth, gunicorn 2 × (1 process, 8 threads)",
            harness.gunicorn, token_env, Call("navigate", nav, token=inst.token))
        add(f"ours: /mcp navigate, same page, {MODERN} stateless, token auth, "
            f"gunicorn 2 × (1 process, 8 threads)", harness.gunicorn, token_env,
            Call("navigate", nav, era="stateless", token=inst.token))
        # One agent calling one tool after another on one connection: the latency of a call,
        # with the servers far from saturated (the rows above run 16 connections at once).
        # One client needs one database connection at a time: small pools leave PostgreSQL's
        # 100 connections to the rows above, whose idle servers keep theirs open meanwhile.
        one_env = dict(ours_env, HARMONIC_DB_POOL_SIZE="1", HARMONIC_DB_MAX_OVERFLOW="1")
        add("one connection: ours, 2025-11-25 session, gunicorn 1 process, 8 threads",
            harness.gunicorn, one_env, Call("test_simple_text"), servers=1, connections=1)
        add("one connection: the same under gunicorn's own gthread worker",
            lambda p: harness.gunicorn(p, worker_class="gthread"), one_env,
            Call("test_simple_text"), servers=1, connections=1)
        add("one connection: SDK MCPServer (FastMCP), uvicorn 1 process, JSON, stateful",
            sdk("stateful"), inst.env, echo, servers=1, connections=1)
        # Every row's servers start together (a port is only taken when its server binds it).
        procs = stack.enter_context(harness.servers(specs))
        database_url = inst.env["DATABASE_URL"]
        for row in rows:
            row.meters = {"server": harness.process_cpu([procs[i].pid for i in row.specs])}
            if database_url.startswith("postgresql"):  # SQLite works inside the server
                row.meters["database"] = harness.database_cpu(database_url)

        for generator in generators:
            use_wrk = generator == "wrk"
            load_with = _wrk_load if use_wrk else _python_load
            # wrk counts only the requests answered within its time, so a row loses about one
            # request per connection each round: rounds are long enough that this is small
            # for slow rows too.
            seconds = harness.size(3, 2, 1) if use_wrk else harness.size(3, 2, 0.3)
            if not harness.SMOKE:  # warm up every server (imports, connection pools, caches)
                for row in rows:
                    load_with(row.call, row.urls, row.connections or clients, 1, {})
            results.append((generator, seconds,
                            _measure(rows, load_with, rounds, seconds, clients)))

    failed = 0
    for generator, seconds, measured in results:
        failed += _report_http(inst, rows, measured, generator == "wrk", rounds, seconds,
                               clients, two, load_average)
    if failed:
        raise SystemExit(f"{failed} row(s) of the HTTP table(s) had bad answers: "
                         f"their figures are not valid (see above)")


def _report_http(inst: harness.Instance, rows: list[Row],
                 measured: list[tuple[list[harness.Load], list[str]]], use_wrk: bool,
                 rounds: int, seconds: float, clients: int, two: int,
                 load_average: float) -> int:
    """Print one generator's HTTP table; the number of rows with bad answers."""
    table: list[list[str]] = []
    rates: list[float] = []
    errors: list[str] = []
    for row, (loads, spreads) in zip(rows, measured, strict=True):
        rates.append(harness.median([load.sample.rate for load in loads]))
        p50 = harness.median([load.sample.p50 for load in loads])
        p99 = harness.median([load.sample.p99 for load in loads])
        spread = (", ".join(spreads) if row.shared_port else
                  "/".join(str(sum(load.per_url[url] for load in loads))
                           for url in row.urls))
        wrong = [load.errors for load in loads if load.errors]
        if wrong:
            errors.append(f"{row.label}: {'; '.join(wrong)}")
            spread += " — ERRORS (below)"
        table.append([row.label, f"{rates[-1]:,.0f}", f"{p50:.2f}", f"{p99:.2f}", spread])

    ceiling, ours, modern_rate, _, sdk, sdk_stateless = rates[:6]
    # Each round's rates, in the same order: in a round the rows run one after another.
    _, ours_by_round, modern_by_round, _, sdk_by_round, sdk_stateless_by_round = [
        [load.sample.rate for load in loads] for loads, _spreads in measured[:6]]

    def each_round(mine: list[float], theirs: list[float]) -> str:
        return ", ".join(f"{ratio:.2f}" for ratio in harness.ratios_by_round(mine, theirs))

    one_ours, one_gthread, one_sdk = rates[-3:]  # the one-connection rows, added last
    per = clients // two
    database = "PostgreSQL" if "postgresql" in inst.env["DATABASE_URL"] else "SQLite"
    where = f"{database}; {PLACEMENT}" if PLACEMENT else database
    # Issue 22's goals: ≥ 1.5× the SDK on SQLite and ≥ 1× on PostgreSQL (whose round trips the
    # SDK's server, keeping no state in a database, never pays); ≥ 50% of the ceiling on SQLite.
    want = 1.5 if database == "SQLite" else 1.0

    def ceiling_goal(rate: float) -> str:
        if database != "SQLite":
            return " (no goal on PostgreSQL)"
        return f" (goal ≥ 0.5: {harness.goal(rate / ceiling >= 0.5)})"

    generator = (f"{harness.wrk_version()}, one process of one thread and {per} connections "
                 f"per server port, all started together (p50 and p99 of a round: the highest "
                 f"of the processes)" if use_wrk else
                 "the Python generator, one thread and one httpx connection per client"
                 f" ({'asked for' if harness.WRK else 'wrk is not installed'})")
    harness.print_table(
        f"Streamable HTTP, {clients} keep-alive connections, {rounds} interleaved round(s) of "
        f"{seconds:g} s per row ({where})",
        ["series", "req/s", "p50 ms", "p99 ms", "requests (or connections) per process"], table,
        [f"Load generator: {generator}. Figures are the median of the rounds (a goal's line "
         f"also gives each round's own ratio: in a round the rows run one after another); the last "
         f"column sums the rounds' requests per server, or lists each round's connections per "
         f"process for the shared socket. Load average {load_average:.2f} at the section's "
         f"start.",
         f"{VERSION} sessions — ours / SDK stateful: {ours / sdk:.2f} "
         f"(goal ≥ {want:g}: {harness.goal(ours / sdk >= want)}; each round: "
         f"{each_round(ours_by_round, sdk_by_round)}); ours / ceiling: "
         f"{ours / ceiling:.2f}{ceiling_goal(ours)}",
         f"{MODERN} stateless — ours / SDK stateless: {modern_rate / sdk_stateless:.2f} "
         f"(goal ≥ {want:g}: {harness.goal(modern_rate / sdk_stateless >= want)}; each round: "
         f"{each_round(modern_by_round, sdk_stateless_by_round)}); ours / ceiling: "
         f"{modern_rate / ceiling:.2f}{ceiling_goal(modern_rate)}",
         f"One connection (one agent's calls one after another; no goal) — ours / SDK "
         f"stateful: {one_ours / one_sdk:.2f}; bin/serve's worker / gunicorn's gthread: "
         f"{one_ours / one_gthread:.2f}",
         *[f"**ERRORS** — {line}" for line in errors]])
    if use_wrk:
        _report_cpu(rows, measured, where)
    return len(errors)


def _report_cpu(rows: list[Row], measured: list[tuple[list[harness.Load], list[str]]],
                database: str) -> None:
    """Where each row's calls spent CPU (µs per call, median of the rounds): the server's
    processes, the database's, wrk's. The machine's cores are shared by all three, so a server
    that pays a database's CPU on top of its own answers fewer calls than its own share alone
    would allow: the sessions rows' own-CPU ratio separates that from the server's code."""
    meters = ["server", "database", "load generator"]
    table: list[list[str]] = []
    per_call: list[dict[str, float]] = []
    for row, (loads, _spreads) in zip(rows, measured, strict=True):
        costs = {name: harness.median([load.cpu[name] / load.requests * 1e6 for load in loads
                                       if load.requests and name in load.cpu])
                 for name in meters}
        costs["total"] = sum(v for v in costs.values() if not math.isnan(v))  # NaN: not metered
        per_call.append(costs)
        table.append([row.label, *(f"{costs[n]:,.0f}" if not math.isnan(costs[n]) else "—"
                                   for n in [*meters, "total"])])
    ours, sdk = per_call[1], per_call[4]
    modern, sdk_stateless = per_call[2], per_call[5]
    notes = ["CPU seconds of each part over a round (read from /proc before and after wrk) "
             "÷ the calls answered in it. The database column counts the PostgreSQL processes "
             "serving the benchmark's database; on SQLite that work is inside the server.",
             f"{VERSION} sessions — the server's own CPU per call, SDK stateful ÷ ours: "
             f"{sdk['server'] / ours['server']:.2f}; with the database's added to ours: "
             f"{sdk['server'] / (ours['server'] + _or0(ours['database'])):.2f}",
             f"{MODERN} stateless — the same: {sdk_stateless['server'] / modern['server']:.2f}; "
             f"with the database's: "
             f"{sdk_stateless['server'] / (modern['server'] + _or0(modern['database'])):.2f}"]
    harness.print_table(f"CPU per call, µs ({database}, the same rounds)",
                        ["series", *meters, "total"], table, notes)


def _or0(value: float) -> float:
    return 0.0 if math.isnan(value) else value


# main ----------------------------------------------------------------------------------------

def main() -> None:
    global PLACEMENT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="about a minute per section")
    parser.add_argument("--smoke", action="store_true", help="a few iterations (CI)")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    parser.add_argument("--only", default="dispatch,wrapper,stdio,http")
    parser.add_argument("--database-cpu", action="store_true",
                        help="with --postgres: the PostgreSQL server on a CPU of its own and "
                             "everything else on the others, as with the database on a machine "
                             "of its own (needs root or the server's user)")
    parser.add_argument("--load", choices=("wrk", "python", "both"), default="wrk",
                        help="http: the load generator (wrk falls back to the Python one "
                             "where wrk is not installed); both: one table each")
    args = parser.parse_args()
    if args.database_cpu and not args.postgres:
        parser.error("--database-cpu places the PostgreSQL server: add --postgres")
    sections = set(args.only.split(","))
    if sections & {"wrapper", "stdio", "http"}:  # the alternatives measured beside ours
        harness.require({"mcp": "the official MCP SDK, whose servers run beside ours",
                         "uvicorn": "serves the SDK's HTTP server",
                         "httpx": "the wrapper server's HTTP client"})
    with ExitStack() as stack:
        if args.database_cpu:
            PLACEMENT = stack.enter_context(harness.database_on_its_own_cpu())
        url = stack.enter_context(harness.pg_database("bench_mcp")) if args.postgres else None
        inst = harness.make_instance(url)
        paths: dict[str, Any] = {}
        if sections & {"wrapper", "http"}:
            import seeds

            n = harness.size(20, 20, 4)
            paths = seeds.busy_studio(harness.app_for(inst), n)
            paths.update(options=n, voters=5 * n // 2)
        if "dispatch" in sections:
            bench_dispatch()
        if "wrapper" in sections:
            bench_wrapper(inst, paths)
        if "stdio" in sections:
            bench_stdio(inst)
        if "http" in sections:
            generators = {"wrk": ["wrk"], "python": ["python"],
                          "both": ["wrk", "python"]}[args.load]
            if not harness.WRK:  # the fallback, named as such under its table
                generators = ["python"]
            bench_http(inst, paths, generators)
    harness.print_footer()


if __name__ == "__main__":
    main()

"""Where a trivial ``/mcp`` ``tools/call`` spends its time, beside a bare Flask JSON-RPC view.

In-process and without a network or a test client: each app is called as a WSGI application
with a request built once (only its body stream is new each time), so what is timed is the
app's own handling. Three series, interleaved round by round: the bare view of
``bare_jsonrpc.py`` (the ceiling of ``mcp_bench.py``'s HTTP rows), and our ``/mcp`` answering
``test_simple_text`` in a 2025-11-25 session and in the 2026-07-28 stateless era, with auth off
on loopback as the HTTP rows run. Then a cProfile of each, its own time split by whose code it
is: ours (``app/``), Flask and its extensions, Werkzeug, SQLAlchemy, the database driver, the
standard library. The profiler slows every function call alike, so the split is a share, not
a time.

    .venv/bin/python bench/trivial_call.py [--quick | --smoke] [--postgres]
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

ACCEPT = "application/json, text/event-stream"
MODERN = "2026-07-28"


def wsgi_call(app: Any, body: str, headers: dict[str, str]) -> Callable[[], None]:
    """One call of ``app`` as a WSGI server makes it, with a request built once."""
    from werkzeug.test import EnvironBuilder

    builder = EnvironBuilder(path="/mcp", method="POST", data=body, headers=headers,
                             environ_base={"REMOTE_ADDR": "127.0.0.1"})
    base = builder.get_environ()
    raw = body.encode()

    def start_response(status: str, _headers: Any, _exc_info: Any = None) -> None:
        assert status.startswith("200"), status

    def call() -> None:
        environ = dict(base)
        environ["wsgi.input"] = io.BytesIO(raw)
        answer = app(environ, start_response)
        try:
            content = b"".join(answer)
        finally:
            getattr(answer, "close", lambda: None)()
        assert b'"result"' in content and b'"isError":true' not in content, content[:300]

    return call


READ_ALONE = "the session row's read on the bare driver (its SQL, a connection kept open)"
STATELESS_THEN_READ = f"ours, {MODERN} stateless, then that read on the bare driver"
NAP = 50e-6  # about a PostgreSQL round trip on loopback
SLEEP_ALONE = f"a {NAP * 1e6:.0f} µs sleep (no database)"
STATELESS_THEN_SLEEP = f"ours, {MODERN} stateless, then that sleep"


def nap() -> None:
    time.sleep(NAP)


def main() -> None:
    parser = harness.arguments(__doc__)
    args = parser.parse_args()
    count = harness.size(10000, 3000, 30)

    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_trivial")) if args.postgres else None
        inst = harness.make_instance(url)
        os.environ.update(HARMONIC_MCP_AUTH="off", HARMONIC_MCP_CONFORMANCE="1", HOST="127.0.0.1")
        app = harness.app_for(inst)
        import bare_jsonrpc

        client = app.test_client()
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "trivial", "version": "1"}}}
        answer = client.post("/mcp", json=init, headers=headers)
        assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
        session = dict(headers, **{"Mcp-Session-Id": answer.headers["Mcp-Session-Id"],
                                   "MCP-Protocol-Version": "2025-11-25"})
        client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=session)
        call = {"name": "test_simple_text", "arguments": {}}
        body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "trivial", "version": "1"}}
        modern = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                             "params": dict(call, _meta=meta)})
        stateless = dict(headers, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                                     "Mcp-Name": "test_simple_text"})
        calls = {
            "bare Flask JSON-RPC view (baseline)": wsgi_call(bare_jsonrpc.app, body, headers),
            "ours, 2025-11-25 session": wsgi_call(app, body, session),
            f"ours, {MODERN} stateless": wsgi_call(app, modern, stateless),
        }
        with harness.session_read_on_the_driver(app, answer.headers["Mcp-Session-Id"]) as read:
            timed = dict(calls, **{
                READ_ALONE: read,
                STATELESS_THEN_READ: lambda: (calls[f"ours, {MODERN} stateless"](), read()),
                SLEEP_ALONE: nap,
                STATELESS_THEN_SLEEP: lambda: (calls[f"ours, {MODERN} stateless"](), nap()),
            })
            samples = harness.interleaved(timed, rounds=5, per_round=max(count // 5, 1),
                                          warmup=50)
        base = next(iter(samples.values())).p50
        backend = "PostgreSQL" if args.postgres else "SQLite"

        def cpu(name: str) -> float:
            return samples[name].cpu / len(samples[name].latencies) * 1e6

        session_cpu = cpu("ours, 2025-11-25 session")
        stateless_cpu = cpu(f"ours, {MODERN} stateless")
        around = cpu(STATELESS_THEN_READ) - stateless_cpu
        napped = cpu(STATELESS_THEN_SLEEP) - stateless_cpu
        harness.print_table(
            f"A trivial tools/call, the WSGI app alone ({backend}, {count} calls each, "
            f"interleaved)", ["series", "p50 µs", "p99 µs", "÷ bare p50", "CPU µs per call"],
            [[name, f"{s.p50 * 1000:.0f}", f"{s.p99 * 1000:.0f}", f"{s.p50 / base:.2f}×",
              f"{cpu(name):.0f}"] for name, s in samples.items()],
            ["CPU: this process's, over each series ÷ its calls (the database server's own "
             "is not in it).",
             f"What the session adds to a call, in CPU: the session call less the "
             f"stateless one, {session_cpu - stateless_cpu:.0f} µs (the session comes from "
             f"its process's copy of the row, app.mcp.store: a trivial call reads nothing). "
             f"The row's read on the bare driver, made when needed "
             f"and waited for, costs {cpu(READ_ALONE):.0f} µs alone and {around:.0f} µs after "
             f"a stateless call: {around - cpu(READ_ALONE):.0f} µs is what waiting for it costs "
             f"the call's other work.",
             f"Where a read waits for a database server, the process sleeps, and sleeping "
             f"itself costs the work around it on this machine: a bare {NAP * 1e6:.0f} µs "
             f"sleep costs {cpu(SLEEP_ALONE):.0f} µs of CPU alone and "
             f"{napped:.0f} µs after a stateless call ({napped - cpu(SLEEP_ALONE):.0f} µs "
             f"more, with no database and no code of ours in it)."])

        shares: dict[str, dict[str, float]] = {}
        for name, run in calls.items():
            split = harness.owners_of(run, max(count // 5, 1))
            total = sum(split.values()) or 1.0
            shares[name] = {key: value / total for key, value in split.items()}
        owners = harness.owner_names()
        harness.print_table(
            "Whose code the time is in (share of each series' profiled own time)",
            ["code", *calls],
            [[who, *(f"{shares[name].get(who, 0.0) * 100:.0f}%" for name in calls)]
             for who in owners if any(shares[name].get(who) for name in calls)])
    harness.print_footer()


if __name__ == "__main__":
    main()

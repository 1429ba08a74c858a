"""Where the time of one /mcp ``tools/call`` goes: SQL statements per call and a cProfile.

Runs the app in-process (Flask's test client, so no network and no thread hand-off: the
request says ``Accept: application/json``, which the transport answers inline) with a Bearer
token and a 2025-11-25 session (and navigate once more in the stateless 2026-07-28 era), on
the busy decision page of ``seeds.busy_studio``. For each tool it prints the statements one
call runs (grouped by table and verb) and the functions with the most cumulative time.

Then navigate's own cost beside the page's (issue item: overhead above the render ≤ 0.3 ms
at p50, shown with a 95% confidence bound): the same page rendered by the in-process
dispatcher alone (``app.core.dispatch``, what navigate runs to fetch it) and through the
navigate tool in-process (``McpServer.handle`` as ``bin/mcp-server`` calls it, with its audit
row and teach check), call after call alternately, without the profiler; each call in an
app context of its own that ends with the database session's removal, as every message of
``bin/mcp-server`` and every HTTP request runs.

    .venv/bin/python bench/profile_mcp.py [--calls 200] [--postgres] [--top 30] [--smoke]
    .venv/bin/python bench/profile_mcp.py --only overhead [--calls 400]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import re
import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import seeds  # noqa: E402
from sqlcount import counting  # noqa: E402

VERB = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)",
                  re.IGNORECASE)
TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE)\s+\"?(\w+)", re.IGNORECASE)


def shape(statement: str) -> str:
    verb = VERB.match(statement)
    table = TABLE.search(statement)
    return f"{verb.group(1).upper() if verb else statement[:12]} {table.group(1) if table else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--only", choices=("profile", "overhead"), default=None,
                        help="one part only: the per-tool profiles, or navigate's overhead")
    args = parser.parse_args()
    calls = 3 if args.smoke else args.calls
    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_prof")) if args.postgres else None
        inst = harness.make_instance(url)
        app = harness.app_for(inst)
        paths = seeds.busy_studio(app, 4 if args.smoke else 20)
        client = app.test_client()
        headers = {"Authorization": f"Bearer {inst.token}", "Accept": "application/json",
                   "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "profile", "version": "1"}}}
        answer = client.post("/mcp", json=init, headers=headers)
        headers["Mcp-Session-Id"] = answer.headers["Mcp-Session-Id"]
        headers["MCP-Protocol-Version"] = "2025-11-25"
        client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=headers)
        vote = {"option_title": "Option 1", "accept": True, "prefer": False}
        tools: dict[str, dict[str, Any]] = {
            "ping": {"method": "ping"},
            "tools/call navigate (decision page)": {
                "method": "tools/call",
                "params": {"name": "navigate", "arguments": {"path": paths["decision"]}}},
            "tools/call execute_action vote": {
                "method": "tools/call",
                "params": {"name": "execute_action",
                           "arguments": {"action": "vote", "path": paths["decision"],
                                         "params": vote}}},
        }
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "profile", "version": "1"}}
        stateless = {"Authorization": headers["Authorization"], "Accept": "application/json",
                     "Content-Type": "application/json", "MCP-Protocol-Version": "2026-07-28",
                     "Mcp-Method": "tools/call", "Mcp-Name": "navigate"}
        tools["tools/call navigate, 2026-07-28 stateless"] = {
            "method": "tools/call",
            "params": {"name": "navigate", "arguments": {"path": paths["decision"]},
                       "_meta": meta}}
        if args.only == "overhead":
            tools = {}
        for label, message in tools.items():
            body = json.dumps({"jsonrpc": "2.0", "id": 7, **message})
            sent = stateless if "stateless" in label else headers

            def call(body: str = body, sent: dict[str, str] = sent) -> None:
                response = client.post("/mcp", data=body, headers=sent)
                assert response.status_code == 200, response.get_data(as_text=True)[:300]
                assert b'"isError":true' not in response.data, response.data[:300]

            call()
            call()
            with counting(app) as statements:
                call()
            kinds = Counter(shape(s) for s in statements)
            harness.print_table(f"{label}: {len(statements)} SQL statements per call",
                                ["statement", "count"],
                                [[k, str(n)] for k, n in kinds.most_common()])
            profile = cProfile.Profile()
            sample = harness.Sample()
            profile.enable()
            for _ in range(calls):
                sample.latencies.append(_timed(call))
            profile.disable()
            out = io.StringIO()
            stats = pstats.Stats(profile, stream=out)
            stats.sort_stats("cumulative").print_stats(args.top)
            print(f"\n{label}: {sample.summary()} under the profiler ({calls} calls)\n")
            print("```")
            print("\n".join(line for line in out.getvalue().splitlines()
                            if line.strip() and not line.startswith("   Ordered")))
            print("```")
        if args.only != "profile":
            navigate_overhead(app, inst.token, paths["decision"], 20 if args.smoke
                              else max(args.calls, 100))
    harness.print_footer()


def navigate_overhead(app: Any, token: str, path: str, calls: int) -> None:
    """The page rendered by the dispatcher alone against the navigate tool in-process, call
    after call alternately (a drift in the machine's load hits both alike)."""
    import statistics
    import time

    from app.core.dispatch import dispatch
    from app.core.token_cache import identity_from_token
    from app.db import serving
    from app.extensions import db
    from app.mcp.context import SessionState

    engine = app.extensions["mcp"]
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "navigate", "arguments": {"path": path}}}

    class Sink:
        def notify(self, message: dict[str, Any]) -> None:
            pass

        def request(self, *args: Any) -> dict[str, Any]:
            raise RuntimeError("navigate asks nothing")

    with app.app_context():
        identity = identity_from_token(token)
        session = SessionState("bench-overhead")  # as bin/mcp-server keeps it: in memory
        session.initialized = True
        sink = Sink()

        # Each call in an app context of its own, ended with the session's removal, as
        # bin/mcp-server runs every message (and as an HTTP request ends its session): both
        # series then pay for ending their database transaction once, where the page alone
        # left inside one long context would leave that cost to whatever ran next.
        def render() -> None:
            with app.app_context():
                page = dispatch("GET", path, identity)
                db.session.remove()
            assert page.status == 200, page.text[:300]

        def navigate() -> None:
            with app.app_context(), serving():  # as bin/mcp-server serves each message
                answer = engine.handle(message, session, sink, identity)
                db.session.remove()
            assert answer is not None and not answer["result"].get("isError"), answer

        pairs: list[tuple[float, float]] = []
        for n in range(calls + 10):
            times = []
            for call in (render, navigate) if n % 2 else (navigate, render):
                started = time.perf_counter()
                call()
                times.append(time.perf_counter() - started)
            if n >= 10:  # warm-up
                pairs.append((times[0], times[1]) if n % 2 else (times[1], times[0]))
    render_ms = [r * 1000 for r, _ in pairs]
    navigate_ms = [nav * 1000 for _, nav in pairs]
    added = [nav - r for r, nav in zip(render_ms, navigate_ms, strict=True)]
    p50 = statistics.median
    rows = [["the page alone: dispatch GET (Markdown)", f"{p50(render_ms):.2f}"],
            ["navigate, in-process tools/call", f"{p50(navigate_ms):.2f}"],
            ["navigate's overhead: p50 of navigate − p50 of the page",
             f"{p50(navigate_ms) - p50(render_ms):.2f}"],
            ["navigate's overhead: p50 of (navigate − page), call by call", f"{p50(added):.2f}"]]
    low, high = median_bounds(added)
    rows.append(["95% bounds of that p50 (order statistics of the pairs)",
                 f"{low:.2f} – {high:.2f}"])
    harness.print_table(f"navigate above the page's own render ({len(pairs)} pairs, "
                        f"alternating, {path})", ["series", "p50 ms"], rows,
                        [f"Goal: overhead ≤ 0.3 ms at p50: "
                         f"{harness.goal(p50(added) <= 0.3)}; the upper bound "
                         f"{'is' if high <= 0.3 else 'is not'} within it"])


def median_bounds(values: list[float], z: float = 1.96) -> tuple[float, float]:
    """A distribution-free 95% confidence interval of the median: the order statistics
    n/2 ± z·√n/2 (the sign test's), so one noisy pair cannot move it much."""
    import math

    ordered = sorted(values)
    half = z * math.sqrt(len(ordered)) / 2
    low = max(math.floor(len(ordered) / 2 - half), 0)
    high = min(math.ceil(len(ordered) / 2 + half), len(ordered) - 1)
    return ordered[low], ordered[high]


def _timed(call: Any) -> float:
    import time

    started = time.perf_counter()
    call()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()

"""Where the time of one /mcp ``tools/call`` goes: SQL statements per call and a cProfile.

Runs the app in-process (Flask's test client, so no network and no thread hand-off: the
request says ``Accept: application/json``, which the transport answers inline) with a Bearer
token and a 2025-11-25 session (and navigate once more in the stateless 2026-07-28 era), on
the busy decision page of ``seeds.busy_studio``. For each tool it prints the statements one
call runs (grouped by table and verb) and the functions with the most cumulative time.

    .venv/bin/python bench/profile_mcp.py [--calls 200] [--postgres] [--top 30] [--smoke]
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
    harness.print_footer()


def _timed(call: Any) -> float:
    import time

    started = time.perf_counter()
    call()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()

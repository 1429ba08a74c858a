"""Every benchmark still runs: each script with ``--smoke`` (a few iterations) as a subprocess.

No timing is asserted — the numbers of a smoke run mean nothing. What is checked is that the
script completes, prints its tables with their rows, and tells how to rerun it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = os.environ.get("HARMONIC_TEST_BACKENDS", "sqlite,postgresql").split(",")

# script, extra arguments, lines the output must contain
CASES = [
    ("core_pages.py", [], ["### SQL statements per request", "| decision (md) |",
                           "### Render time", "| bare Flask, fixed Markdown |"]),
    ("floorplans_bench.py", [], ["parse+val", "### modify_floorplan", "| rename_room |"]),
    ("mcp_bench.py", ["--only", "dispatch,stdio"],
     ["### In-process JSON-RPC dispatch", "| ping: ours |", "### stdio cold start",
      "spawn → initialize response: SDK", "| stdio ping, sequential: ours |"]),
    ("mcp_bench.py", ["--only", "wrapper,http"],
     ["### In-process (bin/mcp-server) against a wrapper", "| navigate: wrapper over HTTP |",
      "### Streamable HTTP", "| ceiling: bare Flask JSON-RPC", "| SDK MCPServer (FastMCP)",
      "shared socket", "/mcp navigate", "2026-07-28 stateless"]),
    ("proxy_bench.py", [], ["### Sequential get_walls calls", "| proxied: app /rpc, recording on |",
                            "| proxied: app /rpc, not recording |",
                            "### Throughput", "Proxied / direct:"]),
    ("profile_mcp.py", [], ["tools/call navigate (decision page):", "SQL statements per call",
                            "tools/call navigate, 2026-07-28 stateless:",
                            "cumtime"]),
]
PG_CASES = [
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
                         ids=[f"{c[0]}{' ' + c[1][1] if c[1] else ''}" for c in CASES])
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

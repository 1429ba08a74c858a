"""A benchmark that needs what ``bin/dev`` does not install says so before measuring."""

from __future__ import annotations

import subprocess
import sys

from tests.mcp.conftest import ROOT


def test_a_missing_module_stops_a_benchmark_with_the_command_that_installs_it() -> None:
    code = ("import sys; sys.path.insert(0, 'bench'); import harness; "
            "harness.require({'json': 'always there', "
            "'no_such_module_for_bench': 'what it is for'})")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert "no_such_module_for_bench: what it is for" in done.stderr
    assert "json" not in done.stderr.split("installed:", 1)[1].split("install them")[0]
    assert ".venv/bin/pip install -e '.[test]'" in done.stderr


def test_mcp_bench_without_the_sdk_says_so_before_starting_anything() -> None:
    # As after bin/dev alone: the SDK cannot be imported (a finder refuses it).
    code = """
import runpy, sys
class NoSdk:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp" or name.startswith("mcp."):
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, NoSdk())
sys.argv = ["bench/mcp_bench.py", "--smoke", "--only", "http"]
runpy.run_path("bench/mcp_bench.py", run_name="__main__")
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "mcp: the official MCP SDK" in done.stderr
    assert "pip install -e '.[test]'" in done.stderr
    assert "gunicorn" not in done.stdout + done.stderr  # nothing was started


def test_a_database_cpu_without_postgresql_is_refused_before_anything_starts() -> None:
    done = subprocess.run([sys.executable, "bench/mcp_bench.py", "--smoke", "--database-cpu",
                           "--only", "http"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--database-cpu places the PostgreSQL server: add --postgres" in done.stderr
    assert done.stdout == ""

"""The benchmarks' CPU meters (``bench/harness.py``) count what they say they count.

``mcp_bench.py`` splits each HTTP row's CPU per call between the server's processes, the
database's and the load generator. Each meter is checked here against work whose CPU is known
to land where it should: a busy grandchild under a parent (a gunicorn worker under its master),
a PostgreSQL backend of one database (and not of another), a child process that has ended.
The harness is imported in a child interpreter, as the benchmarks import it, so its settings
never reach this test process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = os.environ.get("HARMONIC_TEST_BACKENDS", "sqlite,postgresql").split(",")
BUSY = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"


def measured(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'bench')\n"
                           + script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_server_meter_counts_its_descendants_and_nothing_else() -> None:
    out = measured(f"""
import subprocess, sys, harness
busy = {BUSY!r}
# A parent that starts a busy child and waits for it, as a gunicorn master holds its workers;
# beside it an unrelated busy process the meter must not count.
parent = subprocess.Popen([sys.executable, "-c",
    "import subprocess, sys; subprocess.run([sys.executable, '-c', sys.argv[1]])", busy])
other = subprocess.Popen([sys.executable, "-c", busy])
meter = harness.process_cpu([parent.pid])
import time
deadline = time.monotonic() + 30
best = 0.0
while parent.poll() is None and time.monotonic() < deadline:
    best = max(best, meter())  # read while the child lives: an ended child leaves the tree
    time.sleep(0.02)
other.wait()
print(round(best, 2))
""")
    counted = float(out.split()[-1])
    # The busy child's 0.4 s (the parents' start-up adds a little; the other process's 0.4 s
    # would double it).
    assert 0.3 <= counted < 0.75, counted


def test_the_load_generator_meter_counts_ended_children() -> None:
    out = measured(f"""
import subprocess, sys, harness
before = harness.children_cpu()
subprocess.run([sys.executable, "-c", {BUSY!r}], check=True)
print(round(harness.children_cpu() - before, 2))
""")
    assert 0.35 <= float(out.split()[-1]) < 0.8


@pytest.mark.skipif("postgresql" not in BACKENDS, reason="PostgreSQL is not among the backends")
def test_a_database_meter_counts_the_backends_of_its_database_only() -> None:
    out = measured("""
import harness, psycopg
with harness.pg_database("meter_a") as a, harness.pg_database("meter_b") as b:
    meter_a, meter_b = harness.database_cpu(a), harness.database_cpu(b)
    with psycopg.connect(a.replace("postgresql+psycopg", "postgresql")) as ca, \\
            psycopg.connect(b.replace("postgresql+psycopg", "postgresql")) as cb:
        start_a, start_b = meter_a(), meter_b()
        # About half a second of the server's CPU, on database a's backend only.
        ca.execute("SELECT count(*) FROM generate_series(1, 6000000)").fetchall()
        cb.execute("SELECT 1").fetchall()
        print(round(meter_a() - start_a, 2), round(meter_b() - start_b, 2))
""")
    on_a, on_b = (float(x) for x in out.split()[-2:])
    assert on_a >= 0.15, on_a
    assert on_b <= 0.05, on_b


@pytest.mark.skipif("postgresql" not in BACKENDS, reason="PostgreSQL is not among the backends")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or os.geteuid() != 0,
                    reason="moving the server's processes needs two CPUs and root")
def test_the_database_gets_a_cpu_of_its_own_and_every_mask_comes_back() -> None:
    # mcp_bench.py --database-cpu: PostgreSQL's processes (a backend opened before, one forked
    # during) on the last CPU, the benchmark and the processes it starts on the others;
    # afterwards every one of them as it was.
    out = measured("""
import json, os, subprocess, sys, harness, psycopg
url = harness.pg_url("test").replace("postgresql+psycopg", "postgresql")
mask = lambda pid: sorted(os.sched_getaffinity(pid))
seen = {"every": mask(0)}
with psycopg.connect(url, autocommit=True) as before:
    first = before.execute("SELECT pg_backend_pid()").fetchone()[0]
    with harness.database_on_its_own_cpu() as where:
        during = psycopg.connect(url, autocommit=True)
        second = during.execute("SELECT pg_backend_pid()").fetchone()[0]
        child = subprocess.run([sys.executable, "-c", "import os; print(sorted("
                                "os.sched_getaffinity(0)))"], capture_output=True, text=True)
        seen["inside"] = {"where": where, "before": mask(first), "during": mask(second),
                          "ours": mask(0), "child": json.loads(child.stdout)}
    seen["after"] = {"before": mask(first), "during": mask(second), "ours": mask(0)}
    during.close()
print(json.dumps(seen))
""")
    seen = json.loads(out.splitlines()[-1])
    every = seen["every"]
    last, others = every[-1:], every[:-1]
    assert seen["inside"] == {"where": f"its server on CPU {last[0]} alone, the benchmark's "
                                       f"processes on CPU {', '.join(map(str, others))}",
                              "before": last, "during": last, "ours": others, "child": others}
    assert seen["after"] == {"before": every, "during": every, "ours": every}

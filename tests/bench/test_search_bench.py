"""The search benchmark still runs (``--smoke``: 300 items, a few queries) on each backend and
prints its table: the index beside the LIKE scan for every query. No timing is asserted."""

from __future__ import annotations

import pytest

from tests.bench.conftest import SCRIPTS
from tests.bench.test_bench_smoke import BACKENDS, run

pytestmark = [pytest.mark.usefixtures("bench_template"), SCRIPTS]

EXPECTED = ["### Search a studio of 300 items", "| rare word |", "| phrase |",
            "| word + kind:note |", "LIKE p99 ms", "Index rebuilt (300 items)",
            "The whole /search page"]


@pytest.mark.parametrize("backend", [b for b in ("sqlite", "postgresql") if b in BACKENDS])
def test_search_benchmark_completes(backend: str) -> None:
    args = ["--postgres"] if backend == "postgresql" else []
    out = run("search_bench.py", args)
    missing = [line for line in EXPECTED if line not in out]
    assert not missing, f"search_bench.py printed no {missing}:\n{out[-3000:]}"
    assert "PostgreSQL" in out if backend == "postgresql" else "SQLite" in out
    assert "Rerun: `.venv/bin/python bench/search_bench.py --smoke" in out

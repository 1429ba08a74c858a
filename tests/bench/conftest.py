"""One migrated SQLite instance with the demo studio, which every benchmark script run here
copies instead of migrating and seeding its own (``harness.make_instance`` reads
``HARMONIC_BENCH_TEMPLATE``): the same start for each script, a few seconds less each.

Only the modules that run the scripts ask for it, and they share one xdist group, so a full run
makes it once rather than on every worker that runs a test of this folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


# The xdist group of the modules that use ``bench_template``.
SCRIPTS = pytest.mark.xdist_group("bench-scripts")


@pytest.fixture(scope="session")
def bench_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    folder = tmp_path_factory.mktemp("bench-template")
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                    "import harness; harness.write_template(sys.argv[2])", str(BENCH),
                    str(folder)], check=True, capture_output=True, timeout=300)
    previous = os.environ.get("HARMONIC_BENCH_TEMPLATE")
    os.environ["HARMONIC_BENCH_TEMPLATE"] = str(folder)
    yield
    if previous is None:
        os.environ.pop("HARMONIC_BENCH_TEMPLATE", None)
    else:
        os.environ["HARMONIC_BENCH_TEMPLATE"] = previous

"""``bin/test`` runs on two xdist workers with ``--dist loadgroup`` and relies on it: the load
and fault suites start their own servers, and two of them at once overrun the database's
connections. This checks, with a real pytest run of its own, that a group's tests share one
worker whatever the installed pytest and pytest-xdist, and that the check of
``tests/load/conftest.py`` passes on what was grouped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODULE = '''
import os
import pytest

pytestmark = pytest.mark.xdist_group("together")

@pytest.mark.parametrize("n", range(8))
def test_where(n):
    with open(os.environ["WHERE_LOG"], "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''
CONFTEST = "from tests.load.conftest import pytest_collection_finish, pytest_runtest_setup\n"


def test_a_groups_tests_run_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(MODULE)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    log = tmp_path / "where.log"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "WHERE_LOG": str(log), "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    workers = log.read_text().split()
    assert len(workers) == 8
    assert len(set(workers)) == 1, workers

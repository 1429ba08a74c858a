"""The load and fault suites group their tests with ``xdist_group`` (so ``--dist loadgroup``
keeps each group on one worker); pyproject.toml registers the marker, so plain runs know it too.

The grouping is checked, not trusted: two groups that start their own servers on two workers at
once overrun PostgreSQL's connections and both cores, and fail as flakes far from the cause.
pytest-xdist marks a grouped test by a suffix of its node id (``…@load``); pytest 9.2 made node
ids structured, and that suffix silently stopped taking effect (pytest-xdist issue 1386). A
grouped test that a worker collects without its suffix fails, saying so.
"""

from __future__ import annotations

import pytest


def ungrouped(items: list[pytest.Item]) -> list[str]:
    """The node ids of tests marked ``xdist_group`` that lack the group's suffix."""
    lost = []
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if names and not item.nodeid.endswith("@" + "_".join(names)):
            lost.append(item.nodeid)
    return lost


_UNGROUPED = pytest.StashKey[set[str]]()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # ``loadgroup`` is set on xdist's workers only, when the run asked for --dist loadgroup.
    if getattr(session.config.option, "loadgroup", False):
        session.config.stash[_UNGROUPED] = set(ungrouped(session.items))


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Each such test fails with the reason (an error raised at collection on a worker would
    # reach the run only as xdist's "worker crashed", with no reason given).
    if item.nodeid in item.config.stash.get(_UNGROUPED, set()):
        pytest.fail("--dist loadgroup did not keep this test with its xdist_group: this "
                    "pytest-xdist and this pytest do not work together (pytest-xdist issue "
                    "1386); install the versions pyproject.toml allows (bin/test does)",
                    pytrace=False)

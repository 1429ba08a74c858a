"""The load and fault suites group their tests with ``xdist_group`` (so ``--dist loadgroup``
keeps each group on one worker); registered here so plain runs know the marker too."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker with "
                                       "the rest of its group under --dist loadgroup")

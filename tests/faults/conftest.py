"""Fault tests share the load suite's check that the grouping took effect (pyproject.toml
registers the marker)."""

from tests.load.conftest import (  # noqa: F401
    pytest_collection_finish,
    pytest_runtest_setup,
)

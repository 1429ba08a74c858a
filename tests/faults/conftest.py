"""Fault tests share the load suite's marker registration and its check that the grouping
took effect."""

from tests.load.conftest import (  # noqa: F401
    pytest_collection_finish,
    pytest_configure,
    pytest_runtest_setup,
)

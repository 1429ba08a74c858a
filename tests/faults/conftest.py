"""Fault tests share the load suite's marker registration."""

from tests.load.conftest import pytest_configure  # noqa: F401

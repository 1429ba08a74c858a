"""The fuzz budget, the inputs-tried tally and the no-partial-write digest.

Short form (CI): a fixed, derandomized number of examples per target. ``HARMONIC_FUZZ=long``
multiplies it by ``HARMONIC_FUZZ_FACTOR`` (default 25) and lets hypothesis pick fresh inputs.
Each fuzz test records how many inputs it tried; the terminal summary adds them up.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from hypothesis import HealthCheck, settings

LONG = os.environ.get("HARMONIC_FUZZ", "").lower() == "long"
FACTOR = int(os.environ.get("HARMONIC_FUZZ_FACTOR") or 25) if LONG else 1
# Rows that change on every request by design: token last use, MCP session state and the
# tool-call audit. Everything else must be untouched by a refused input.
VOLATILE = ("api_tokens", "mcp_")


def budget(short: int) -> settings:
    """Hypothesis settings for ``short`` examples in CI, ``short * FACTOR`` in the long form."""
    return settings(max_examples=short * FACTOR, deadline=None, derandomize=not LONG,
                    database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


class Tally:
    """Inputs tried, and the outcomes seen (a fuzzer that never gets past validation is weak)."""

    def __init__(self) -> None:
        self.inputs = 0
        self.outcomes: Counter[Any] = Counter()

    def __call__(self, outcome: Any = None) -> None:
        self.inputs += 1
        self.outcomes[outcome] += 1


@pytest.fixture
def tried(record_property: Any) -> Iterator[Tally]:
    tally = Tally()
    yield tally
    record_property("fuzz_inputs", tally.inputs)
    record_property("fuzz_outcomes", dict(tally.outcomes))


@pytest.fixture(autouse=True)
def _no_rate_limit(request: pytest.FixtureRequest) -> None:
    # Fuzzing sends thousands of requests with one token: the limiter is tested elsewhere.
    if "app" in request.fixturenames:
        app: Flask = request.getfixturevalue("app")
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT", 0)


def digest(app: Flask, skip: tuple[str, ...] = ()) -> str:
    """A hash of every row of every table (volatile ones and ``skip`` aside)."""
    from sqlalchemy import select, text

    from app.extensions import db

    tables = [t for t in db.metadata.sorted_tables if not t.name.startswith(VOLATILE + skip)]
    with app.app_context():
        if db.engine.dialect.name == "postgresql":
            # One round trip instead of one per table: the server hashes each table's rows.
            parts = " UNION ALL ".join(
                f"SELECT '{t.name}' || md5(coalesce(string_agg(r::text, '|' ORDER BY "
                f"r::text), '')) AS h FROM {t.name} r" for t in tables)
            value = db.session.execute(text(f"SELECT string_agg(h, ',') FROM ({parts}) d"))
            result = str(value.scalar_one())
        else:
            out = hashlib.sha256()
            for table in tables:
                rows = db.session.execute(select(table)).all()
                out.update(f"{table.name}:{sorted(map(repr, rows))}".encode())
            result = out.hexdigest()
        db.session.remove()
    return result


def pytest_terminal_summary(terminalreporter: Any) -> None:
    total: dict[str, int] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", []):
                if key == "fuzz_inputs" and getattr(report, "when", "") == "teardown":
                    total[report.nodeid] = int(value)
    if total:
        terminalreporter.write_sep("-", f"fuzz: {sum(total.values())} inputs tried in "
                                        f"{len(total)} tests ({'long' if LONG else 'short'})")
        for nodeid, value in sorted(total.items()):
            terminalreporter.write_line(f"{value:8d}  {nodeid}")

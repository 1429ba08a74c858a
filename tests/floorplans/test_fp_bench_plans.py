"""The benchmark's generated plans are valid floorplans of the requested size."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.floorplans.validate import analyze

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from floorplans_plans import generate_plan  # noqa: E402


@pytest.mark.parametrize("rooms", [10, 100, 500])
@pytest.mark.parametrize("relative, connections", [(False, False), (True, True)])
def test_generated_benchmark_plans_are_valid(rooms: int, relative: bool,
                                             connections: bool) -> None:
    analysis = analyze(generate_plan(rooms, relative, connections))
    assert analysis.valid and analysis.warnings == []
    assert len(analysis.plan.all_rooms()) == rooms
    assert len(analysis.layout.placed) == rooms
    if connections:
        assert len(analysis.doors) == len(analysis.plan.connections) > 0

"""The transform algebra the commit relies on, checked without a database."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.design_model import xform

num = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False)


@given(t=st.tuples(num, num, num), yaw=st.floats(-720, 720), pivot=st.tuples(num, num, num),
       start=st.tuples(num, num, num), base_yaw=st.floats(-180, 180))
def test_decompose_about_rebuilds_the_delta(t, yaw, pivot, start, base_yaw) -> None:  # type: ignore[no-untyped-def]
    baseline = xform.mul(xform.translation(*start), xform.rotation_z(base_yaw))
    current = xform.mul(xform.translation(*t), xform.about_pivot(yaw, pivot), baseline)
    world = xform.mul(current, xform.inverse(baseline))
    q = xform.origin(baseline)
    move, angle = xform.decompose_about(world, q)
    rebuilt = xform.mul(xform.translation(*move), xform.about_pivot(angle, q), baseline)
    for i in range(3):
        for j in range(4):
            assert rebuilt[i][j] == pytest.approx(current[i][j], abs=1e-6)
    assert xform.rigid_problem(xform.mul(xform.inverse(baseline), current)) is None


def test_naive_translation_double_counts_the_orbit() -> None:
    """Sending D's own translation column, as the original plug-in did, lands elsewhere."""
    baseline = xform.translation(1000, 0, 0)
    current = xform.mul(xform.about_pivot(90, (1000, 0, 0)), baseline)  # turn in place
    world = xform.mul(current, xform.inverse(baseline))
    assert xform.origin(world) == pytest.approx((1000, -1000, 0))  # the orbit term
    move, angle = xform.decompose_about(world, xform.origin(baseline))
    assert move == pytest.approx((0, 0, 0), abs=1e-9) and angle == pytest.approx(90)


@pytest.mark.parametrize("matrix, word", [
    (xform.scaling(1.01, 1, 1), "scale"),
    (xform.scaling(-1, 1, 1), "mirror"),
    ([[1, 0.2, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], "scale"),
    (xform.mul(xform.rotation_z(30), xform.scaling(2, 0.5, 1), xform.rotation_z(-30)),
     "scale"),
])
def test_non_rigid_is_named(matrix, word) -> None:  # type: ignore[no-untyped-def]
    assert word in (xform.rigid_problem(matrix) or "")


def test_tilt_is_not_a_yaw() -> None:
    a = math.radians(10)
    tilt = [[1, 0, 0, 0], [0, math.cos(a), -math.sin(a), 0], [0, math.sin(a), math.cos(a), 0],
            [0, 0, 0, 1]]
    assert xform.rigid_problem(tilt) is None
    assert "Z" in (xform.yaw_problem(tilt) or "")


def test_parse_rejects_bad_matrices() -> None:
    for bad in (None, [[1, 0, 0, 0]] * 3, [[1, 0, 0, "x"]] * 4,
                [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]],
                [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]):
        with pytest.raises(ValueError):
            xform.parse(bad)

"""4×4 affine transforms as plain nested lists: build, multiply, invert, check, decompose.

Row-major, column vectors: ``apply(m, p) = M · [p, 1]``; ``m[i][3]`` is the translation.
The commit path relies on two facts kept here in one place: the world delta of an edit is
``D = C · B⁻¹``, and a rigid D with rotation R decomposes about any pivot q as
"rotate by R about q, then translate by ``D(q) − q``".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Matrix = list[list[float]]
Vec = tuple[float, float, float]

MM_PER_FOOT = 304.8
RIGID_TOL = 1e-6


def identity() -> Matrix:
    return [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]


def translation(x: float, y: float, z: float) -> Matrix:
    m = identity()
    m[0][3], m[1][3], m[2][3] = x, y, z
    return m


def rotation_z(degrees: float) -> Matrix:
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    m = identity()
    m[0][0], m[0][1], m[1][0], m[1][1] = c, -s, s, c
    return m


def scaling(sx: float, sy: float, sz: float) -> Matrix:
    m = identity()
    m[0][0], m[1][1], m[2][2] = sx, sy, sz
    return m


def mul(*ms: Matrix) -> Matrix:
    """The product of the matrices, left to right (the rightmost acts first)."""
    out = ms[0]
    for b in ms[1:]:
        out = [[sum(out[i][k] * b[k][j] for k in range(4)) for j in range(4)] for i in range(4)]
    return out


def apply(m: Matrix, p: Sequence[float]) -> Vec:
    x, y, z = p[0], p[1], p[2]
    return (m[0][0] * x + m[0][1] * y + m[0][2] * z + m[0][3],
            m[1][0] * x + m[1][1] * y + m[1][2] * z + m[1][3],
            m[2][0] * x + m[2][1] * y + m[2][2] * z + m[2][3])


def origin(m: Matrix) -> Vec:
    return (m[0][3], m[1][3], m[2][3])


def det3(m: Matrix) -> float:
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def inverse(m: Matrix) -> Matrix:
    """Inverse of an affine matrix; ValueError when its linear part is singular."""
    d = det3(m)
    if abs(d) < 1e-12:
        raise ValueError("the transform is singular")
    a = m
    inv3 = [
        [(a[1][1] * a[2][2] - a[1][2] * a[2][1]) / d, (a[0][2] * a[2][1] - a[0][1] * a[2][2]) / d,
         (a[0][1] * a[1][2] - a[0][2] * a[1][1]) / d],
        [(a[1][2] * a[2][0] - a[1][0] * a[2][2]) / d, (a[0][0] * a[2][2] - a[0][2] * a[2][0]) / d,
         (a[0][2] * a[1][0] - a[0][0] * a[1][2]) / d],
        [(a[1][0] * a[2][1] - a[1][1] * a[2][0]) / d, (a[0][1] * a[2][0] - a[0][0] * a[2][1]) / d,
         (a[0][0] * a[1][1] - a[0][1] * a[1][0]) / d],
    ]
    t = [-sum(inv3[i][k] * a[k][3] for k in range(3)) for i in range(3)]
    return [inv3[0] + [t[0]], inv3[1] + [t[1]], inv3[2] + [t[2]], [0.0, 0.0, 0.0, 1.0]]


def scale_translation(m: Matrix, factor: float) -> Matrix:
    """The same placement expressed in other length units (S·M·S⁻¹ for a uniform S)."""
    out = [row[:] for row in m]
    for i in range(3):
        out[i][3] = m[i][3] * factor
    return out


def parse(value: object) -> Matrix:
    """A validated affine 4×4 from JSON; ValueError says what is wrong."""
    if not isinstance(value, list) or len(value) != 4:
        raise ValueError("must be a 4x4 array of numbers")
    rows: Matrix = []
    for row in value:
        if not isinstance(row, list) or len(row) != 4:
            raise ValueError("must be a 4x4 array of numbers")
        out = []
        for item in row:
            if isinstance(item, bool) or not isinstance(item, int | float) \
                    or not math.isfinite(item):
                raise ValueError("must hold finite numbers only")
            out.append(float(item))
        rows.append(out)
    if any(abs(rows[3][j] - (0.0, 0.0, 0.0, 1.0)[j]) > 1e-9 for j in range(4)):
        raise ValueError("last row must be [0, 0, 0, 1] (an affine transform)")
    if abs(det3(rows)) < 1e-12:
        raise ValueError("the transform is singular")
    return rows


def rigid_problem(m: Matrix, tol: float = RIGID_TOL) -> str | None:
    """Why the linear part of ``m`` is not a proper rotation, or None when it is one."""
    cols = [(m[0][j], m[1][j], m[2][j]) for j in range(3)]
    for j, c in enumerate(cols):
        if abs(math.sqrt(c[0] ** 2 + c[1] ** 2 + c[2] ** 2) - 1.0) > tol:
            return f"scale is not allowed (axis {'XYZ'[j]} has length " \
                   f"{math.sqrt(c[0] ** 2 + c[1] ** 2 + c[2] ** 2):.6g})"
    for a, b in ((0, 1), (0, 2), (1, 2)):
        dot = sum(cols[a][k] * cols[b][k] for k in range(3))
        if abs(dot) > tol:
            return f"shear is not allowed (axes {'XYZ'[a]} and {'XYZ'[b]} are not orthogonal)"
    d = det3(m)
    if abs(abs(d) - 1.0) > tol:
        return f"scale is not allowed (determinant {d:.6g})"
    if d < 0:
        return "mirroring is not allowed (determinant -1)"
    return None


def yaw_problem(m: Matrix, tol: float = RIGID_TOL) -> str | None:
    """Why a rotation is not purely about Z (Revit only takes a yaw), or None."""
    if abs(m[2][0]) > tol or abs(m[2][1]) > tol or abs(m[0][2]) > tol or abs(m[1][2]) > tol:
        return "only rotation about Z (yaw) is allowed"
    return None


def yaw_degrees(m: Matrix) -> float:
    """The angle of the rotated X axis projected onto the XY plane."""
    return math.degrees(math.atan2(m[1][0], m[0][0]))


def about_pivot(rotation_deg: float, pivot: Sequence[float]) -> Matrix:
    """Rotation about Z through ``pivot``."""
    px, py, pz = pivot[0], pivot[1], pivot[2]
    return mul(translation(px, py, pz), rotation_z(rotation_deg), translation(-px, -py, -pz))


def decompose_about(delta: Matrix, pivot: Sequence[float]) -> tuple[Vec, float]:
    """(translation, yaw) such that delta = Tr(t) · Rz(yaw about pivot), for a rigid yaw delta.

    Sending D's own translation column would double-count the orbit of the pivot that the
    rotation already causes; ``t = D(q) − q`` is what is left once the receiver rotates
    about the same q.
    """
    moved = apply(delta, pivot)
    t = (moved[0] - pivot[0], moved[1] - pivot[1], moved[2] - pivot[2])
    return t, yaw_degrees(delta)


def bounded(m: Matrix, limit: float = 1e12) -> bool:
    """Finite, and small enough to stay exact-ish and storable as JSON."""
    return all(math.isfinite(v) and abs(v) <= limit for row in m for v in row)

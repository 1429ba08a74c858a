"""Mesh snapshots: validation, the geometry hash, world-space vertices, and box meshes.

A snapshot is ``vertices`` ([[x, y, z], ...]), ``submeshes`` ([{materialKey, intIndices}],
triangles as index triples) and ``materials`` ([{key, name?, color?}]).
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime
from typing import Any

from app.design_model import xform
from app.design_model.xform import Matrix

MAX_VERTICES = 200_000


class MeshError(ValueError):
    """A bad mesh; ``field`` names the offending part (vertices, submeshes[2].intIndices...)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def validate(vertices: object, submeshes: object, materials: object = None
             ) -> tuple[list[list[float]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Checked copies of a snapshot's parts: finite 3D points, triangles, indices in range."""
    if not isinstance(vertices, list) or not vertices:
        raise MeshError("vertices", "must be a non-empty array of [x, y, z]")
    if len(vertices) > MAX_VERTICES:
        raise MeshError("vertices", f"at most {MAX_VERTICES} vertices")
    points: list[list[float]] = []
    for i, v in enumerate(vertices):
        if not isinstance(v, list | tuple) or len(v) != 3 or any(
                isinstance(c, bool) or not isinstance(c, int | float) or not math.isfinite(c)
                for c in v):
            raise MeshError(f"vertices[{i}]", "must be [x, y, z] with finite numbers")
        points.append([float(c) for c in v])
    if not isinstance(submeshes, list) or not submeshes:
        raise MeshError("submeshes", "must be a non-empty array of {materialKey, intIndices}")
    subs: list[dict[str, Any]] = []
    for s, sub in enumerate(submeshes):
        where = f"submeshes[{s}]"
        if not isinstance(sub, dict):
            raise MeshError(where, "must be an object {materialKey, intIndices}")
        key = sub.get("materialKey", "default")
        if not isinstance(key, str) or not key or len(key) > 120:
            raise MeshError(f"{where}.materialKey", "must be a non-empty string")
        indices = sub.get("intIndices")
        if not isinstance(indices, list) or not indices:
            raise MeshError(f"{where}.intIndices", "must be a non-empty array of integers")
        if len(indices) % 3:
            raise MeshError(f"{where}.intIndices",
                            f"must hold triangles (a multiple of 3 indices, got {len(indices)})")
        for k, idx in enumerate(indices):
            if isinstance(idx, bool) or not isinstance(idx, int):
                raise MeshError(f"{where}.intIndices[{k}]", "must be an integer")
            if not 0 <= idx < len(points):
                raise MeshError(f"{where}.intIndices[{k}]",
                                f"index {idx} is out of range (0..{len(points) - 1})")
        subs.append({"materialKey": key, "intIndices": list(indices)})
    mats: list[dict[str, Any]] = []
    if materials is not None:
        if not isinstance(materials, list):
            raise MeshError("materials", "must be an array")
        for m, mat in enumerate(materials):
            if isinstance(mat, str):
                mat = {"key": mat}
            if not isinstance(mat, dict) or not isinstance(mat.get("key"), str):
                raise MeshError(f"materials[{m}]", "must be an object with a string 'key'")
            mats.append({k: v for k, v in mat.items() if k in ("key", "name", "color")})
    return points, subs, mats


def world_vertices(transform: Matrix, local: list[list[float]], scale: float = 1.0
                   ) -> list[list[float]]:
    """``transform · v`` for each local vertex, multiplied by ``scale`` (a unit change)."""
    out = []
    for v in local:
        x, y, z = xform.apply(transform, v)
        out.append([x * scale, y * scale, z * scale])
    return out


def geom_hash(world: list[list[float]], submeshes: list[dict[str, Any]],
              materials: list[dict[str, Any]]) -> str:
    """A digest of what the element looks like in the world: moved or reshaped → new hash.

    Coordinates are rounded to 1e-9 ft so float noise from re-serialisation never changes it.
    """
    canon = {
        "v": [[round(c, 9) + 0.0 for c in v] for v in world],
        "s": [[s["materialKey"], s["intIndices"]] for s in submeshes],
        "m": sorted(m["key"] for m in materials),
    }
    text = json.dumps(canon, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def new_stamp() -> str:
    """An ISO-8601 UTC stamp with microseconds, like the snapshots Revit hands out."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def box(x0: float, x1: float, y0: float, y1: float, z0: float, z1: float,
        material: str) -> tuple[list[list[float]], list[dict[str, Any]]]:
    """An axis-aligned box as 8 vertices and 12 outward-facing triangles."""
    v = [[x, y, z] for z in (z0, z1) for y in (y0, y1) for x in (x0, x1)]
    # Vertex i has bits (x, y, z) = (i & 1, i >> 1 & 1, i >> 2 & 1).
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    tris: list[int] = []
    for a, b, c, d in quads:
        tris += [a, b, c, a, c, d]
    return v, [{"materialKey": material, "intIndices": tris}]


def bounds(points: list[list[float]]) -> tuple[list[float], list[float]]:
    return ([min(p[i] for p in points) for i in range(3)],
            [max(p[i] for p in points) for i in range(3)])

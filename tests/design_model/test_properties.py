"""Property tests: rigid edits survive the Rhino → Revit round trip; non-rigid ones never do.

Each example imports demo elements into Rhino, applies random gumball edits there, commits,
and checks Revit's geometry against an independent computation of where the vertices should
be (rotate about the pivot, then translate), within 1e-6 ft.
"""

from __future__ import annotations

import math
from typing import Any

from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.design_model.rpc import handle

FT = 304.8
ELEMENTS = [3001, 3002, 3005, 3006, 3009, 4002, 4003, 4004]
SETTINGS = settings(max_examples=20, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

coord = st.floats(min_value=-20000, max_value=20000, allow_nan=False)
angle = st.floats(min_value=-360, max_value=360, allow_nan=False)
edit = st.fixed_dictionaries({
    "translate": st.tuples(coord, coord, st.floats(-3000, 3000)),
    "rotateZDeg": angle,
    "pivot": st.none() | st.tuples(coord, coord, st.floats(-3000, 3000)),
})
factor = st.floats(min_value=0.2, max_value=5).filter(lambda f: abs(f - 1) > 1e-3) | \
    st.floats(min_value=-3, max_value=-0.2)


def call(method: str, **params: Any) -> dict[str, Any]:
    answer = handle({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert "error" not in answer, (method, params, answer)
    return answer["result"]


def revit_world(uid: str) -> list[list[float]]:
    return call("get_instance_geometry", uniqueId=uid)["vertices"]


def moved(point: list[float], e: dict[str, Any], base: list[float]) -> list[float]:
    """Where a gumball edit sends ``point`` (mm): rotate about the pivot, then translate."""
    p = e["pivot"] or base
    a = math.radians(e["rotateZDeg"])
    x, y = point[0] - p[0], point[1] - p[1]
    return [p[0] + x * math.cos(a) - y * math.sin(a) + e["translate"][0],
            p[1] + x * math.sin(a) + y * math.cos(a) + e["translate"][1],
            point[2] + e["translate"][2]]


def fresh_import(ids: list[int]) -> list[str]:
    uids = [call("get_element_info", elementId=i)["element"]["uniqueId"] for i in ids]
    assert call("rhino_import_by_ids", uniqueIds=uids)["imported"] == len(uids)
    call("rhino_unlock_objects", uniqueIds=uids)
    call("rhino_select", uniqueIds=uids)
    return uids


@settings(SETTINGS, max_examples=40)
@given(ids=st.lists(st.sampled_from(ELEMENTS), min_size=1, max_size=3, unique=True),
       edits=st.lists(edit, min_size=1, max_size=3))
def test_rigid_edits_arrive_in_revit(app: Flask, demo: None, ids: list[int],
                                     edits: list[dict[str, Any]]) -> None:
    with app.app_context():
        uids = fresh_import(ids)
        expected: dict[str, list[list[float]]] = {}
        for uid in uids:
            points = [[c * FT for c in v] for v in revit_world(uid)]
            transform = call("get_instance_geometry", uniqueId=uid)["transform"]
            base = [transform[i][3] * FT for i in range(3)]
            for e in edits:
                points = [moved(p, e, base) for p in points]
                base = moved(base, e, base)
            expected[uid] = points
        for e in edits:
            call("rhino_transform_objects", translate=list(e["translate"]),
                 rotateZDeg=e["rotateZDeg"], **({"pivot": list(e["pivot"])} if e["pivot"]
                                                 else {}))
        result = call("rhino_commit_transform")
        assert result["errors"] == 0, result
        for uid in uids:
            revit = revit_world(uid)
            rhino = call("rhino_get_objects", uniqueIds=[uid],
                         includeGeometry=True)["items"][0]["vertices"]
            for r, h, x in zip(revit, rhino, expected[uid], strict=True):
                assert max(abs(r[i] - h[i] / FT) for i in range(3)) < 1e-6, (r, h)
                assert max(abs(r[i] - x[i] / FT) for i in range(3)) < 1e-6, (r, x)


@SETTINGS
@given(element=st.sampled_from(ELEMENTS), before=edit,
       scales=st.lists(st.tuples(factor, factor | st.just(1.0), factor | st.just(1.0)),
                       min_size=1, max_size=2),
       angle_between=angle)
def test_non_rigid_edits_are_refused(app: Flask, demo: None, element: int,
                                     before: dict[str, Any],
                                     scales: list[tuple[float, float, float]],
                                     angle_between: float) -> None:
    with app.app_context():
        (uid,) = fresh_import([element])
        geo = call("get_instance_geometry", uniqueId=uid)
        call("rhino_transform_objects", translate=list(before["translate"]),
             rotateZDeg=before["rotateZDeg"])
        for sx, sy, sz in scales:  # scale, turn, scale again: scale, shear and mirrors
            call("rhino_transform_objects", scale=[sx, sy, sz])
            call("rhino_transform_objects", rotateZDeg=angle_between)
        result = call("rhino_commit_transform")
        assert (result["appliedCount"], result["errors"]) == (0, 1), result
        assert result["items"][0]["error"]["data"]["code"] == "NON_RIGID"
        after = call("get_instance_geometry", uniqueId=uid)
        assert (after["geomHash"], after["snapshotStamp"]) == (geo["geomHash"],
                                                               geo["snapshotStamp"])
        assert after["vertices"] == geo["vertices"]


@SETTINGS
@given(element=st.sampled_from(ELEMENTS), e=edit)
def test_lock_blocks_commit(app: Flask, demo: None, element: int, e: dict[str, Any]) -> None:
    with app.app_context():
        (uid,) = fresh_import([element])
        geo = call("get_instance_geometry", uniqueId=uid)
        call("rhino_transform_objects", translate=list(e["translate"]),
             rotateZDeg=e["rotateZDeg"])
        call("rhino_lock_objects")
        result = call("rhino_commit_transform")
        assert (result["appliedCount"], result["errors"]) == (0, 1)
        assert call("get_instance_geometry", uniqueId=uid)["geomHash"] == geo["geomHash"]
        call("rhino_unlock_objects")
        assert call("rhino_commit_transform")["errors"] == 0

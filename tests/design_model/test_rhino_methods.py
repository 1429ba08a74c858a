"""Rhino-side methods (seed 001) through both doors, in-process and over HTTP to Revit."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from tests.design_model.conftest import MODEL_SERVER_GROUP, ROOT, Rpc, free_port

pytestmark = MODEL_SERVER_GROUP

FT = 304.8


def uid_of(rpc: Rpc, element_id: int) -> str:
    return rpc.ok("get_element_info", elementId=element_id)["element"]["uniqueId"]


def assert_same_geometry(rpc: Rpc, uid: str, tol_ft: float = 1e-6) -> None:
    revit = rpc.ok("get_instance_geometry", uniqueId=uid)["vertices"]
    rhino = rpc.ok("rhino_get_objects", uniqueIds=[uid], includeGeometry=True)["items"][0]
    assert len(revit) == len(rhino["vertices"])
    for r, h in zip(revit, rhino["vertices"], strict=True):
        assert max(abs(r[i] - h[i] / FT) for i in range(3)) < tol_ft, (r, h)


def import_and_select(rpc: Rpc, *element_ids: int, **extra: Any) -> list[str]:
    uids = [uid_of(rpc, e) for e in element_ids]
    result = rpc.ok("rhino_import_by_ids", uniqueIds=uids, **extra)
    assert result == {**result, "ok": True, "imported": len(uids), "errors": 0}
    assert rpc.ok("rhino_select", uniqueIds=uids)["count"] == len(uids)
    return uids


def test_import_edit_commit_round_trip(rpc: Rpc) -> None:
    (uid,) = import_and_select(rpc, 4001)
    assert_same_geometry(rpc, uid)
    item = rpc.ok("rhino_get_selection")["items"][0]
    assert item["uniqueId"] == uid and item["guard"]["geomHash"]
    assert item["delta"] == {"translate": {"x": 0.0, "y": 0.0, "z": 0.0, "units": "feet"},
                             "rotateZDeg": 0.0}
    rpc.ok("rhino_transform_objects", translate={"x": 304.8, "y": 609.6}, rotateZDeg=30)
    preview = rpc.ok("rhino_get_selection")["items"][0]["delta"]
    assert preview["translate"]["x"] == pytest.approx(1.0)
    assert preview["translate"]["y"] == pytest.approx(2.0)
    assert preview["rotateZDeg"] == pytest.approx(30.0)
    dry = rpc.ok("rhino_commit_transform", dryRun=True)
    assert dry["dryRun"] is True and dry["appliedCount"] == 1
    assert rpc.ok("rhino_get_selection")["items"][0]["delta"]["rotateZDeg"] == \
        pytest.approx(30.0)
    result = rpc.ok("rhino_commit_transform")
    assert result == {**result, "ok": True, "appliedCount": 1, "errors": 0}
    assert_same_geometry(rpc, uid)
    # The baseline moved with the commit: nothing left to send, and the guard is current.
    again = rpc.ok("rhino_get_selection")["items"][0]
    assert again["delta"]["rotateZDeg"] == pytest.approx(0.0, abs=1e-9)
    assert again["guard"]["geomHash"] == rpc.ok("get_instance_geometry",
                                                uniqueId=uid)["geomHash"]
    assert rpc.ok("rhino_commit_transform")["appliedCount"] == 0
    rpc.ok("rhino_transform_objects", rotateZDeg=-45, pivot={"x": 5000, "y": 5000})
    assert rpc.ok("rhino_commit_transform")["appliedCount"] == 1
    assert_same_geometry(rpc, uid)


def test_import_snapshot_validates_the_mesh(rpc: Rpc) -> None:
    seed_example = {"uniqueId": "AI-TEST-0001", "units": "feet",
                    "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]],
                    "submeshes": [{"materialKey": "default", "intIndices": [0, 1, 2]}],
                    "snapshotStamp": "2025-10-05T00:00:00Z"}
    assert rpc.ok("rhino_import_snapshot", **seed_example)["ok"] is True
    got = rpc.ok("rhino_get_objects", uniqueIds=["AI-TEST-0001"], includeGeometry=True)
    assert got["items"][0]["vertices"][1] == pytest.approx([304.8, 0.0, 0.0])
    cases = {
        "submeshes[0].intIndices[2]": {"submeshes": [{"intIndices": [0, 1, 3]}]},
        "submeshes[0].intIndices": {"submeshes": [{"intIndices": [0, 1]}]},
        "vertices[1]": {"vertices": [[0, 0, 0], [1, "x", 0], [0, 1, 0]]},
        "vertices": {"vertices": []},
        "units": {"units": "furlongs"},
        "transform": {"transform": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]},
        "uniqueId": {"uniqueId": None},
    }
    for param, change in cases.items():
        error = rpc.err("rhino_import_snapshot", -32602, **{**seed_example, **change})
        assert error["data"]["param"] == param, error


def test_scale_is_refused_per_object(rpc: Rpc) -> None:
    scaled, moved = import_and_select(rpc, 4001, 4002)
    before = rpc.ok("get_instance_geometry", uniqueId=scaled)["geomHash"]
    rpc.ok("rhino_transform_objects", uniqueIds=[scaled], scale=1.5)
    rpc.ok("rhino_transform_objects", uniqueIds=[moved], translate=[100, 0, 0])
    selection = {i["uniqueId"]: i for i in rpc.ok("rhino_get_selection")["items"]}
    assert selection[scaled]["rigid"] is False and selection[moved]["rigid"] is True
    result = rpc.ok("rhino_commit_transform")
    assert result["appliedCount"] == 1 and result["errors"] == 1 and result["ok"] is False
    refused = next(i for i in result["items"] if i["uniqueId"] == scaled)
    assert refused["error"]["data"]["code"] == "NON_RIGID"
    assert "scale" in refused["error"]["message"]
    assert rpc.ok("get_instance_geometry", uniqueId=scaled)["geomHash"] == before
    assert_same_geometry(rpc, moved)


def test_locked_objects_refuse_edits_and_commits(rpc: Rpc) -> None:
    uid, other = import_and_select(rpc, 3001, 3002)
    rpc.ok("rhino_transform_objects", uniqueIds=[uid], translate=[0, 500, 0])
    assert rpc.ok("rhino_lock_objects", uniqueIds=[uid]) == {"ok": True, "count": 1}
    refused = rpc.err("rhino_transform_objects", -32000, uniqueIds=[uid], rotateZDeg=5)
    assert refused["data"] == {"code": "LOCKED", "locked": [uid]}
    before = rpc.ok("get_instance_geometry", uniqueId=uid)["geomHash"]
    result = rpc.ok("rhino_commit_transform", uniqueIds=[uid])
    assert result["appliedCount"] == 0 and result["errors"] == 1
    assert result["items"][0]["error"]["data"]["code"] == "LOCKED"
    assert rpc.ok("get_instance_geometry", uniqueId=uid)["geomHash"] == before
    assert rpc.ok("rhino_unlock_objects")["count"] == 2  # default: the selection
    assert rpc.ok("rhino_commit_transform")["appliedCount"] == 1
    assert_same_geometry(rpc, uid)
    assert rpc.ok("rhino_lock_objects")["count"] == 2
    assert all(i["locked"] for i in rpc.ok("rhino_get_objects")["items"] if i["uniqueId"]
               in (uid, other))


def test_stale_guard_refuses_the_commit(rpc: Rpc) -> None:
    (uid,) = import_and_select(rpc, 4002)
    # Someone moves the beam in Revit after Rhino imported it.
    geo = rpc.ok("get_instance_geometry", uniqueId=uid)
    rpc.ok("apply_transform_delta", uniqueId=uid, delta={"translate": {"x": 1, "units": "feet"}},
           guard={"snapshotStamp": geo["snapshotStamp"], "geomHash": geo["geomHash"]})
    changed = rpc.ok("get_instance_geometry", uniqueId=uid)["geomHash"]
    rpc.ok("rhino_transform_objects", translate=[0, 0, 100])
    result = rpc.ok("rhino_commit_transform")
    assert result["appliedCount"] == 0 and result["errors"] == 1
    assert result["items"][0]["error"]["data"]["code"] == "STALE_GUARD"
    assert rpc.ok("get_instance_geometry", uniqueId=uid)["geomHash"] == changed
    # A refresh brings the new Revit geometry in; then the edit can be made again and sent.
    refresh = rpc.ok("rhino_refresh_from_revit")
    assert refresh["refreshed"] == 1 and refresh["checked"] == 1
    assert_same_geometry(rpc, uid)
    rpc.ok("rhino_transform_objects", translate=[0, 0, 100])
    assert rpc.ok("rhino_commit_transform")["appliedCount"] == 1
    assert_same_geometry(rpc, uid)


def test_refresh_reimports_only_what_changed(rpc: Rpc) -> None:
    uids = import_and_select(rpc, 3001, 3002, 4001)
    rpc.ok("rhino_transform_objects", uniqueIds=[uids[1]], translate=[10, 0, 0])
    rpc.ok("apply_transform_delta", uniqueId=uids[0], delta={"rotateZDeg": 10})
    rpc.ok("delete_elements", elementIds=[4001])
    result = rpc.ok("rhino_refresh_from_revit")
    assert (result["checked"], result["refreshed"], result["unchanged"], result["missing"]) \
        == (3, 1, 1, 1)
    status = {i["uniqueId"]: i["status"] for i in result["items"]}
    assert status == {uids[0]: "refreshed", uids[1]: "unchanged", uids[2]: "missing"}
    assert_same_geometry(rpc, uids[0])
    # The unchanged object keeps its pending Rhino edit.
    pending = {i["uniqueId"]: i for i in rpc.ok("rhino_get_selection")["items"]}
    assert pending[uids[1]]["delta"]["translate"]["x"] == pytest.approx(10 / FT)


@pytest.mark.slow  # starts bin/model-server
def test_revit_over_http_and_the_allow_list(rpc: Rpc, model_server: str) -> None:
    (uid,) = import_and_select(rpc, 4003, revitBaseUrl=model_server)
    listed = rpc.ok("rhino_get_objects", uniqueIds=[uid])["items"][0]
    assert listed["guard"]["geomHash"] == rpc.ok("get_instance_geometry",
                                                 uniqueId=uid)["geomHash"]
    rpc.ok("rhino_transform_objects", translate=[250, -125, 0], rotateZDeg=-90)
    result = rpc.ok("rhino_commit_transform", revitBaseUrl=model_server + "/rpc")
    assert result["appliedCount"] == 1 and result["errors"] == 0
    assert_same_geometry(rpc, uid)
    refresh = rpc.ok("rhino_refresh_from_revit", revitBaseUrl=model_server)
    assert refresh["unchanged"] == 1
    for bad in ("http://example.com:5210", "http://10.0.0.8:5210", "ftp://127.0.0.1/",
                "http://user:pw@127.0.0.1:5210", "not a url", "http://127.0.0.1:99999"):
        error = rpc.err("rhino_import_by_ids", -32602, uniqueIds=[uid], revitBaseUrl=bad)
        assert error["data"]["param"] == "revitBaseUrl", (bad, error)
    down = f"http://127.0.0.1:{free_port()}"
    error = rpc.err("rhino_import_by_ids", -32001, uniqueIds=[uid], revitBaseUrl=down)
    assert "unreachable" in error["message"]
    rpc.ok("rhino_transform_objects", translate=[1, 0, 0])
    assert rpc.err("rhino_commit_transform", -32001, revitBaseUrl=down)["data"]["code"] == \
        "UPSTREAM"
    # The failed send left the edit pending: it still goes through once Revit is back.
    assert rpc.ok("rhino_commit_transform", revitBaseUrl=model_server)["appliedCount"] == 1


@pytest.mark.slow  # starts bin/model-server
def test_upstream_application_errors_are_per_object(rpc: Rpc, model_server: str) -> None:
    known = uid_of(rpc, 3003)
    result = rpc.ok("rhino_import_by_ids", uniqueIds=[known, "no-such-element"],
                    revitBaseUrl=model_server)
    assert (result["ok"], result["imported"], result["errors"]) == (False, 1, 1)
    assert result["items"][1]["error"]["data"]["code"] == "NOT_FOUND"


def test_selection_and_target_errors(rpc: Rpc) -> None:
    (uid,) = import_and_select(rpc, 3004)
    partial = rpc.ok("rhino_select", uniqueIds=[uid, "ghost"])
    assert partial["count"] == 1 and partial["notFound"] == ["ghost"]
    assert rpc.err("rhino_commit_transform", -32000,
                   uniqueIds=["ghost"])["data"]["code"] == "NOT_FOUND"
    assert rpc.err("rhino_transform_objects", -32602, scale=0)["data"]["param"] == "scale"
    assert rpc.err("rhino_transform_objects", -32602, scale=1e300)["data"]["param"] == "scale"
    assert rpc.err("rhino_transform_objects", -32602,
                   translate=[1e300, 0, 0])["data"]["param"] == "translate.x"
    assert rpc.err("rhino_transform_objects", -32602, rotateZDeg="a lot")["data"]["param"] \
        == "rotateZDeg"
    assert rpc.err("rhino_import_by_ids", -32602, uniqueIds=[])["data"]["param"] == \
        "uniqueIds"
    rpc.ok("rhino_select", uniqueIds=[])
    assert rpc.ok("rhino_get_selection") == {"ok": True, "items": []}
    assert rpc.ok("rhino_commit_transform") == {"ok": True, "appliedCount": 0, "errors": 0,
                                                "items": []}


def test_server_refuses_to_start_unsafely(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.db'}",
           "HARMONIC_INSTANCE": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(ROOT / "bin" / "model-server"), "--port",
                           str(free_port())], capture_output=True, text=True, timeout=30,
                          env=env)
    assert proc.returncode == 2 and "flask db upgrade" in proc.stderr
    proc = subprocess.run([sys.executable, str(ROOT / "bin" / "model-server"), "--host",
                           "0.0.0.0", "--port", str(free_port())], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode != 0 and "loopback" in proc.stderr


def test_dry_runs_change_nothing(rpc: Rpc) -> None:
    uid = uid_of(rpc, 3006)
    assert rpc.ok("rhino_import_by_ids", uniqueIds=[uid], dryRun=True) == {
        "ok": True, "dryRun": True, "imported": 1, "errors": 0,
        "items": [{"uniqueId": uid, "ok": True}]}
    assert rpc.ok("rhino_get_objects")["count"] == 0
    geo = rpc.ok("get_instance_geometry", uniqueId=uid)
    snapshot = {k: geo[k] for k in ("uniqueId", "units", "transform", "vertices", "submeshes",
                                    "materials", "snapshotStamp", "geomHash")}
    assert rpc.ok("rhino_import_snapshot", **snapshot, dryRun=True)["dryRun"] is True
    assert rpc.ok("rhino_get_objects")["count"] == 0
    rpc.ok("rhino_import_snapshot", **snapshot)
    assert_same_geometry(rpc, uid)
    assert rpc.ok("rhino_select", uniqueIds=[uid], dryRun=True)["count"] == 1
    assert rpc.ok("rhino_get_selection")["items"] == []
    rpc.ok("rhino_select", uniqueIds=[uid])
    assert rpc.ok("rhino_lock_objects", dryRun=True)["count"] == 1
    planned = rpc.ok("rhino_transform_objects", translate=[100, 0, 0], dryRun=True)
    assert planned["current"][uid][0][3] == pytest.approx(geo["transform"][0][3] * FT + 100)
    item = rpc.ok("rhino_get_selection")["items"][0]
    assert item["locked"] is False and item["delta"]["translate"]["x"] == 0.0
    rpc.ok("apply_transform_delta", uniqueId=uid, delta={"rotateZDeg": 5})
    assert rpc.ok("rhino_refresh_from_revit", dryRun=True)["refreshed"] == 1
    assert rpc.ok("rhino_refresh_from_revit")["refreshed"] == 1
    assert rpc.ok("select_elements", elementIds=[3006], dryRun=True)["selected"] == 1
    assert rpc.ok("get_selected_element_ids")["count"] == 0


def test_yaw_about_the_base_point_sends_no_translation(rpc: Rpc) -> None:
    (uid,) = import_and_select(rpc, 3002)  # a wall whose base point is (10000, 0) mm
    before = rpc.ok("get_instance_geometry", uniqueId=uid)["transform"]
    rpc.ok("rhino_transform_objects", rotateZDeg=90)
    delta = rpc.ok("rhino_get_selection")["items"][0]["delta"]
    assert delta["rotateZDeg"] == pytest.approx(90)
    assert [delta["translate"][k] for k in "xyz"] == pytest.approx([0, 0, 0], abs=1e-12)
    assert rpc.ok("rhino_commit_transform")["appliedCount"] == 1
    after = rpc.ok("get_instance_geometry", uniqueId=uid)["transform"]
    assert [after[i][3] for i in range(3)] == pytest.approx([before[i][3] for i in range(3)])
    assert_same_geometry(rpc, uid)
    wall = rpc.ok("get_walls", typeName="RC200", level="1FL")["walls"][1]
    assert wall["start"] == {"x": 10000.0, "y": 0.0, "z": 0.0}
    assert wall["end"] == {"x": 4000.0, "y": 0.0, "z": 0.0}

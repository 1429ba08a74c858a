"""Revit-side methods through both doors: result shapes, selectors, confirm, dryRun, errors."""

from __future__ import annotations

import pytest

from tests.design_model.conftest import MODEL_SERVER_GROUP, Rpc

pytestmark = MODEL_SERVER_GROUP

RC150_1FL = {"category": "OST_Walls", "typeName": "RC150", "levelName": "1FL"}


def test_get_walls_pages_and_filters(rpc: Rpc) -> None:
    everything = rpc.ok("get_walls")
    assert everything["totalCount"] == 11 and len(everything["walls"]) == 11
    wall = everything["walls"][0]
    assert {"elementId", "uniqueId", "typeId", "typeName", "levelId", "height", "thickness",
            "start", "end"} <= set(wall)
    assert wall["start"] == {"x": 0.0, "y": 0.0, "z": 0.0}
    assert wall["end"] == {"x": 10000.0, "y": 0.0, "z": 0.0}
    assert (wall["thickness"], wall["height"]) == (200.0, 3500.0)
    only_count = rpc.ok("get_walls", count=0)
    assert only_count["totalCount"] == 11 and "walls" not in only_count
    page = rpc.ok("get_walls", skip=2, count=3)
    assert [w["elementId"] for w in page["walls"]] == [3003, 3004, 3005]
    filtered = rpc.ok("get_walls", level="1FL", typeName="RC150")
    assert filtered["totalCount"] == 2
    assert {w["typeName"] for w in filtered["walls"]} == {"RC150"}
    assert rpc.err("get_walls", -32602, skip=-1)["data"]["param"] == "skip"
    assert rpc.err("get_walls", -32602, count="ten")["data"]["param"] == "count"


def test_elements_by_category_and_level(rpc: Rpc) -> None:
    result = rpc.ok("get_elements_by_category_and_level", category="Structural Framing",
                    levelSelector={"levelName": "2FL"}, options={"includeTypeInfo": True})
    assert result["debug"]["filteredCount"] == 5 and len(result["items"]) == 5
    assert result["items"][0]["typeName"] == "RC-Beam-450x600"
    assert result["items"][0]["categoryName"] == "Structural Framing"
    by_id = rpc.ok("get_elements_by_category_and_level", category="OST_Walls",
                   levelSelector={"levelId": 1002}, options={"maxResults": 2})
    assert len(by_id["items"]) == 2 and by_id["debug"]["levelResolvedBy"] == "levelId"
    assert rpc.err("get_elements_by_category_and_level", -32602,
                   category="Spaceships")["data"]["param"] == "category"
    missing = rpc.err("get_elements_by_category_and_level", -32000, category="Walls",
                      levelSelector={"levelName": "9FL"})
    assert missing["data"]["code"] == "LEVEL_NOT_FOUND"


def test_get_element_info_gives_selector_fields(rpc: Rpc) -> None:
    info = rpc.ok("get_element_info", elementId=4001)["element"]
    assert info["category"] == "OST_StructuralFraming" and info["typeName"] == "RC-Beam-450x600"
    assert info["levelName"] == "2FL" and info["mark"] == "B1" and info["familyName"]
    assert info["geomHash"] and info["snapshotStamp"]
    by_uid = rpc.ok("get_element_info", uniqueId=info["uniqueId"])
    assert by_uid["element"]["elementId"] == 4001
    many = rpc.ok("get_element_info", selector={"category": "OST_Walls", "mark": "W5"})
    assert many["count"] == 1 and many["items"][0]["elementId"] == 3005
    assert rpc.err("get_element_info", -32000, elementId=999)["data"]["code"] == "NOT_FOUND"
    assert rpc.err("get_element_info", -32602)["data"]["param"] == "selector"


def test_update_wall_parameter_by_selector_dry_run_then_real(rpc: Rpc) -> None:
    preview = rpc.ok("update_wall_parameter", selector=RC150_1FL, param="Comments",
                     value="Model B", dryRun=True)
    assert preview["dryRun"] is True and preview["updated"] == 2
    assert preview["items"][0]["from"] == "" and preview["items"][0]["to"] == "Model B"
    unchanged = rpc.ok("get_element_info", elementId=preview["elementIds"][0])["element"]
    assert unchanged["parameters"]["Comments"]["value"] == ""
    done = rpc.ok("update_wall_parameter", selector=RC150_1FL, param="Comments",
                  value="Model B")
    assert done["ok"] is True and done["updated"] == 2 and "dryRun" not in done
    for element_id in done["elementIds"]:
        info = rpc.ok("get_element_info", elementId=element_id)["element"]
        assert info["parameters"]["Comments"]["value"] == "Model B"
    # The seed's recipe says "level" for the level name; both spellings select.
    again = rpc.ok("update_wall_parameter", selector={"category": "OST_Walls",
                                                      "typeName": "RC150", "level": "1FL"},
                   param="Comments", value="Model C")
    assert again["updated"] == 2


def test_update_wall_parameter_by_id_and_its_errors(rpc: Rpc) -> None:
    result = rpc.ok("update_wall_parameter", elementId=3001, param="Mark", value="W-1A")
    assert result == {**result, "ok": True, "updated": 1, "elementId": 3001}
    assert rpc.ok("get_element_info", elementId=3001)["element"]["mark"] == "W-1A"
    height = rpc.ok("update_wall_parameter", elementId=3001, param="Unconnected Height",
                    value=3200)
    assert height["updated"] == 1
    wrong_type = rpc.err("update_wall_parameter", -32000, elementId=3001,
                         param="Unconnected Height", value="tall")
    assert wrong_type["data"]["code"] == "PARAM_NOT_SET"
    assert rpc.err("update_wall_parameter", -32000, elementId=4001, param="Comments",
                   value="x")["data"]["code"] == "NOT_A_WALL"
    assert rpc.err("update_wall_parameter", -32000, elementId=3001, param="Nope",
                   value="x")["data"]["code"] == "PARAM_NOT_SET"
    assert rpc.err("update_wall_parameter", -32602, elementId=3001,
                   value="x")["data"]["param"] == "param"
    assert rpc.err("update_wall_parameter", -32602, elementId=3001,
                   param="Comments")["data"]["param"] == "value"
    assert rpc.err("update_wall_parameter", -32602, selector={"colour": "red"},
                   param="Comments", value="x")["data"]["param"] == "selector.colour"
    assert rpc.err("update_wall_parameter", -32602, selector={}, param="Comments",
                   value="x")["data"]["param"] == "selector"
    assert rpc.err("update_wall_parameter", -32602, selector={"category": "OST_Rebar"},
                   param="Comments", value="x")["data"]["param"] == "selector.category"
    none = rpc.ok("update_wall_parameter", selector={"typeName": "RC999"}, param="Comments",
                  value="x")
    assert none["updated"] == 0


def test_set_parameter_for_elements(rpc: Rpc) -> None:
    result = rpc.ok("set_parameter_for_elements", elementIds=[4001, 4002, 3001],
                    param={"name": "Comments"}, value={"stringValue": "checked"})
    assert result["updated"] == 3 and result["stats"]["successCount"] == 3
    assert len(result["items"]) == 3
    partial = rpc.ok("set_parameter_for_elements", elementIds=[4001, 3001],
                     param="Structural Usage", value="Beam")
    assert partial["updated"] == 1 and partial["stats"]["failureCount"] == 1
    assert partial["ok"] is False
    by_selector = rpc.ok("set_parameter_for_elements",
                         selector={"category": "Structural Framing",
                                   "typeName": "RC-Beam-300x500"},
                         param="Comments", value="secondary", dryRun=True)
    assert by_selector["updated"] == 2 and by_selector["dryRun"] is True
    assert rpc.ok("get_element_info", elementId=4004)["element"]["parameters"][
        "Comments"]["value"] == ""
    assert rpc.err("set_parameter_for_elements", -32000, elementIds=[1, 4001],
                   param="Comments", value="x")["data"]["code"] == "NOT_FOUND"
    assert rpc.err("set_parameter_for_elements", -32602, elementIds=["a"],
                   param="Comments", value="x")["data"]["param"] == "elementIds[0]"


def test_create_wall_needs_confirm_and_previews(rpc: Rpc) -> None:
    spec = {"start": {"x": 0, "y": 0}, "end": {"x": 3000, "y": 4000},
            "wallTypeName": "RC150", "levelName": "2FL", "heightMm": 2800}
    assert rpc.err("create_wall", -32602, **spec)["data"]["param"] == "confirm"
    preview = rpc.ok("create_wall", **spec, dryRun=True)
    assert preview["dryRun"] is True and preview["created"] == 1 and preview["elementIds"] == []
    assert rpc.ok("get_walls", count=0)["totalCount"] == 11
    made = rpc.ok("create_wall", **spec, confirm=True)
    assert made["created"] == 1 and made["elementIds"] == [made["elementId"]]
    walls = rpc.ok("get_walls", level="2FL", typeName="RC150")["walls"]
    new = next(w for w in walls if w["elementId"] == made["elementId"])
    assert new["length"] == pytest.approx(5000.0)
    assert new["start"] == {"x": 0.0, "y": 0.0, "z": 3500.0}
    assert new["end"] == {"x": 3000.0, "y": 4000.0, "z": 3500.0}
    assert (new["thickness"], new["height"]) == (150.0, 2800.0)
    assert rpc.err("create_wall", -32000, **{**spec, "wallTypeName": "Glass"},
                   confirm=True)["data"]["code"] == "TYPE_NOT_FOUND"
    assert rpc.err("create_wall", -32602, **{**spec, "end": spec["start"]},
                   confirm=True)["data"]["param"] == "end"
    assert rpc.err("create_wall", -32602, **{**spec, "start": "here"},
                   confirm=True)["data"]["param"] == "start"


def test_delete_elements_dry_run_and_hosted_rebar(rpc: Rpc) -> None:
    bars = rpc.ok("create_rebar_linear", host={"elementId": 4005}, barType="D13", count=2,
                  confirm=True)["elementIds"]
    preview = rpc.ok("delete_elements", elementIds=[4005], dryRun=True)
    assert preview["deleted"] == 3 and sorted(preview["elementIds"]) == sorted([4005, *bars])
    assert rpc.ok("get_element_info", elementId=4005)["count"] == 1
    done = rpc.ok("delete_elements", elementIds=[4005])
    assert done["deleted"] == 3
    assert rpc.err("get_element_info", -32000, elementId=bars[0])["data"]["code"] == "NOT_FOUND"
    by_selector = rpc.ok("delete_elements", selector={"category": "OST_Walls", "level": "2FL"})
    assert by_selector["deleted"] == 5
    assert rpc.ok("get_walls", count=0)["totalCount"] == 6


def test_selection_round_trip(rpc: Rpc) -> None:
    assert rpc.ok("get_selected_element_ids")["elementIds"] == []
    picked = rpc.ok("select_elements", elementIds=[3002, 3001, 77])
    assert picked["selected"] == 2 and picked["notFound"] == [77]
    assert rpc.ok("get_selected_element_ids") == {
        "ok": True, "elementIds": [3001, 3002], "count": 2, "selectionKind": "model",
        "source": "live"}
    rpc.ok("select_elements", selector={"category": "OST_StructuralFraming", "mark": "B2"})
    assert rpc.ok("get_selected_element_ids")["elementIds"] == [4002]


def test_instance_geometry_and_transform_delta(rpc: Rpc) -> None:
    uid = rpc.ok("get_element_info", elementId=4001)["element"]["uniqueId"]
    geo = rpc.ok("get_instance_geometry", uniqueId=uid)
    assert geo["units"] == "feet" and len(geo["vertices"]) == 8
    assert len(geo["submeshes"][0]["intIndices"]) == 36
    guard = {"snapshotStamp": geo["snapshotStamp"], "geomHash": geo["geomHash"]}
    delta = {"translate": {"x": 1000, "y": 0, "z": 0, "units": "mm"}, "rotateZDeg": 90}
    preview = rpc.ok("apply_transform_delta", uniqueId=uid, delta=delta, guard=guard,
                     dryRun=True)
    assert preview["dryRun"] is True and preview["applied"] == ["rotate", "move"]
    assert rpc.ok("get_instance_geometry", uniqueId=uid)["geomHash"] == geo["geomHash"]
    moved = rpc.ok("apply_transform_delta", uniqueId=uid, delta=delta, guard=guard)
    assert moved["geomHash"] != geo["geomHash"]
    after = rpc.ok("get_instance_geometry", elementId=4001)
    # Rotated 90° about the base point (0, 0) then moved +1000 mm in X: the beam that ran
    # along +X from the origin now runs along +Y from x = 1000 mm.
    start = min(after["vertices"], key=lambda v: (round(v[1], 6), v[0]))
    assert start[0] * 304.8 == pytest.approx(1000 - 225, abs=1e-6)
    ys = [v[1] * 304.8 for v in after["vertices"]]
    assert min(ys) == pytest.approx(0, abs=1e-6) and max(ys) == pytest.approx(10000, abs=1e-6)
    stale = rpc.err("apply_transform_delta", -32000, uniqueId=uid, delta=delta, guard=guard)
    assert stale["data"]["code"] == "STALE_GUARD"
    assert stale["data"]["geomHash"] == after["geomHash"]
    assert rpc.err("apply_transform_delta", -32602, uniqueId=uid,
                   delta={"translate": {"x": 1, "units": "furlong"}})["data"]["param"] == \
        "delta.translate.units"
    assert rpc.err("apply_transform_delta", -32602, uniqueId=uid)["data"]["param"] == "delta"
    assert rpc.err("get_instance_geometry", -32000, elementId=1001)["data"]["code"] == \
        "NO_GEOMETRY"


def test_rebar_linear_preview_and_create(rpc: Rpc) -> None:
    host = {"category": "OST_StructuralFraming", "typeName": "RC-Beam-450x600",
            "level": "2FL"}
    args = {"host": host, "barType": "D16", "count": 5, "coverTop": "25mm",
            "coverSide": "25mm"}
    preview = rpc.ok("preview_rebar_linear", **args)
    assert preview["candidates"] == 15 and len(preview["hosts"]) == 3
    assert rpc.err("create_rebar_linear", -32602, **args)["data"]["param"] == "confirm"
    dry = rpc.ok("create_rebar_linear", **args, dryRun=True)
    assert dry["created"] == 15 and dry["elementIds"] == []
    made = rpc.ok("create_rebar_linear", **args, confirm=True)
    assert made["created"] == 15 and len(made["elementIds"]) == 15
    bar = rpc.ok("get_element_info", elementId=made["elementIds"][0])["element"]
    assert bar["category"] == "OST_Rebar" and bar["typeName"] == "D16"
    assert bar["parameters"]["Bar Length"]["value"] == pytest.approx(10000 - 50)
    # Top bars sit inside the beam: top of beam 3500 mm, cover 25, bar radius 8.
    assert bar["location"]["start"]["z"] == pytest.approx(3500 - 25 - 8)
    assert rpc.err("preview_rebar_linear", -32602, **{**args, "barType": "D99"})["data"][
        "param"] == "barType"
    assert rpc.err("preview_rebar_linear", -32602, **{**args, "count": 0})["data"][
        "param"] == "count"
    assert rpc.err("preview_rebar_linear", -32602, **{**args, "coverTop": "lots"})["data"][
        "param"] == "coverTop"
    assert rpc.err("preview_rebar_linear", -32000, **{**args, "count": 40})["data"][
        "code"] == "TOO_MANY_BARS"
    assert rpc.err("preview_rebar_linear", -32602, **{**args, "host": {
        "category": "OST_Walls"}})["data"]["param"] == "host.category"


def test_rebar_by_spacing_adjusts_to_length(rpc: Rpc) -> None:
    host = {"category": "OST_StructuralFraming", "typeName": "RC-Beam-300x500"}
    preview = rpc.ok("preview_rebar_by_spacing", host=host, barType="D13", spacingMm=200)
    # Two 6000 mm beams: (6000 - 2·25) / 200 → 29 gaps → 30 bars each.
    assert preview["candidates"] == 60 and [h["bars"] for h in preview["hosts"]] == [30, 30]
    made = rpc.ok("create_rebar_by_spacing", host=host, barType="D13", spacingMm=200,
                  confirm=True)
    assert made["created"] == 60
    assert rpc.err("create_rebar_by_spacing", -32602, host=host, barType="D13",
                   spacingMm=200)["data"]["param"] == "confirm"
    assert rpc.err("preview_rebar_by_spacing", -32602, host=host, barType="D13",
                   spacingMm=5)["data"]["param"] == "spacingMm"

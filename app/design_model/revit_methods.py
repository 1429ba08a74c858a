"""Revit-side methods, with the names and result shapes of the real RevitMCP add-in.

Reads: ping_server (the server's name and version, as RevitMCP's meta op), get_walls,
get_elements_by_category_and_level, get_element_info, get_selected_element_ids,
get_instance_geometry. Writes (all accept ``dryRun``):
update_wall_parameter, set_parameter_for_elements, create_wall (needs ``confirm``),
delete_elements, select_elements, apply_transform_delta (checks its guard).
Lengths go in and out in mm; geometry snapshots are in feet, as Revit's internal unit.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.actions.effects import DESTRUCTIVE, IDEMPOTENT_WRITE, READ, WRITE
from app.core.config import app_version
from app.design_model import elements, mesh, store, xform
from app.design_model.protocol import Params, app_error, dry, invalid
from app.design_model.registry import Ctx, Param, method
from app.design_model.schemas import (
    BOOL,
    CATEGORY,
    CONFIRM,
    DRY_FLAG,
    DRY_RUN,
    ELEMENT_ID,
    ELEMENT_IDENTITY,
    GUARD,
    IDS,
    INT,
    ITEMS,
    MATRIX,
    NUM,
    STR,
    TARGET_GROUP,
    TARGETS,
    UNIQUE_ID,
    VEC,
    ok_result,
)
from app.design_model.xform import MM_PER_FOOT
from app.models.design_model import DesignElement

UNITS = {"inputUnits": "mm", "internalUnits": "ft"}

WALL = {"type": "object", "properties": {
    "elementId": INT, "uniqueId": STR, "typeName": STR, "levelName": STR, "mark": STR,
    "height": NUM, "thickness": NUM, "length": NUM, "start": {"type": "object"},
    "end": {"type": "object"}}}
# ``param`` (a name, or {name}) or ``paramName``, and ``value`` (null clears; or the real
# add-in's {stringValue | intValue | doubleValue}).
PARAM_VALUE = (
    Param("param", {"anyOf": [STR, {"type": "object", "properties": {"name": STR}}],
                    "x-message": "must be a parameter name"}, "The parameter's name"),
    Param("paramName", STR, "Same as param"),
    Param("value", {"anyOf": [{"type": "string"}, NUM, BOOL, {"type": "null"}, {
        "type": "object", "properties": {"stringValue": {"type": "string"}, "intValue": INT,
                                         "doubleValue": NUM}}]},
          "The new value (numbers in the parameter's units, null clears)", required=True))
PARAM_GROUP = ("paramName", "param")
SET_RESULT = ok_result({"updated": INT, "elementIds": IDS, "items": ITEMS,
                        "stats": {"type": "object"}, "dryRun": BOOL}, ("updated", "items"))
DELTA = {"type": "object", "properties": {
    "translate": {"type": "object", "properties": {
        "x": NUM, "y": NUM, "z": NUM, "units": {"type": "string", "enum": ["feet", "ft", "mm"]}}},
    "rotateZDeg": NUM}}


def require_confirm(p: Params) -> bool:
    """create_* methods: dryRun previews; otherwise ``confirm: true`` is mandatory."""
    dry_run = p.bool("dryRun")
    if not dry_run and not p.bool("confirm"):
        raise invalid("confirm", "must be true to create elements (or pass dryRun: true to "
                                 "preview)")
    return dry_run


# ---------------------------------------------------------------- reads


def wall_item(ctx: Ctx, wall: DesignElement, level_ids: dict[str, int],
              type_ids: dict[str, int]) -> dict[str, Any]:
    length, thickness, height = elements.local_extent_mm(wall)
    loc = elements.location_mm(wall)
    return {
        "elementId": wall.element_id, "id": wall.element_id, "uniqueId": wall.unique_id,
        "typeId": type_ids.get(wall.type_name), "typeName": wall.type_name,
        "familyName": wall.family, "levelId": level_ids.get(wall.level or ""),
        "levelName": wall.level, "mark": wall.mark, "height": height, "thickness": thickness,
        "length": length, "start": loc.get("start"), "end": loc.get("end"),
    }


@method("ping_server", READ, "The server's name and version (a liveness check)",
        result=ok_result({"server": STR, "version": STR}, ("server",)), example={})
def ping_server(ctx: Ctx, p: Params) -> dict[str, Any]:
    return {"ok": True, "server": "harmonic-design-model", "version": app_version()}


@method("get_walls", READ, "Walls, optionally by level and type, a page at a time",
        params=(Param("skip", {**INT, "minimum": 0}, "Walls to skip (default 0)"),
                Param("count", {**INT, "minimum": 0}, "At most this many (0: only totalCount)"),
                Param("level", STR, "Only walls on this level (its name)"),
                Param("levelName", STR, "Same as level"),
                Param("typeName", STR, "Only walls of this type")),
        result=ok_result({"totalCount": INT, "walls": {"type": "array", "items": WALL},
                          "wallsById": {"type": "object"}, "inputUnits": STR,
                          "internalUnits": STR}, ("totalCount",)),
        example={"level": "1FL", "count": 5})
def get_walls(ctx: Ctx, p: Params) -> dict[str, Any]:
    skip = p.int("skip", 0, minimum=0)
    count = p.int("count", None, minimum=0)
    level = p.str("level", None) or p.str("levelName", None)
    type_name = p.str("typeName", None)
    query = store.instances(ctx).where(DesignElement.category == "OST_Walls")
    if level is not None:
        query = query.where(DesignElement.level == level)
    if type_name is not None:
        query = query.where(DesignElement.type_name == type_name)
    walls = list(ctx.session.scalars(query.order_by(DesignElement.element_id)).all())
    result: dict[str, Any] = {"ok": True, "totalCount": len(walls), **UNITS}
    if count == 0:
        return result
    page = walls[skip:] if count is None else walls[skip:skip + count]
    level_ids = {lv.name: lv.element_id for lv in store.levels(ctx)}
    type_ids = {t.type_name: t.element_id for t in ctx.session.scalars(select(
        DesignElement).where(DesignElement.model == ctx.model, DesignElement.kind == "type",
                             DesignElement.category == "OST_Walls"))}
    result["walls"] = [wall_item(ctx, w, level_ids, type_ids) for w in page]
    result["wallsById"] = {str(w["elementId"]): w["uniqueId"] for w in result["walls"]}
    return result


@method("get_elements_by_category_and_level", READ,
        "Elements of one category, optionally on one level",
        params=(Param("category", CATEGORY, "OST_Walls, 'Walls', OST_StructuralFraming, ...",
                      required=True),
                Param("levelSelector", {"type": "object", "properties": {
                    "levelName": STR, "levelId": INT}}, "The level: levelName or levelId"),
                Param("options", {"type": "object", "properties": {
                    "maxResults": {**INT, "minimum": 1}, "includeTypeInfo": BOOL}})),
        result=ok_result({"count": INT, "items": {"type": "array", "items": ELEMENT_IDENTITY},
                          "msg": STR, "debug": {"type": "object"}}, ("count", "items")),
        example={"category": "Structural Framing", "levelSelector": {"levelName": "2FL"}})
def get_elements_by_category_and_level(ctx: Ctx, p: Params) -> dict[str, Any]:
    category = store.normalize_category(p.str("category"), "category")
    level_sel = p.obj("levelSelector", None)
    options = p.obj("options", Params({}, "options."))
    max_results = options.int("maxResults", None, minimum=1)
    include_type = options.bool("includeTypeInfo")
    query = store.instances(ctx).where(DesignElement.category == category)
    total = len(ctx.session.scalars(query).all())
    resolved_by = "none"
    if level_sel is not None:
        if level_sel.has("levelId"):
            level = store.level_by_id(ctx, level_sel.int("levelId"), "levelSelector.levelId")
            resolved_by = "levelId"
        elif level_sel.has("levelName"):
            level = store.level_named(ctx, level_sel.str("levelName"),
                                      "levelSelector.levelName")
            resolved_by = "levelName"
        else:
            raise invalid("levelSelector", "give levelName or levelId")
        query = query.where(DesignElement.level == level.name)
    found = list(ctx.session.scalars(query.order_by(DesignElement.element_id)).all())
    level_ids = {lv.name: lv.element_id for lv in store.levels(ctx)}
    items = []
    for element in found[:max_results] if max_results else found:
        item = {"elementId": element.element_id, "uniqueId": element.unique_id,
                "categoryName": store.category_name(element.category),
                "levelId": level_ids.get(element.level or ""), "levelName": element.level}
        if include_type:
            item["typeId"] = store.type_id(ctx, element)
            item["typeName"] = element.type_name
        items.append(item)
    return {"ok": True, "msg": f"{len(items)} element(s)", "count": len(items), "items": items,
            "debug": {"category": category, "levelResolvedBy": resolved_by,
                      "totalCandidates": total, "filteredCount": len(found)}}


def element_info(ctx: Ctx, element: DesignElement, level_ids: dict[str, int]) -> dict[str, Any]:
    info = store.identity(ctx, element, level_ids)
    info.update({"name": element.name, "typeId": store.type_id(ctx, element),
                 "parameters": element.parameters, "location": elements.location_mm(element),
                 "selected": element.selected, "snapshotStamp": element.snapshot_stamp,
                 "geomHash": element.geom_hash})
    return info


@method("get_element_info", READ,
        "Identity, parameters, location and snapshot guard of elements",
        params=TARGETS, one_of=(TARGET_GROUP,),
        result=ok_result({"count": INT, "items": ITEMS, "element": {"type": "object"}},
                         ("count", "items")),
        example={"elementId": 4001})
def get_element_info(ctx: Ctx, p: Params) -> dict[str, Any]:
    targets, how = store.resolve_targets(ctx, p)
    level_ids = {lv.name: lv.element_id for lv in store.levels(ctx)}
    items = [element_info(ctx, e, level_ids) for e in targets]
    result: dict[str, Any] = {"ok": True, "count": len(items), "items": items}
    if how in ("elementId", "uniqueId"):
        result["element"] = items[0]
    return result


@method("get_selected_element_ids", READ, "The ids of the elements selected in the model",
        result=ok_result({"elementIds": IDS, "count": INT}, ("elementIds",)), example={})
def get_selected_element_ids(ctx: Ctx, p: Params) -> dict[str, Any]:
    ids = list(ctx.session.scalars(select(DesignElement.element_id).where(
        DesignElement.model == ctx.model, DesignElement.selected.is_(True)).order_by(
        DesignElement.element_id)).all())
    return {"ok": True, "elementIds": ids, "count": len(ids), "selectionKind": "model",
            "source": "live"}


def _one_element(ctx: Ctx, p: Params) -> Any:
    """The element named by ``uniqueId`` or ``elementId`` (the two ways Revit callers say it)."""
    if p.has("uniqueId"):
        return store.by_unique_id(ctx, p.str("uniqueId"))
    if p.has("elementId"):
        return store.by_element_id(ctx, p.int("elementId"))
    raise invalid("uniqueId", "give uniqueId or elementId")


@method("get_instance_geometry", READ,
        "One element's mesh (feet, world coordinates) with its transform and snapshot guard",
        params=(ELEMENT_ID, UNIQUE_ID), one_of=(("elementId", "uniqueId"),),
        result=ok_result({"elementId": INT, "uniqueId": STR, "units": STR, "transform": MATRIX,
                          "vertices": ITEMS, "submeshes": ITEMS, "snapshotStamp": STR,
                          "geomHash": STR}, ("uniqueId", "vertices")),
        example={"elementId": 4001})
def get_instance_geometry(ctx: Ctx, p: Params) -> dict[str, Any]:
    element = _one_element(ctx, p)
    if not element.vertices:
        raise app_error("NO_GEOMETRY", f"Element {element.element_id} has no geometry",
                        elementId=element.element_id)
    return {"ok": True, "elementId": element.element_id, "uniqueId": element.unique_id,
            "category": element.category, "typeName": element.type_name, "units": "feet",
            "transform": element.transform, "vertices": store.world(element),
            "submeshes": element.submeshes, "materials": element.materials,
            "snapshotStamp": element.snapshot_stamp, "geomHash": element.geom_hash}


# ---------------------------------------------------------------- parameter writes


def set_parameters(ctx: Ctx, targets: list[DesignElement], p: Params) -> dict[str, Any]:
    name, value = elements.param_name(p), elements.param_value(p)
    dry_run = p.bool("dryRun")
    changes = [elements.plan_param(e, name, value) for e in targets]
    if not dry_run:
        for change in changes:
            if change.error is None:
                elements.apply_param(ctx, change)
    ok_ids = [c.element.element_id for c in changes if c.error is None]
    failed = len(changes) - len(ok_ids)
    return dry({"ok": failed == 0, "updated": len(ok_ids), "elementIds": ok_ids,
                "items": [c.item() for c in changes],
                "stats": {"totalRequested": len(changes), "successCount": len(ok_ids),
                          "failureCount": failed}}, dry_run)


@method("update_wall_parameter", IDEMPOTENT_WRITE, "Set one parameter on walls",
        params=(*TARGETS, *PARAM_VALUE, DRY_RUN), one_of=(TARGET_GROUP, PARAM_GROUP),
        result=SET_RESULT,
        example={"elementId": 3001, "param": "Comments", "value": "checked"})
def update_wall_parameter(ctx: Ctx, p: Params) -> dict[str, Any]:
    if p.has("selector"):
        category = p.obj("selector").raw.get("category")
        if category is not None and store.normalize_category(
                str(category), "selector.category") != "OST_Walls":
            raise invalid("selector.category", "update_wall_parameter only changes walls")
    targets, how = store.resolve_targets(ctx, p, default_category="OST_Walls")
    for element in targets:
        if element.category != "OST_Walls":
            raise app_error("NOT_A_WALL", f"Element {element.element_id} is not a wall "
                                          f"({element.category})", elementId=element.element_id)
    result = set_parameters(ctx, targets, p)
    if how in ("elementId", "uniqueId"):
        item = result["items"][0]
        if not item["ok"]:
            raise app_error("PARAM_NOT_SET", item["msg"], elementId=item["elementId"])
        result["elementId"] = item["elementId"]
    return result


@method("set_parameter_for_elements", IDEMPOTENT_WRITE,
        "Set one parameter on any elements (each reports its own success)",
        params=(*TARGETS, *PARAM_VALUE, DRY_RUN), one_of=(TARGET_GROUP, PARAM_GROUP),
        result=SET_RESULT,
        example={"elementIds": [4001, 4002], "param": "Comments", "value": "checked"})
def set_parameter_for_elements(ctx: Ctx, p: Params) -> dict[str, Any]:
    targets, _how = store.resolve_targets(ctx, p)
    result = set_parameters(ctx, targets, p)
    result["msg"] = f"{result['updated']} of {len(targets)} element(s) updated"
    return result


# ---------------------------------------------------------------- create / delete / select


def wall_level(ctx: Ctx, p: Params) -> DesignElement:
    for key in ("baseLevelName", "levelName"):
        if p.has(key):
            return store.level_named(ctx, p.str(key), key)
    for key in ("baseLevelId", "levelId"):
        if p.has(key):
            return store.level_by_id(ctx, p.int(key), key)
    raise invalid("levelName", "give baseLevelName, levelName, baseLevelId or levelId")


@method("create_wall", WRITE, "Create a straight wall from start to end (mm)",
        params=(Param("start", VEC, "Start point in mm", required=True),
                Param("end", VEC, "End point in mm (at least 1 mm from start)", required=True),
                Param("wallTypeName", STR, "The wall type by name"),
                Param("wallTypeId", INT, "The wall type by id"),
                Param("baseLevelName", STR), Param("baseLevelId", INT),
                Param("levelId", INT), Param("levelName", STR, "The base level by name"),
                Param("heightMm", {**NUM, "exclusiveMinimum": 0}, "Default 3000"),
                Param("baseOffsetMm", NUM, "Default 0"),
                Param("mark", {**STR, "maxLength": 80}), CONFIRM, DRY_RUN),
        one_of=(("wallTypeId", "wallTypeName"),
                ("baseLevelName", "baseLevelId", "levelId", "levelName")),
        confirm=True,
        result=ok_result({"created": INT, "elementId": INT, "uniqueId": STR,
                          "elementIds": IDS, **DRY_FLAG}, ("created", "elementIds")),
        example={"start": {"x": 0, "y": 0}, "end": {"x": 3000, "y": 0},
                 "wallTypeName": "RC150", "levelName": "1FL", "dryRun": True})
def create_wall(ctx: Ctx, p: Params) -> dict[str, Any]:
    dry_run = require_confirm(p)
    start, end = p.vec("start"), p.vec("end")
    if p.has("wallTypeId"):
        wall_type = ctx.session.scalars(select(DesignElement).where(
            DesignElement.model == ctx.model, DesignElement.kind == "type",
            DesignElement.element_id == p.int("wallTypeId"))).one_or_none()
        if wall_type is None or wall_type.category != "OST_Walls":
            raise app_error("TYPE_NOT_FOUND", f"No wall type {p.int('wallTypeId')}")
    else:
        name = p.str("wallTypeName")
        wall_type = store.type_named(ctx, "OST_Walls", name)
        if wall_type is None:
            raise app_error("TYPE_NOT_FOUND", f"No wall type named '{name}'",
                            param="wallTypeName")
    level = wall_level(ctx, p)
    height = p.num("heightMm", 3000.0)
    if height <= 0:
        raise invalid("heightMm", "must be > 0")
    base = store.level_elevation_mm(level) + p.num("baseOffsetMm", 0.0)
    transform, length = elements.placement(start, end, base)
    if length < 1.0:
        raise invalid("end", "must be at least 1 mm away from start")
    width = (wall_type.parameters.get("Width") or {}).get("value", 200.0)
    result: dict[str, Any] = {"ok": True, "created": 1, "typeId": wall_type.element_id,
                              "typeName": wall_type.type_name, "baseLevelId": level.element_id,
                              "levelName": level.name, "mode": "unconnected",
                              "units": {"input": "mm", "internal": "ft"}}
    if dry_run:
        return dry({**result, "elementIds": []}, True)
    ft = 1 / MM_PER_FOOT
    vertices, submeshes = mesh.box(0, length * ft, -width / 2 * ft, width / 2 * ft, 0,
                                   height * ft, wall_type.parameters.get(
                                       "Material", {}).get("value") or "Concrete")
    wall = elements.add_element(
        ctx, category="OST_Walls", family=wall_type.family, type_name=wall_type.type_name,
        level=level.name, transform=transform, vertices=vertices, submeshes=submeshes,
        materials=[{"key": submeshes[0]["materialKey"]}],
        parameters={"Unconnected Height": {"value": height, "units": "mm"},
                    "Base Offset": {"value": p.num("baseOffsetMm", 0.0), "units": "mm"}},
        location={"curve": [[0.0, 0.0, 0.0], [length * ft, 0.0, 0.0]]},
        mark=p.str("mark", None, max_len=80))
    return {**result, "elementId": wall.element_id, "uniqueId": wall.unique_id,
            "elementIds": [wall.element_id]}


@method("delete_elements", DESTRUCTIVE,
        "Delete elements (their hosted rebar goes too; levels are refused)",
        params=(*TARGETS, DRY_RUN), one_of=(TARGET_GROUP,),
        result=ok_result({"deleted": INT, "elementIds": IDS, "refused": IDS, **DRY_FLAG},
                         ("deleted", "elementIds")),
        example={"elementIds": [3005], "dryRun": True})
def delete_elements(ctx: Ctx, p: Params) -> dict[str, Any]:
    dry_run = p.bool("dryRun")
    targets, _how = store.resolve_targets(ctx, p)
    doomed = {e.element_id: e for e in targets if e.category != "OST_Levels"}
    refused = [e.element_id for e in targets if e.category == "OST_Levels"]
    # Hosted rebar goes with its host, as in Revit.
    for rebar in ctx.session.scalars(store.instances(ctx).where(
            DesignElement.category == "OST_Rebar")):
        host = (rebar.parameters.get("Host Id") or {}).get("value")
        if host in doomed and rebar.element_id not in doomed:
            doomed[rebar.element_id] = rebar
    if not dry_run:
        for element in doomed.values():
            ctx.session.delete(element)
        ctx.wrote = bool(doomed)
    result = {"ok": True, "deleted": len(doomed), "elementIds": sorted(doomed)}
    if refused:
        result["refused"] = refused
        result["msg"] = "levels cannot be deleted"
    return dry(result, dry_run)


@method("select_elements", IDEMPOTENT_WRITE,
        "Replace the model's selection (elementIds or elementId: missing ids are reported; or "
        "uniqueId or selector)",
        params=(*TARGETS, DRY_RUN),
        result=ok_result({"requested": INT, "selected": INT, "elementIds": IDS,
                          "notFound": IDS, **DRY_FLAG}, ("selected", "elementIds")),
        example={"elementIds": [3001, 3002]})
def select_elements(ctx: Ctx, p: Params) -> dict[str, Any]:
    if p.has("elementIds") or p.has("elementId"):
        ids = p.int_list("elementIds") if p.has("elementIds") else [p.int("elementId")]
        found, missing = store.by_element_ids(ctx, ids)
        requested = len(ids)
    else:
        found, _how = store.resolve_targets(ctx, p)
        missing, requested = [], len(found)
    dry_run = p.bool("dryRun")
    if not dry_run:
        for element in ctx.session.scalars(select(DesignElement).where(
                DesignElement.model == ctx.model, DesignElement.selected.is_(True))):
            element.selected = False
        for element in found:
            element.selected = True
        ctx.wrote = True
    result: dict[str, Any] = {"ok": True, "requested": requested, "selected": len(found),
                              "elementIds": [e.element_id for e in found]}
    if missing:
        result["notFound"] = missing
    return dry(result, dry_run)


# ---------------------------------------------------------------- transforms


def translate_feet(delta: Params) -> tuple[float, float, float]:
    translate = delta.obj("translate", None)
    if translate is None:
        return (0.0, 0.0, 0.0)
    units = translate.str("units", "feet")
    if units not in ("feet", "ft", "mm"):
        raise invalid(translate.path("units"), "must be 'feet' or 'mm'")
    factor = 1 / MM_PER_FOOT if units == "mm" else 1.0
    return (translate.num("x", 0.0) * factor, translate.num("y", 0.0) * factor,
            translate.num("z", 0.0) * factor)


def check_guard(element: DesignElement, guard: Params | None) -> None:
    """A guard names the snapshot the caller edited; any field that no longer matches → stale."""
    if guard is None:
        return
    stamp, digest = guard.str("snapshotStamp", None), guard.str("geomHash", None)
    if (stamp is not None and stamp != element.snapshot_stamp) or (
            digest is not None and digest != element.geom_hash):
        raise app_error("STALE_GUARD",
                        f"Element {element.unique_id} changed since the snapshot was taken",
                        uniqueId=element.unique_id, snapshotStamp=element.snapshot_stamp,
                        geomHash=element.geom_hash)


@method("apply_transform_delta", WRITE,
        "Rotate an element about its base point, then move it; refused when its guard is stale",
        params=(ELEMENT_ID, UNIQUE_ID,
                Param("delta", DELTA, "translate {x, y, z, units} and/or rotateZDeg",
                      required=True),
                Param("guard", GUARD), DRY_RUN),
        one_of=(("elementId", "uniqueId"),),
        result=ok_result({"applied": {"type": "array", "items": STR}, "updated": INT,
                          "elementId": INT, "uniqueId": STR, "transform": MATRIX,
                          "snapshotStamp": STR, "geomHash": STR, **DRY_FLAG}, ("applied",)),
        example={"elementId": 4001, "delta": {"translate": {"x": 100, "units": "mm"},
                                              "rotateZDeg": 0}, "dryRun": True})
def apply_transform_delta(ctx: Ctx, p: Params) -> dict[str, Any]:
    element = _one_element(ctx, p)
    delta = p.obj("delta")
    translate = translate_feet(delta)
    yaw = delta.num("rotateZDeg", 0.0)
    dry_run = p.bool("dryRun")
    if not element.vertices:
        raise app_error("NO_LOCATION", f"Element {element.element_id} cannot be moved",
                        elementId=element.element_id)
    check_guard(element, p.obj("guard", None))
    moved = elements.plan_move(element, translate, yaw)
    if not xform.bounded(moved):
        raise app_error("OUT_OF_RANGE", f"The move would take {element.unique_id} out of range",
                        uniqueId=element.unique_id)
    applied = (["rotate"] if abs(yaw) > 1e-12 else []) + (
        ["move"] if any(abs(c) > 0 for c in translate) else [])
    result: dict[str, Any] = {"ok": True, "applied": applied, "updated": 1,
                              "elementId": element.element_id, "uniqueId": element.unique_id}
    if dry_run:
        return dry({**result, "transform": moved}, True)
    elements.apply_move(ctx, element, moved)
    return {**result, "transform": element.transform, "snapshotStamp": element.snapshot_stamp,
            "geomHash": element.geom_hash, "msg": f"applied {', '.join(applied) or 'nothing'}"}


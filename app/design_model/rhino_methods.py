"""Rhino-side methods (seed 001) plus the edits a person makes in Rhino, as methods.

Import keeps the mesh block-local in mm with baseline B = the Revit placement (translation
scaled feet → mm), so an object's base point in Rhino is the element's base point in Revit.
Commit validates Δ = B⁻¹·C (rigid, proper, yaw only), then sends the world delta D = C·B⁻¹
decomposed about that base point: rotate by yaw about it, then translate by D(q) − q.

Methods that call Revit over HTTP read first, call, then write, so a SQLite database is
never write-locked by us while the Revit side (maybe this very server) needs to write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from app.actions.effects import IDEMPOTENT_WRITE, READ, WRITE
from app.design_model import mesh, xform
from app.design_model.mesh import MeshError
from app.design_model.protocol import (
    UPSTREAM_ERROR,
    Params,
    RpcError,
    app_error,
    dry,
    invalid,
    upstream_error,
)
from app.design_model.registry import Ctx, Param, method
from app.design_model.schemas import (
    BOOL,
    DRY_RUN,
    INT,
    ITEMS,
    MATRIX,
    NUM,
    REVIT_BASE_URL,
    RHINO_UIDS,
    STR,
    UIDS,
    VEC,
    ok_result,
)
from app.design_model.upstream import Revit
from app.design_model.xform import MM_PER_FOOT, Matrix
from app.models.base import utcnow
from app.models.design_model import RhinoObject

UNIT_SCALE = {"feet": MM_PER_FOOT, "ft": MM_PER_FOOT, "mm": 1.0}
CHANGE_TOL = 1e-9


# ---------------------------------------------------------------- lookups


def objects(ctx: Ctx, unique_ids: list[str] | None = None, selected: bool = False
            ) -> list[RhinoObject]:
    query = select(RhinoObject).where(RhinoObject.model == ctx.model)
    if unique_ids is not None:
        query = query.where(RhinoObject.unique_id.in_(unique_ids))
    if selected:
        query = query.where(RhinoObject.selected.is_(True))
    return list(ctx.session.scalars(query.order_by(RhinoObject.unique_id)).all())


def targets(ctx: Ctx, p: Params) -> list[RhinoObject]:
    """Objects named by ``uniqueIds`` (all must exist), else the current selection."""
    if not p.has("uniqueIds"):
        return objects(ctx, selected=True)
    ids = p.str_list("uniqueIds")
    found = objects(ctx, ids)
    missing = sorted(set(ids) - {o.unique_id for o in found})
    if missing:
        raise app_error("NOT_FOUND", f"No Rhino object for uniqueId {missing[0]}",
                        missing=missing)
    return found


def world_mm(obj: RhinoObject) -> list[list[float]]:
    return mesh.world_vertices(obj.current, obj.vertices)


def guard(obj: RhinoObject) -> dict[str, Any]:
    return {"snapshotStamp": obj.snapshot_stamp, "geomHash": obj.geom_hash}


# ---------------------------------------------------------------- import


@dataclass
class Snapshot:
    """A validated snapshot, already in Rhino terms: block-local mm vertices and B."""

    unique_id: str
    element_id: int | None
    vertices: list[list[float]]
    submeshes: list[dict[str, Any]]
    materials: list[dict[str, Any]]
    baseline: Matrix
    stamp: str | None
    digest: str | None


def parse_snapshot(snap: Params) -> Snapshot:
    """Check a snapshot (mesh, units, transform) and convert it; -32602 names the bad part."""
    unique_id = snap.str("uniqueId", max_len=120)
    units = snap.str("units", "feet")
    if units not in UNIT_SCALE:
        raise invalid(snap.path("units"), "must be 'feet' or 'mm'")
    scale = UNIT_SCALE[units]
    try:
        placement = xform.parse(snap.raw["transform"]) if snap.has("transform") \
            else xform.identity()
    except ValueError as exc:
        raise invalid(snap.path("transform"), str(exc)) from exc
    try:
        vertices, submeshes, materials = mesh.validate(
            snap.raw.get("vertices"), snap.raw.get("submeshes"), snap.raw.get("materials"))
    except MeshError as exc:
        raise invalid(snap.path(exc.field), exc.message) from exc
    baseline = xform.scale_translation(placement, scale)
    to_local = xform.inverse(baseline)
    local = [list(xform.apply(to_local, [c * scale for c in v])) for v in vertices]
    return Snapshot(unique_id, snap.int("elementId", None), local, submeshes, materials,
                    baseline, snap.str("snapshotStamp", None, max_len=64),
                    snap.str("geomHash", None, max_len=64))


def save_snapshot(ctx: Ctx, snap: Snapshot, source_url: str | None) -> RhinoObject:
    """Create or replace the Rhino object (B = C = placement); lock and selection stay."""
    obj = ctx.session.scalars(select(RhinoObject).where(
        RhinoObject.model == ctx.model, RhinoObject.unique_id == snap.unique_id)).one_or_none()
    if obj is None:
        obj = RhinoObject(model=ctx.model, unique_id=snap.unique_id, locked=False,
                          selected=False)
        ctx.session.add(obj)
    obj.element_id = snap.element_id
    obj.vertices, obj.submeshes, obj.materials = snap.vertices, snap.submeshes, snap.materials
    obj.baseline, obj.current = snap.baseline, [row[:] for row in snap.baseline]
    obj.snapshot_stamp, obj.geom_hash, obj.source_url = snap.stamp, snap.digest, source_url
    obj.imported_at = utcnow()
    ctx.wrote = True
    return obj


@method("rhino_import_snapshot", WRITE,
        "Import a Revit geometry snapshot (get_instance_geometry's shape) into Rhino",
        params=(Param("uniqueId", {**STR, "maxLength": 120}, "The Revit element's uniqueId",
                      required=True),
                Param("elementId", INT),
                Param("units", {"type": "string", "enum": ["feet", "ft", "mm"]},
                      "Of vertices and transform (default feet)"),
                Param("transform", MATRIX, "The placement (default identity)"),
                # Only their outer shape here: mesh.validate names the bad vertex or index.
                Param("vertices", {"type": "array", "description": "[[x, y, z], ...]"},
                      "Block-local vertices", required=True),
                Param("submeshes", {"type": "array", "description": "[{materialKey, "
                                    "intIndices}]"}, required=True),
                Param("materials", {"type": "array", "description": "[{key, ...}]"}),
                Param("snapshotStamp", {"type": "string", "maxLength": 64}),
                Param("geomHash", {"type": "string", "maxLength": 64}), DRY_RUN),
        result=ok_result({"uniqueId": STR, "imported": INT, "msg": STR, "dryRun": BOOL},
                         ("uniqueId",)),
        example={"uniqueId": "wall-1", "units": "mm",
                 "vertices": [[0, 0, 0], [1000, 0, 0], [0, 1000, 0]],
                 "submeshes": [{"materialKey": "Concrete", "intIndices": [0, 1, 2]}],
                 "dryRun": True})
def rhino_import_snapshot(ctx: Ctx, p: Params) -> dict[str, Any]:
    snap = parse_snapshot(p)
    if not p.bool("dryRun"):
        save_snapshot(ctx, snap, None)
    return dry({"ok": True, "uniqueId": snap.unique_id, "imported": 1,
                "msg": f"imported {snap.unique_id} ({len(snap.vertices)} vertices)"},
               p.bool("dryRun"))


@dataclass
class Fetched:
    """What one get_instance_geometry call brought back: a snapshot or an error."""

    unique_id: str
    snapshot: dict[str, Any] | None = None
    error: RpcError | None = None


def fetch(revit: Revit, unique_id: str) -> Fetched:
    try:
        return Fetched(unique_id, revit.call("get_instance_geometry", {"uniqueId": unique_id}))
    except RpcError as exc:
        return Fetched(unique_id, error=exc)


def error_item(unique_id: str, exc: RpcError) -> dict[str, Any]:
    detail: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.data:
        detail["data"] = exc.data
    return {"uniqueId": unique_id, "ok": False, "error": detail}


def all_unreachable(results: list[Fetched]) -> bool:
    return bool(results) and all(r.error is not None and r.error.code == UPSTREAM_ERROR
                                 for r in results)


def import_fetched(ctx: Ctx, fetched: Fetched, source: str | None, dry_run: bool
                   ) -> dict[str, Any]:
    if fetched.error is not None:
        return error_item(fetched.unique_id, fetched.error)
    try:
        snap = parse_snapshot(Params(fetched.snapshot or {}, "snapshot."))
    except RpcError as exc:
        return error_item(fetched.unique_id, exc)
    if not dry_run:
        save_snapshot(ctx, snap, source)
    return {"uniqueId": fetched.unique_id, "ok": True}


@method("rhino_import_by_ids", WRITE,
        "Fetch elements' geometry from Revit by uniqueId and import it into Rhino",
        params=(Param("uniqueIds", UIDS, "At least one Revit uniqueId", required=True),
                REVIT_BASE_URL, DRY_RUN),
        result=ok_result({"imported": INT, "errors": INT, "items": ITEMS, "dryRun": BOOL},
                         ("imported", "items")),
        example={"uniqueIds": ["<uniqueId from get_element_info>"], "dryRun": True})
def rhino_import_by_ids(ctx: Ctx, p: Params) -> dict[str, Any]:
    ids = list(dict.fromkeys(p.str_list("uniqueIds")))
    if not ids:
        raise invalid("uniqueIds", "must name at least one element")
    revit = Revit.for_request(ctx, p)
    results = [fetch(revit, uid) for uid in ids]
    if all_unreachable(results):
        raise results[0].error  # type: ignore[misc]
    items = [import_fetched(ctx, r, revit.url, p.bool("dryRun")) for r in results]
    imported = sum(1 for i in items if i["ok"])
    return dry({"ok": imported == len(items), "imported": imported,
                "errors": len(items) - imported, "items": items}, p.bool("dryRun"))


@method("rhino_refresh_from_revit", IDEMPOTENT_WRITE,
        "Re-import the Rhino objects whose Revit geometry changed; report those gone",
        params=(RHINO_UIDS, REVIT_BASE_URL, DRY_RUN),
        result=ok_result({"checked": INT, "refreshed": INT, "unchanged": INT, "missing": INT,
                          "errors": INT, "items": ITEMS}, ("checked", "items")),
        example={"dryRun": True})
def rhino_refresh_from_revit(ctx: Ctx, p: Params) -> dict[str, Any]:
    """Re-import every object whose Revit geometry hash changed; report the ones gone."""
    chosen = targets(ctx, p) if p.has("uniqueIds") else objects(ctx)
    plan = [(obj, Revit.for_request(ctx, p, obj.source_url)) for obj in chosen]
    results = [(obj, revit, fetch(revit, obj.unique_id)) for obj, revit in plan]
    if all_unreachable([r for _o, _r, r in results]):
        raise results[0][2].error  # type: ignore[misc]
    items: list[dict[str, Any]] = []
    counts = {"refreshed": 0, "unchanged": 0, "missing": 0, "errors": 0}
    for obj, revit, fetched in results:
        if fetched.error is not None:
            missing = (fetched.error.data or {}).get("code") == "NOT_FOUND"
            counts["missing" if missing else "errors"] += 1
            item = error_item(obj.unique_id, fetched.error)
            item["status"] = "missing" if missing else "error"
            items.append(item)
            continue
        if (fetched.snapshot or {}).get("geomHash") == obj.geom_hash and obj.geom_hash:
            counts["unchanged"] += 1
            items.append({"uniqueId": obj.unique_id, "ok": True, "status": "unchanged"})
            continue
        item = import_fetched(ctx, fetched, revit.url, p.bool("dryRun"))
        item["status"] = "refreshed" if item["ok"] else "error"
        counts["refreshed" if item["ok"] else "errors"] += 1
        items.append(item)
    return dry({"ok": counts["errors"] == 0, "checked": len(results), **counts,
                "items": items, "msg": f"{counts['refreshed']} refreshed, {counts['unchanged']}"
                                       f" unchanged, {counts['missing']} missing in Revit"},
               p.bool("dryRun"))


# ---------------------------------------------------------------- selection and edits


@method("rhino_select", IDEMPOTENT_WRITE, "Select Rhino objects",
        params=(Param("uniqueIds", UIDS, required=True),
                Param("mode", {"type": "string", "enum": ["replace", "add"]},
                      "Default replace"), DRY_RUN),
        result=ok_result({"count": INT, "uniqueIds": UIDS, "notFound": UIDS}, ("count",)),
        example={"uniqueIds": ["<uniqueId>"], "mode": "replace"})
def rhino_select(ctx: Ctx, p: Params) -> dict[str, Any]:
    ids = p.str_list("uniqueIds")
    mode = p.str("mode", "replace")
    if mode not in ("replace", "add"):
        raise invalid("mode", "must be 'replace' or 'add'")
    found = objects(ctx, ids)
    if not p.bool("dryRun"):
        if mode == "replace":
            for obj in objects(ctx, selected=True):
                obj.selected = False
        for obj in found:
            obj.selected = True
        ctx.wrote = True
    result = dry({"ok": True, "count": len(found), "uniqueIds": [o.unique_id for o in found]},
                 p.bool("dryRun"))
    missing = sorted(set(ids) - {o.unique_id for o in found})
    if missing:
        result["notFound"] = missing
    return result


def scale_factors(p: Params) -> tuple[float, float, float] | None:
    """``scale`` as one factor, [sx, sy, sz] or {x, y, z} (a missing axis keeps 1)."""
    raw = p.raw.get("scale")
    if raw is None:
        return None
    if isinstance(raw, list) and len(raw) == 3:
        raw = {"x": raw[0], "y": raw[1], "z": raw[2]}
    if isinstance(raw, dict):
        inner = Params(raw, "scale.")
        factors = (inner.num("x", 1.0), inner.num("y", 1.0), inner.num("z", 1.0))
    else:
        factors = (p.num("scale"),) * 3
    if any(not 1e-6 <= abs(f) <= 1e6 for f in factors):
        raise invalid("scale", "factors must be between 1e-6 and 1e6 in size")
    return factors


@method("rhino_transform_objects", WRITE,
        "A person's gumball edit in Rhino: scale and rotate about the pivot, then move (mm)",
        params=(RHINO_UIDS, Param("translate", VEC, "mm"), Param("rotateZDeg", NUM),
                Param("scale", {"anyOf": [NUM, VEC["anyOf"][0], VEC["anyOf"][1]],
                                "x-message": "must be a factor, [sx, sy, sz] or {x, y, z}"},
                      "One factor or per axis (non-rigid: commit refuses it)"),
                Param("pivot", VEC, "Default: each object's base point"), DRY_RUN),
        result=ok_result({"count": INT, "uniqueIds": UIDS, "current": {"type": "object"}},
                         ("count",)),
        example={"translate": {"x": 500}, "rotateZDeg": 90, "dryRun": True})
def rhino_transform_objects(ctx: Ctx, p: Params) -> dict[str, Any]:
    """A person's gumball edit: scale and rotate about the pivot, then translate (mm)."""
    chosen = targets(ctx, p)
    translate = p.vec("translate", (0.0, 0.0, 0.0))
    yaw = p.num("rotateZDeg", 0.0)
    factors = scale_factors(p)
    locked = [o.unique_id for o in chosen if o.locked]
    if locked:
        raise app_error("LOCKED", f"Locked objects cannot be edited: {', '.join(locked)}",
                        locked=locked)
    dry_run = p.bool("dryRun")
    planned = {}
    for obj in chosen:
        pivot = p.vec("pivot") if p.has("pivot") else xform.origin(obj.current)
        local = xform.rotation_z(yaw)
        if factors is not None:
            local = xform.mul(local, xform.scaling(*factors))
        about = xform.mul(xform.translation(*pivot), local,
                          xform.translation(-pivot[0], -pivot[1], -pivot[2]))
        planned[obj.unique_id] = xform.mul(xform.translation(*translate), about, obj.current)
        if not xform.bounded(planned[obj.unique_id]):
            raise app_error("OUT_OF_RANGE", f"The edit would move {obj.unique_id} out of range",
                            uniqueId=obj.unique_id)
        if not dry_run:
            obj.current = planned[obj.unique_id]
            ctx.wrote = True
    result = {"ok": True, "count": len(chosen), "uniqueIds": [o.unique_id for o in chosen]}
    if dry_run:
        result["current"] = planned
    return dry(result, dry_run)


def set_locked(ctx: Ctx, p: Params, locked: bool) -> dict[str, Any]:
    chosen = targets(ctx, p)
    if not p.bool("dryRun"):
        for obj in chosen:
            obj.locked = locked
        ctx.wrote = bool(chosen)
    return dry({"ok": True, "count": len(chosen)}, p.bool("dryRun"))


@method("rhino_lock_objects", IDEMPOTENT_WRITE, "Lock Rhino objects against edits",
        params=(RHINO_UIDS, DRY_RUN), result=ok_result({"count": INT}, ("count",)),
        example={"uniqueIds": ["<uniqueId>"]})
def rhino_lock_objects(ctx: Ctx, p: Params) -> dict[str, Any]:
    return set_locked(ctx, p, True)


@method("rhino_unlock_objects", IDEMPOTENT_WRITE, "Unlock Rhino objects",
        params=(RHINO_UIDS, DRY_RUN), result=ok_result({"count": INT}, ("count",)),
        example={"uniqueIds": ["<uniqueId>"]})
def rhino_unlock_objects(ctx: Ctx, p: Params) -> dict[str, Any]:
    return set_locked(ctx, p, False)


@method("rhino_get_objects", READ,
        "What Rhino holds: each object's baseline, current transform, lock and guard",
        params=(Param("uniqueIds", UIDS, "Default: every object"),
                Param("includeGeometry", BOOL, "Add world vertices (mm) and submeshes")),
        result=ok_result({"count": INT, "items": ITEMS}, ("count", "items")),
        example={"includeGeometry": False})
def rhino_get_objects(ctx: Ctx, p: Params) -> dict[str, Any]:
    """What Rhino holds (not in seed 001; a read so callers can see Rhino's geometry)."""
    chosen = targets(ctx, p) if p.has("uniqueIds") else objects(ctx)
    geometry = p.bool("includeGeometry")
    items = []
    for obj in chosen:
        item: dict[str, Any] = {"uniqueId": obj.unique_id, "elementId": obj.element_id,
                                "locked": obj.locked, "selected": obj.selected,
                                "baseline": obj.baseline, "current": obj.current,
                                "units": "mm", "guard": guard(obj)}
        if geometry:
            item["vertices"] = world_mm(obj)
            item["submeshes"] = obj.submeshes
        items.append(item)
    return {"ok": True, "count": len(items), "items": items}


# ---------------------------------------------------------------- delta and commit


@dataclass
class Delta:
    translate_ft: tuple[float, float, float]
    yaw_deg: float

    @property
    def changed(self) -> bool:
        return abs(self.yaw_deg) > CHANGE_TOL or any(abs(c) > CHANGE_TOL
                                                     for c in self.translate_ft)

    def as_params(self) -> dict[str, Any]:
        x, y, z = self.translate_ft
        return {"translate": {"x": x, "y": y, "z": z, "units": "feet"},
                "rotateZDeg": self.yaw_deg}


def delta_of(baseline: Matrix, current: Matrix) -> Delta:
    """The Revit delta for an edit from B to C; RpcError NON_RIGID when it is not one."""
    local = xform.mul(xform.inverse(baseline), current)  # Δ = B⁻¹·C, as seed 001 defines it
    problem = xform.rigid_problem(local)
    world = xform.mul(current, xform.inverse(baseline))  # D = C·B⁻¹, the edit in world axes
    problem = problem or xform.yaw_problem(world)
    if problem:
        raise app_error("NON_RIGID", f"Transform refused: {problem}")
    t_mm, yaw = xform.decompose_about(world, xform.origin(baseline))
    return Delta((t_mm[0] / MM_PER_FOOT, t_mm[1] / MM_PER_FOOT, t_mm[2] / MM_PER_FOOT), yaw)


@method("rhino_get_selection", READ,
        "The selected Rhino objects with the Revit delta each edit would send",
        result=ok_result({"items": ITEMS}, ("items",)), example={})
def rhino_get_selection(ctx: Ctx, p: Params) -> dict[str, Any]:
    items = []
    for obj in objects(ctx, selected=True):
        item: dict[str, Any] = {"uniqueId": obj.unique_id, "guard": guard(obj),
                                "locked": obj.locked}
        try:
            item["delta"] = delta_of(obj.baseline, obj.current).as_params()
            item["rigid"] = True
        except RpcError as exc:
            item["rigid"] = False
            item["error"] = {"code": exc.code, "message": exc.message, "data": exc.data}
        items.append(item)
    return {"ok": True, "items": items}


@method("rhino_commit_transform", WRITE,
        "Send Rhino edits to Revit as apply_transform_delta (rigid edits only)",
        params=(RHINO_UIDS, REVIT_BASE_URL, DRY_RUN),
        result=ok_result({"appliedCount": INT, "errors": INT, "items": ITEMS},
                         ("appliedCount", "items")),
        example={"dryRun": True})
def rhino_commit_transform(ctx: Ctx, p: Params) -> dict[str, Any]:
    dry_run = p.bool("dryRun")
    chosen = targets(ctx, p)
    items: dict[str, dict[str, Any]] = {}
    sends: list[tuple[RhinoObject, Revit, Delta]] = []
    for obj in chosen:  # 1. validate locally, without writing
        if obj.locked:
            items[obj.unique_id] = error_item(obj.unique_id, app_error(
                "LOCKED", f"{obj.unique_id} is locked"))
            continue
        try:
            delta = delta_of(obj.baseline, obj.current)
        except RpcError as exc:
            items[obj.unique_id] = error_item(obj.unique_id, exc)
            continue
        if not delta.changed:
            items[obj.unique_id] = {"uniqueId": obj.unique_id, "ok": True,
                                    "status": "unchanged"}
            continue
        sends.append((obj, Revit.for_request(ctx, p, obj.source_url), delta))
    answers: list[tuple[RhinoObject, Delta, dict[str, Any] | RpcError]] = []
    for obj, revit, delta in sends:  # 2. ask Revit, one object at a time
        params: dict[str, Any] = {"uniqueId": obj.unique_id, "delta": delta.as_params(),
                                  "guard": {k: v for k, v in guard(obj).items() if v}}
        if dry_run:
            params["dryRun"] = True
        try:
            answers.append((obj, delta, revit.call("apply_transform_delta", params)))
        except RpcError as exc:
            answers.append((obj, delta, exc))
    if answers and all(isinstance(a, RpcError) and a.code == UPSTREAM_ERROR
                       for _o, _d, a in answers):
        first = answers[0][2]
        raise first if isinstance(first, RpcError) else upstream_error("upstream failed")
    applied = 0
    for obj, delta, answer in answers:  # 3. on success the edit becomes the new baseline
        if isinstance(answer, RpcError):
            items[obj.unique_id] = error_item(obj.unique_id, answer)
            continue
        applied += 1
        items[obj.unique_id] = {"uniqueId": obj.unique_id, "ok": True, "status": "applied",
                                "delta": delta.as_params(),
                                "applied": answer.get("applied", [])}
        if not dry_run:
            obj.baseline = [row[:] for row in obj.current]
            obj.snapshot_stamp = answer.get("snapshotStamp")
            obj.geom_hash = answer.get("geomHash")
            ctx.wrote = True
    errors = sum(1 for i in items.values() if not i["ok"])
    return dry({"ok": errors == 0, "appliedCount": applied, "errors": errors,
                "items": [items[o.unique_id] for o in chosen]}, dry_run)

"""Making and changing elements: creation, parameter edits (planned, then applied), moves.

Every mutation is planned first (what would change, or why it cannot) and applied only when
the caller did not ask for a dry run, so a dry run reports exactly what a real call would do.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from typing import Any

from app.design_model import mesh, store, xform
from app.design_model.protocol import Params, invalid
from app.design_model.registry import Ctx
from app.design_model.xform import MM_PER_FOOT, Matrix
from app.models.design_model import DesignElement

# Parameters that live in their own column rather than in ``parameters``.
COLUMN_PARAMS = {"Mark": "mark"}


def new_unique_id(element_id: int) -> str:
    """Revit-style: a GUID followed by the element id in hex."""
    return f"{uuid.uuid4()}-{element_id:08x}"


def add_element(ctx: Ctx, *, category: str, family: str, type_name: str, level: str | None,
                transform: Matrix, vertices: list[list[float]],
                submeshes: list[dict[str, Any]], materials: list[dict[str, Any]],
                parameters: dict[str, Any] | None = None, location: dict[str, Any] | None = None,
                mark: str | None = None, name: str = "", kind: str = "instance",
                element_id: int | None = None, unique_id: str | None = None,
                snapshot_stamp: str | None = None) -> DesignElement:
    element_id = element_id if element_id is not None else store.next_element_id(ctx)
    params = {"Comments": {"value": "", "units": None}}
    params.update(parameters or {})
    element = DesignElement(
        model=ctx.model, element_id=element_id,
        unique_id=unique_id or new_unique_id(element_id), kind=kind, category=category,
        family=family, type_name=type_name, name=name, level=level, mark=mark,
        parameters=params, location=location, vertices=vertices, submeshes=submeshes,
        materials=materials, transform=transform, selected=False)
    element.geom_hash = mesh.geom_hash(store.world(element), submeshes, materials)
    element.snapshot_stamp = snapshot_stamp or mesh.new_stamp()
    ctx.session.add(element)
    ctx.session.flush()  # so the next id lookup in the same call sees this one
    ctx.wrote = True
    return element


def placement(start_mm: tuple[float, float, float], end_mm: tuple[float, float, float],
              z_mm: float) -> tuple[Matrix, float]:
    """The transform (feet) that puts local +X along start→end, and the length in mm."""
    dx, dy = end_mm[0] - start_mm[0], end_mm[1] - start_mm[1]
    length = math.hypot(dx, dy)
    yaw = math.degrees(math.atan2(dy, dx))
    t = xform.translation(start_mm[0] / MM_PER_FOOT, start_mm[1] / MM_PER_FOOT,
                          z_mm / MM_PER_FOOT)
    return xform.mul(t, xform.rotation_z(yaw)), length


# ---------------------------------------------------------------- parameters


def param_name(p: Params) -> str:
    """``param`` as a name, or as {name} / {paramName} like the real batch commands."""
    raw = p.raw.get("param", p.raw.get("paramName"))
    if isinstance(raw, dict):
        raw = raw.get("name") or raw.get("paramName")
        if not isinstance(raw, str) or not raw.strip():
            raise invalid("param.name", "must be a non-empty string")
        return raw
    if raw is None:
        raise invalid("param", "is required")
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 120:
        raise invalid("param", "must be a parameter name")
    return raw


def param_value(p: Params) -> Any:
    """``value`` as a scalar, or as {stringValue | intValue | doubleValue} (real shape)."""
    if "value" not in p.raw:
        raise invalid("value", "is required")
    value = p.raw["value"]
    if isinstance(value, dict):
        for key in ("stringValue", "intValue", "doubleValue", "value"):
            if key in value:
                value = value[key]
                break
        else:
            raise invalid("value", "an object value needs stringValue, intValue or doubleValue")
    if value is not None and not isinstance(value, str | int | float | bool):
        raise invalid("value", "must be a string, number, boolean or null")
    if isinstance(value, float) and not math.isfinite(value):
        raise invalid("value", "must be finite")
    return value


@dataclass
class ParamChange:
    element: DesignElement
    name: str
    old: Any = None
    new: Any = None
    error: str | None = None

    def item(self) -> dict[str, Any]:
        if self.error:
            return {"elementId": self.element.element_id, "ok": False, "msg": self.error}
        return {"elementId": self.element.element_id, "ok": True, "param": self.name,
                "from": self.old, "to": self.new}


def plan_param(element: DesignElement, name: str, value: Any) -> ParamChange:
    if name in COLUMN_PARAMS:
        old = getattr(element, COLUMN_PARAMS[name])
        if value is not None and not isinstance(value, str | int | float):
            return ParamChange(element, name, error=f"'{name}' takes a text value")
        new = None if value in (None, "") else str(value)
        if new is not None and len(new) > 80:
            return ParamChange(element, name, error=f"'{name}' is at most 80 characters")
        return ParamChange(element, name, old, new)
    current = element.parameters.get(name)
    if current is None:
        return ParamChange(element, name,
                           error=f"parameter '{name}' not found on element {element.element_id}")
    if current.get("readOnly"):
        return ParamChange(element, name, error=f"parameter '{name}' is read-only")
    if current.get("units") and (isinstance(value, bool) or not isinstance(value, int | float)):
        return ParamChange(element, name,
                           error=f"parameter '{name}' takes a number in {current['units']}")
    return ParamChange(element, name, current.get("value"), value)


def apply_param(ctx: Ctx, change: ParamChange) -> None:
    element = change.element
    if change.name in COLUMN_PARAMS:
        setattr(element, COLUMN_PARAMS[change.name], change.new)
    else:
        params = dict(element.parameters)
        params[change.name] = {**params[change.name], "value": change.new}
        element.parameters = params  # a new dict, so the JSON column is seen as changed
    ctx.wrote = True


# ---------------------------------------------------------------- moves


def plan_move(element: DesignElement, translate_ft: tuple[float, float, float],
              yaw_deg: float) -> Matrix:
    """The new transform: rotate about the element's base point, then translate.

    Rotating first and about the point *before* the move is what keeps "translate + rotate"
    equal to the Rhino edit it came from (the real add-in moved first and then rotated about
    the stale pivot).
    """
    pivot = xform.origin(element.transform)
    moved = xform.mul(xform.translation(*translate_ft), xform.about_pivot(yaw_deg, pivot),
                      element.transform)
    return moved


def apply_move(ctx: Ctx, element: DesignElement, transform: Matrix) -> None:
    element.transform = transform
    if element.location is not None:
        element.location = dict(element.location)  # mark changed; location is block-local
    store.restamp(element)
    ctx.wrote = True


def location_mm(element: DesignElement) -> dict[str, Any]:
    """World location in mm: {start, end} for curve elements, {point} for point ones."""
    loc = element.location or {}

    def pt(local: list[float]) -> dict[str, float]:
        x, y, z = xform.apply(element.transform, local)
        return {"x": mm(x), "y": mm(y), "z": mm(z)}

    if "curve" in loc:
        return {"start": pt(loc["curve"][0]), "end": pt(loc["curve"][1])}
    if "point" in loc:
        return {"point": pt(loc["point"])}
    return {"point": pt([0.0, 0.0, 0.0])}


def local_extent_mm(element: DesignElement) -> tuple[float, float, float]:
    """Size of the block-local bounding box (length, width, height) in mm."""
    if not element.vertices:
        return (0.0, 0.0, 0.0)
    lo, hi = mesh.bounds(element.vertices)
    return tuple(mm(hi[i] - lo[i]) for i in range(3))  # type: ignore[return-value]


def mm(feet: float) -> float:
    """Feet to mm for output, rounded to 1 µm so float noise does not show."""
    return round(feet * MM_PER_FOOT, 6) + 0.0

"""Loading a design model from JSON (``flask design-model load FILE``) and the demo model.

File format (lengths of geometry in feet, parameters carry their own units)::

    {"elements": [
       {"elementId": 3001, "uniqueId": "...", "category": "OST_Walls",
        "kind": "instance" | "type", "family": "Basic Wall", "type": "RC200",
        "name": "", "level": "1FL", "mark": "W1",
        "parameters": {"Comments": {"value": "", "units": null}, "Height": 3500},
        "location": {"curve": [[0, 0, 0], [32.8, 0, 0]]} | {"point": [0, 0, 0]},
        "transform": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],
        "geometry": {"vertices": [[x, y, z], ...],
                     "submeshes": [{"materialKey": "Concrete", "intIndices": [0, 1, 2]}],
                     "materials": [{"key": "Concrete"}]},
        "snapshotStamp": "2025-10-05T00:00:00Z"}]}

Levels are elements of category OST_Levels (name + an ``Elevation`` parameter in mm); element
types have ``"kind": "type"``. Vertices are block-local: the world geometry is transform · v.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.design_model import elements, mesh, xform
from app.design_model.demo import demo_model
from app.design_model.registry import Ctx
from app.models.design_model import DesignElement, RhinoObject


class LoadError(ValueError):
    """A bad model file; the message starts with the JSON path of the problem."""


def _text(item: dict[str, Any], key: str, where: str, required: bool = False,
          max_len: int = 120) -> str | None:
    value = item.get(key)
    if value is None:
        if required:
            raise LoadError(f"{where}.{key}: is required")
        return None
    if not isinstance(value, str) or len(value) > max_len:
        raise LoadError(f"{where}.{key}: must be a string of at most {max_len} characters")
    return value


def _parameters(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise LoadError(f"{where}.parameters: must be an object")
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if not isinstance(value, dict):
            value = {"value": value, "units": None}
        if not isinstance(value.get("units"), str | None):
            raise LoadError(f"{where}.parameters.{name}.units: must be a string or null")
        if not isinstance(value.get("value"), str | int | float | bool | None):
            raise LoadError(f"{where}.parameters.{name}.value: must be a scalar")
        out[name] = {"value": value.get("value"), "units": value.get("units"),
                     **({"readOnly": True} if value.get("readOnly") else {})}
    return out


def _location(raw: Any, where: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        if isinstance(raw, dict) and "curve" in raw:
            points = mesh.validate(raw["curve"], [{"intIndices": [0, 0, 1]}])[0]
            if len(points) != 2:
                raise LoadError(f"{where}.location.curve: must hold two points")
            return {"curve": points}
        if isinstance(raw, dict) and "point" in raw:
            return {"point": mesh.validate([raw["point"]], [{"intIndices": [0, 0, 0]}])[0][0]}
    except mesh.MeshError as exc:
        raise LoadError(f"{where}.location: {exc.message}") from exc
    raise LoadError(f"{where}.location: must be {{curve: [p0, p1]}} or {{point: p}}")


def _element(ctx: Ctx, item: Any, where: str) -> None:
    if not isinstance(item, dict):
        raise LoadError(f"{where}: must be an object")
    element_id = item.get("elementId")
    if isinstance(element_id, bool) or not isinstance(element_id, int) or element_id <= 0:
        raise LoadError(f"{where}.elementId: must be a positive integer")
    category = _text(item, "category", where, required=True) or ""
    if not category.startswith("OST_"):
        raise LoadError(f"{where}.category: must be a built-in category like OST_Walls")
    kind = item.get("kind", "instance")
    if kind not in ("instance", "type"):
        raise LoadError(f"{where}.kind: must be 'instance' or 'type'")
    try:
        transform = xform.parse(item["transform"]) if "transform" in item \
            else xform.identity()
    except ValueError as exc:
        raise LoadError(f"{where}.transform: {exc}") from exc
    geometry = item.get("geometry")
    if geometry is None:
        vertices: list[list[float]] = []
        submeshes: list[dict[str, Any]] = []
        materials: list[dict[str, Any]] = []
    elif not isinstance(geometry, dict):
        raise LoadError(f"{where}.geometry: must be an object")
    else:
        try:
            vertices, submeshes, materials = mesh.validate(
                geometry.get("vertices"), geometry.get("submeshes"), geometry.get("materials"))
        except mesh.MeshError as exc:
            raise LoadError(f"{where}.geometry.{exc.field}: {exc.message}") from exc
        # Every material a submesh names is listed, even when the file forgot it.
        listed = {m["key"] for m in materials}
        for key in dict.fromkeys(s["materialKey"] for s in submeshes):
            if key not in listed:
                materials.append({"key": key})
    elements.add_element(
        ctx, element_id=element_id, kind=kind, category=category,
        unique_id=_text(item, "uniqueId", where, required=True),
        family=_text(item, "family", where) or "", type_name=_text(item, "type", where) or "",
        name=_text(item, "name", where) or "", level=_text(item, "level", where, max_len=80),
        mark=_text(item, "mark", where, max_len=80),
        parameters=_parameters(item.get("parameters"), where),
        location=_location(item.get("location"), where), transform=transform,
        vertices=vertices, submeshes=submeshes, materials=materials,
        snapshot_stamp=_text(item, "snapshotStamp", where, max_len=64))


def element_count(session: Session, model: str) -> int:
    return session.scalar(select(func.count()).select_from(DesignElement).where(
        DesignElement.model == model)) or 0


def clear(session: Session, model: str) -> None:
    session.execute(delete(RhinoObject).where(RhinoObject.model == model))
    session.execute(delete(DesignElement).where(DesignElement.model == model))


def load(session: Session, data: Any, model: str, replace: bool = False) -> int:
    """Load ``data`` into ``model``; flushes only, the caller commits.

    Refuses to mix into a non-empty model unless ``replace`` clears it first.
    """
    if not isinstance(data, dict) or not isinstance(data.get("elements"), list):
        raise LoadError("$: must be an object with an 'elements' array")
    name = model
    if not 0 < len(name) <= 80:
        raise LoadError("model: must be a name of at most 80 characters")
    if replace:
        clear(session, name)
    elif element_count(session, name):
        raise LoadError(f"model '{name}' already holds elements; use --replace to reload it")
    ctx = Ctx(model=name, session=session)
    seen_ids: set[int] = set()
    seen_uids: set[str] = set()
    for index, item in enumerate(data["elements"]):
        where = f"$.elements[{index}]"
        if isinstance(item, dict):
            if item.get("elementId") in seen_ids:
                raise LoadError(f"{where}.elementId: {item['elementId']} appears twice")
            if item.get("uniqueId") in seen_uids:
                raise LoadError(f"{where}.uniqueId: {item['uniqueId']} appears twice")
            seen_ids.add(item.get("elementId"))  # type: ignore[arg-type]
            seen_uids.add(item.get("uniqueId"))  # type: ignore[arg-type]
        _element(ctx, item, where)
    return len(data["elements"])


def load_demo(session: Session, model: str = "default", reset: bool = False) -> int | None:
    """Load the demo into ``model`` unless it already holds elements (then None); idempotent."""
    if not reset and element_count(session, model):
        return None
    return load(session, demo_model(), model=model, replace=True)

"""Finding elements: by id, by uniqueId, by selector; categories, levels and types.

Selectors ``{category, typeName, levelName (or level), familyName, mark}`` are how recipes
name elements by intent rather than by id; every key given must match, and an empty selector
is refused because it would mean "everything".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from app.design_model import mesh
from app.design_model.protocol import Params, app_error, invalid
from app.design_model.registry import Ctx
from app.models.design_model import DesignElement

# Built-in category ↔ the display name Revit users type ("Walls", "Structural Framing").
CATEGORIES: dict[str, str] = {
    "OST_Walls": "Walls",
    "OST_StructuralFraming": "Structural Framing",
    "OST_StructuralColumns": "Structural Columns",
    "OST_Rebar": "Structural Rebar",
    "OST_Floors": "Floors",
    "OST_Levels": "Levels",
    "OST_Doors": "Doors",
    "OST_Windows": "Windows",
    "OST_GenericModel": "Generic Models",
}
_BY_DISPLAY = {display.lower(): ost for ost, display in CATEGORIES.items()}

SELECTOR_KEYS = {"category": "category", "typeName": "type_name", "levelName": "level",
                 "level": "level", "familyName": "family", "mark": "mark"}


def category_name(ost: str) -> str:
    return CATEGORIES.get(ost, ost.removeprefix("OST_"))


def normalize_category(value: str, param: str) -> str:
    """'OST_Walls', 'Walls' or 'walls' → 'OST_Walls'; unknown names are a -32602."""
    if value in CATEGORIES:
        return value
    found = _BY_DISPLAY.get(value.strip().lower())
    if found is None:
        if value.startswith("OST_") and value[4:].isidentifier():
            return value  # a category this demo does not know by name but may hold
        raise invalid(param, f"unknown category '{value}' (e.g. OST_Walls or 'Walls')")
    return found


def instances(ctx: Ctx):  # type: ignore[no-untyped-def]
    return select(DesignElement).where(DesignElement.model == ctx.model,
                                       DesignElement.kind == "instance")


def by_element_id(ctx: Ctx, element_id: int) -> DesignElement:
    element = ctx.session.scalars(instances(ctx).where(
        DesignElement.element_id == element_id)).one_or_none()
    if element is None:
        raise app_error("NOT_FOUND", f"No element with elementId {element_id}",
                        elementId=element_id)
    return element


def by_unique_id(ctx: Ctx, unique_id: str) -> DesignElement:
    element = ctx.session.scalars(instances(ctx).where(
        DesignElement.unique_id == unique_id)).one_or_none()
    if element is None:
        raise app_error("NOT_FOUND", f"No element with uniqueId {unique_id}", uniqueId=unique_id)
    return element


def by_element_ids(ctx: Ctx, ids: list[int]) -> tuple[list[DesignElement], list[int]]:
    """The elements found, in the order asked, and the ids not found."""
    rows = ctx.session.scalars(instances(ctx).where(DesignElement.element_id.in_(ids))).all()
    found = {e.element_id: e for e in rows}
    return ([found[i] for i in dict.fromkeys(ids) if i in found],
            [i for i in dict.fromkeys(ids) if i not in found])


def resolve_selector(ctx: Ctx, sel: Params, default_category: str | None = None
                     ) -> list[DesignElement]:
    unknown = sorted(set(sel.raw) - set(SELECTOR_KEYS))
    if unknown:
        keys = ", ".join(k for k in SELECTOR_KEYS if k != "level")
        raise invalid(sel.path(unknown[0]), f"unknown selector key (use {keys})")
    if not any(sel.raw.get(k) is not None for k in SELECTOR_KEYS):
        raise invalid(sel.prefix.rstrip(".") or "selector",
                      "must name at least one of category, typeName, levelName, familyName, mark")
    query = instances(ctx)
    category = sel.str("category", default_category)
    if category is not None:
        query = query.where(DesignElement.category == normalize_category(
            category, sel.path("category")))
    for key, column in SELECTOR_KEYS.items():
        if key == "category" or sel.raw.get(key) is None:
            continue
        query = query.where(getattr(DesignElement, column) == sel.str(key))
    return list(ctx.session.scalars(query.order_by(DesignElement.element_id)).all())


def resolve_targets(ctx: Ctx, p: Params, *, ids_key: str = "elementIds",
                    selector_key: str = "selector", default_category: str | None = None
                    ) -> tuple[list[DesignElement], str]:
    """Targets named by elementId | uniqueId | ids list | selector, and how they were named."""
    given = [k for k in ("elementId", "uniqueId", ids_key, selector_key) if p.has(k)]
    if not given:
        raise invalid(selector_key, f"give one of elementId, uniqueId, {ids_key} or "
                                    f"{selector_key}")
    if len(given) > 1:
        raise invalid(given[1], f"give only one of {', '.join(given)}")
    how = given[0]
    if how == "elementId":
        return [by_element_id(ctx, p.int("elementId"))], how
    if how == "uniqueId":
        return [by_unique_id(ctx, p.str("uniqueId"))], how
    if how == ids_key:
        found, missing = by_element_ids(ctx, p.int_list(ids_key))
        if missing:
            raise app_error("NOT_FOUND", f"No element with elementId {missing[0]}",
                            missing=missing)
        return found, how
    return resolve_selector(ctx, p.obj(selector_key), default_category), how


def levels(ctx: Ctx) -> list[DesignElement]:
    return list(ctx.session.scalars(instances(ctx).where(
        DesignElement.category == "OST_Levels").order_by(DesignElement.element_id)).all())


def level_named(ctx: Ctx, name: str, param: str) -> DesignElement:
    for level in levels(ctx):
        if level.name == name:
            return level
    raise app_error("LEVEL_NOT_FOUND", f"No level named '{name}'", param=param)


def level_by_id(ctx: Ctx, element_id: int, param: str) -> DesignElement:
    for level in levels(ctx):
        if level.element_id == element_id:
            return level
    raise app_error("LEVEL_NOT_FOUND", f"No level with elementId {element_id}", param=param)


def level_elevation_mm(level: DesignElement) -> float:
    value = (level.parameters.get("Elevation") or {}).get("value", 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def type_named(ctx: Ctx, category: str, name: str) -> DesignElement | None:
    return ctx.session.scalars(select(DesignElement).where(
        DesignElement.model == ctx.model, DesignElement.kind == "type",
        DesignElement.category == category, DesignElement.type_name == name)).one_or_none()


def type_id(ctx: Ctx, element: DesignElement) -> int | None:
    found = type_named(ctx, element.category, element.type_name)
    return found.element_id if found else None


def next_element_id(ctx: Ctx) -> int:
    current = ctx.session.scalar(select(func.max(DesignElement.element_id)).where(
        DesignElement.model == ctx.model))
    return (current or 100000) + 1


def world(element: DesignElement) -> list[list[float]]:
    return mesh.world_vertices(element.transform, element.vertices)


def restamp(element: DesignElement) -> None:
    """After a geometry change: a new snapshot stamp and the hash of the new world geometry."""
    element.geom_hash = mesh.geom_hash(world(element), element.submeshes, element.materials)
    element.snapshot_stamp = mesh.new_stamp()


def identity(ctx: Ctx, element: DesignElement, levels_by_name: dict[str, int] | None = None
             ) -> dict[str, Any]:
    """The ElementIdentity shape: everything a selector can name, plus ids."""
    if levels_by_name is None:
        levels_by_name = {lv.name: lv.element_id for lv in levels(ctx)}
    return {
        "elementId": element.element_id,
        "uniqueId": element.unique_id,
        "category": element.category,
        "categoryName": category_name(element.category),
        "familyName": element.family,
        "typeName": element.type_name,
        "levelName": element.level,
        "levelId": levels_by_name.get(element.level or ""),
        "mark": element.mark,
    }

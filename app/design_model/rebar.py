"""Rebar in beams: preview_/create_rebar_linear (a fixed count) and *_by_spacing (intent).

These methods exist only as examples in the playbook design document, so their shapes are
ours: ``preview_*`` → ``{candidates, hosts}``, ``create_*`` → ``{created, elementIds}``.
Bars are planned in the host's block-local frame from its bounding box (X along the beam,
Y across, Z up), so they follow the host wherever it has been moved or rotated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.actions.effects import READ, WRITE
from app.design_model import elements, mesh, store, xform
from app.design_model.protocol import Params, app_error, invalid
from app.design_model.registry import Ctx, Param, method
from app.design_model.revit_methods import require_confirm
from app.design_model.schemas import (
    CONFIRM,
    DRY_RUN,
    IDS,
    INT,
    LENGTH,
    NUM,
    SELECTOR,
    STR,
    ok_result,
)
from app.design_model.xform import MM_PER_FOOT
from app.models.design_model import DesignElement

BAR_DIAMETERS_MM: dict[str, float] = {
    "D10": 10, "D13": 13, "D16": 16, "D19": 19, "D22": 22, "D25": 25, "D29": 29, "D32": 32,
    "#3": 9.5, "#4": 12.7, "#5": 15.9, "#6": 19.1, "#7": 22.2, "#8": 25.4,
    "10M": 11.3, "15M": 16.0, "20M": 19.5, "25M": 25.2,
}
HOST_CATEGORIES = ("OST_StructuralFraming",)
MAX_BARS = 5000
_LENGTH = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(mm|cm|m|in|ft)?\s*$")
_TO_MM = {"mm": 1.0, "cm": 10.0, "m": 1000.0, "in": 25.4, "ft": MM_PER_FOOT, None: 1.0}

HOST = {"type": "object", "description": "The host beams: {elementId | uniqueId | elementIds} or "
        "a selector (category defaults to OST_StructuralFraming, the only host category)",
        "properties": {"elementId": INT, "uniqueId": STR, "elementIds": IDS,
                       **SELECTOR["properties"]}}
BAR_TYPE = Param("barType", {"type": "string", "enum": list(BAR_DIAMETERS_MM)},
                 "The bar size (its diameter comes from the table)", required=True)
HOST_PARAM = Param("host", HOST, "Which beams get the bars", required=True)
LINEAR_PARAMS = (BAR_TYPE, Param("count", {**INT, "minimum": 1, "maximum": 200},
                                 "Bars per host, spread across its width", required=True),
                 HOST_PARAM, Param("coverTop", LENGTH, "Default 25 mm"),
                 Param("coverSide", LENGTH, "Default 25 mm"))
SPACING_PARAMS = (BAR_TYPE, Param("spacingMm", NUM, "Centre distance, at least the bar "
                                                    "diameter", required=True),
                  HOST_PARAM, Param("cover", LENGTH, "Default 25 mm"))
PREVIEW_RESULT = ok_result({"candidates": INT, "barType": STR, "diameterMm": NUM,
                            "hosts": {"type": "array", "items": {"type": "object", "properties": {
                                "elementId": INT, "uniqueId": STR, "bars": INT}}}},
                           ("candidates", "hosts"))
CREATE_RESULT = ok_result({**PREVIEW_RESULT["properties"], "created": INT, "elementIds": IDS,
                           "dryRun": {"type": "boolean"}}, ("created", "elementIds"))
LINEAR_EXAMPLE = {"host": {"category": "OST_StructuralFraming", "levelName": "2FL"},
                  "barType": "D16", "count": 4, "coverTop": "25mm"}
SPACING_EXAMPLE = {"host": {"elementId": 4001}, "barType": "D13", "spacingMm": 200}


def length_mm(p: Params, name: str, default: float) -> float:
    """A length given as a number of mm or a string like '25mm', '2.5cm', '1in'."""
    raw = p.raw.get(name)
    if raw is None:
        return default
    if isinstance(raw, str):
        match = _LENGTH.match(raw)
        if not match:
            raise invalid(p.path(name), "must be a length like 25, '25mm' or '1in'")
        value = float(match.group(1)) * _TO_MM[match.group(2)]
    else:
        value = p.num(name)
    if value < 0:
        raise invalid(p.path(name), "must not be negative")
    return value


def bar_diameter(p: Params) -> tuple[str, float]:
    name = p.str("barType")
    if name not in BAR_DIAMETERS_MM:
        raise invalid("barType", f"unknown bar type '{name}' (known: "
                                 f"{', '.join(BAR_DIAMETERS_MM)})")
    return name, BAR_DIAMETERS_MM[name]


def hosts(ctx: Ctx, p: Params) -> list[DesignElement]:
    """``host`` is a selector, or {elementId | uniqueId | elementIds}; beams only."""
    host = p.obj("host")
    if any(host.has(k) for k in ("elementId", "uniqueId", "elementIds")):
        found, _how = store.resolve_targets(ctx, host)
    else:
        category = host.str("category", None)
        if category is not None and store.normalize_category(
                category, "host.category") not in HOST_CATEGORIES:
            raise invalid("host.category", "rebar hosts must be OST_StructuralFraming")
        found = store.resolve_selector(ctx, host, default_category=HOST_CATEGORIES[0])
    for element in found:
        if element.category not in HOST_CATEGORIES:
            raise cannot_host(ctx, element)
    return found


def cannot_host(ctx: Ctx, element: DesignElement) -> Exception:
    """INVALID_HOST naming what can host: the categories and the model's own candidates."""
    ids = list(ctx.session.scalars(store.instances(ctx).with_only_columns(
        DesignElement.element_id).where(DesignElement.category.in_(HOST_CATEGORIES)).order_by(
        DesignElement.element_id).limit(21)).all())
    shown = ", ".join(str(i) for i in ids[:20]) + (", ..." if len(ids) > 20 else "")
    names = " or ".join(f"{c} ({store.category_name(c)})" for c in HOST_CATEGORIES)
    hint = f"; elements that can: {shown}" if ids else "; this model has none"
    return app_error("INVALID_HOST", f"Element {element.element_id} cannot host rebar "
                                      f"({element.category}): hosts must be {names}{hint}",
                     elementId=element.element_id, hostCategories=list(HOST_CATEGORIES),
                     hostElementIds=ids[:20])


@dataclass
class Bar:
    host: DesignElement
    start: tuple[float, float, float]  # host-local, mm
    end: tuple[float, float, float]


def host_box(host: DesignElement) -> tuple[list[float], list[float]]:
    lo, hi = mesh.bounds(host.vertices)
    return [c * MM_PER_FOOT for c in lo], [c * MM_PER_FOOT for c in hi]


def plan_linear(host: DesignElement, count: int, diameter: float, cover_top: float,
                cover_side: float) -> list[Bar]:
    """``count`` top bars along the beam, spread evenly across its width inside the cover."""
    lo, hi = host_box(host)
    span = (hi[1] - lo[1]) - 2 * cover_side - diameter
    length = (hi[0] - lo[0]) - 2 * cover_side
    if span < 0 or length <= 0 or (hi[2] - lo[2]) < cover_top + diameter:
        raise app_error("COVER_TOO_LARGE", f"The covers do not leave room for a bar in element "
                                           f"{host.element_id}", elementId=host.element_id)
    if count > 1 and span / (count - 1) < diameter:
        raise app_error("TOO_MANY_BARS", f"{count} bars of {diameter} mm do not fit across "
                                         f"element {host.element_id}",
                        elementId=host.element_id)
    z = hi[2] - cover_top - diameter / 2
    y0 = lo[1] + cover_side + diameter / 2
    ys = [(lo[1] + hi[1]) / 2] if count == 1 else [y0 + i * span / (count - 1)
                                                   for i in range(count)]
    return [Bar(host, (lo[0] + cover_side, y, z), (hi[0] - cover_side, y, z)) for y in ys]


def plan_spacing(host: DesignElement, spacing: float, diameter: float, cover: float
                 ) -> list[Bar]:
    """Bars across the beam every ``spacing`` mm along its length inside the cover."""
    lo, hi = host_box(host)
    run = (hi[0] - lo[0]) - 2 * cover
    across = (hi[1] - lo[1]) - 2 * cover
    if run < 0 or across <= 0 or (hi[2] - lo[2]) < cover + diameter:
        raise app_error("COVER_TOO_LARGE", f"The cover does not leave room for a bar in element "
                                           f"{host.element_id}", elementId=host.element_id)
    count = math.floor(run / spacing + 1e-9) + 1
    if count > MAX_BARS:
        raise app_error("TOO_MANY_BARS", f"{count} bars exceed the cap of {MAX_BARS}")
    z = hi[2] - cover - diameter / 2
    return [Bar(host, (lo[0] + cover + i * spacing, lo[1] + cover, z),
                (lo[0] + cover + i * spacing, hi[1] - cover, z)) for i in range(count)]


def create_bar(ctx: Ctx, bar: Bar, bar_type: str, diameter: float) -> DesignElement:
    ft = 1 / MM_PER_FOOT
    sx, sy, sz = bar.start
    dx, dy, dz = (bar.end[0] - sx, bar.end[1] - sy, bar.end[2] - sz)
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    local = xform.mul(xform.translation(sx * ft, sy * ft, sz * ft),
                      xform.rotation_z(math.degrees(math.atan2(dy, dx))))
    r = diameter / 2 * ft
    vertices, submeshes = mesh.box(0, length * ft, -r, r, -r, r, "Rebar")
    return elements.add_element(
        ctx, category="OST_Rebar", family="Rebar Bar", type_name=bar_type,
        level=bar.host.level, transform=xform.mul(bar.host.transform, local),
        vertices=vertices, submeshes=submeshes, materials=[{"key": "Rebar"}],
        location={"curve": [[0.0, 0.0, 0.0], [length * ft, 0.0, 0.0]]},
        parameters={"Host Id": {"value": bar.host.element_id, "units": None, "readOnly": True},
                    "Bar Diameter": {"value": diameter, "units": "mm", "readOnly": True},
                    "Bar Length": {"value": round(length, 3), "units": "mm",
                                   "readOnly": True}})


def report(bars: list[Bar], found: list[DesignElement], bar_type: str, diameter: float
           ) -> dict[str, Any]:
    per_host = {h.element_id: 0 for h in found}
    for bar in bars:
        per_host[bar.host.element_id] += 1
    return {"ok": True, "candidates": len(bars), "barType": bar_type, "diameterMm": diameter,
            "hosts": [{"elementId": h.element_id, "uniqueId": h.unique_id,
                       "bars": per_host[h.element_id]} for h in found]}


def linear_plan(ctx: Ctx, p: Params) -> tuple[list[Bar], dict[str, Any]]:
    bar_type, diameter = bar_diameter(p)
    count = p.int("count", minimum=1, maximum=200)
    cover_top, cover_side = length_mm(p, "coverTop", 25.0), length_mm(p, "coverSide", 25.0)
    found = hosts(ctx, p)
    bars = [b for h in found for b in plan_linear(h, count, diameter, cover_top, cover_side)]
    return bars, report(bars, found, bar_type, diameter)


def spacing_plan(ctx: Ctx, p: Params) -> tuple[list[Bar], dict[str, Any]]:
    bar_type, diameter = bar_diameter(p)
    spacing = p.num("spacingMm")
    if spacing < diameter:
        raise invalid("spacingMm", f"must be at least the bar diameter ({diameter} mm)")
    cover = length_mm(p, "cover", 25.0)
    found = hosts(ctx, p)
    bars = [b for h in found for b in plan_spacing(h, spacing, diameter, cover)]
    if len(bars) > MAX_BARS:
        raise app_error("TOO_MANY_BARS", f"{len(bars)} bars exceed the cap of {MAX_BARS}")
    return bars, report(bars, found, bar_type, diameter)


def create(ctx: Ctx, p: Params,
           plan: Callable[[Ctx, Params], tuple[list[Bar], dict[str, Any]]]) -> dict[str, Any]:
    """Make the bars ``plan`` places (once confirmed), or only count them on a dry run."""
    dry_run = require_confirm(p)
    bars, summary = plan(ctx, p)
    summary["created"] = len(bars)
    if dry_run:
        return {**summary, "dryRun": True, "elementIds": []}
    made = [create_bar(ctx, bar, summary["barType"], summary["diameterMm"]) for bar in bars]
    return {**summary, "elementIds": [e.element_id for e in made]}


@method("preview_rebar_linear", READ,
        "Plan count top bars along each host beam: how many bars, on which hosts",
        params=LINEAR_PARAMS, result=PREVIEW_RESULT, example=LINEAR_EXAMPLE)
def preview_rebar_linear(ctx: Ctx, p: Params) -> dict[str, Any]:
    return linear_plan(ctx, p)[1]


@method("create_rebar_linear", WRITE,
        "Create count top bars along each host beam (needs confirm, or dryRun)",
        params=(*LINEAR_PARAMS, CONFIRM, DRY_RUN), confirm=True, result=CREATE_RESULT,
        example={**LINEAR_EXAMPLE, "dryRun": True})
def create_rebar_linear(ctx: Ctx, p: Params) -> dict[str, Any]:
    return create(ctx, p, linear_plan)


@method("preview_rebar_by_spacing", READ,
        "Plan bars across each host beam every spacingMm along its length",
        params=SPACING_PARAMS, result=PREVIEW_RESULT, example=SPACING_EXAMPLE)
def preview_rebar_by_spacing(ctx: Ctx, p: Params) -> dict[str, Any]:
    return spacing_plan(ctx, p)[1]


@method("create_rebar_by_spacing", WRITE,
        "Create bars across each host beam every spacingMm (needs confirm, or dryRun)",
        params=(*SPACING_PARAMS, CONFIRM, DRY_RUN), confirm=True, result=CREATE_RESULT,
        example={**SPACING_EXAMPLE, "dryRun": True})
def create_rebar_by_spacing(ctx: Ctx, p: Params) -> dict[str, Any]:
    return create(ctx, p, spacing_plan)

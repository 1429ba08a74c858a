"""The demo model: two levels, walls of two types on both, and beams of two types on 2FL.

Built as the same JSON the loader reads, so the demo exercises the file format too. Ids and
uniqueIds are fixed, so a recipe taught against the demo replays against a fresh demo.
"""

from __future__ import annotations

import uuid
from typing import Any

from app.design_model import mesh
from app.design_model.elements import placement
from app.design_model.xform import MM_PER_FOOT

_NS = uuid.UUID("6f1d2f3e-5b7a-4c1e-9d2b-0a4e8c7b6d51")
FT = 1 / MM_PER_FOOT
LEVELS = (("1FL", 1001, 0.0), ("2FL", 1002, 3500.0))
WALL_TYPES = (("RC150", 2001, 150.0), ("RC200", 2002, 200.0))
BEAM_TYPES = (("RC-Beam-450x600", 2101, 450.0, 600.0), ("RC-Beam-300x500", 2102, 300.0, 500.0))
# (level, type, start mm, end mm, height mm)
WALLS = (
    ("1FL", "RC200", (0, 0), (10000, 0), 3500), ("1FL", "RC200", (10000, 0), (10000, 6000), 3500),
    ("1FL", "RC200", (10000, 6000), (0, 6000), 3500), ("1FL", "RC200", (0, 6000), (0, 0), 3500),
    ("1FL", "RC150", (4000, 0), (4000, 6000), 3500),
    ("1FL", "RC150", (4000, 3000), (10000, 3000), 3500),
    ("2FL", "RC200", (0, 0), (10000, 0), 3000), ("2FL", "RC200", (10000, 0), (10000, 6000), 3000),
    ("2FL", "RC200", (10000, 6000), (0, 6000), 3000), ("2FL", "RC200", (0, 6000), (0, 0), 3000),
    ("2FL", "RC150", (5000, 0), (5000, 6000), 3000),
)
# (type, start mm, end mm) — beam tops sit at the 2FL elevation.
BEAMS = (
    ("RC-Beam-450x600", (0, 0), (10000, 0)), ("RC-Beam-450x600", (0, 3000), (10000, 3000)),
    ("RC-Beam-450x600", (0, 6000), (10000, 6000)), ("RC-Beam-300x500", (4000, 0), (4000, 6000)),
    ("RC-Beam-300x500", (7000, 0), (7000, 6000)),
)


def uid(name: str, element_id: int) -> str:
    return f"{uuid.uuid5(_NS, name)}-{element_id:08x}"


def _geometry(v: list[list[float]], subs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"vertices": v, "submeshes": subs, "materials": [{"key": "Concrete",
                                                               "name": "Concrete, Cast-in-Place",
                                                               "color": "#a0a0a0"}]}


def demo_model() -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for name, eid, elevation in LEVELS:
        items.append({"elementId": eid, "uniqueId": uid(f"level-{name}", eid),
                      "category": "OST_Levels", "name": name, "family": "Level",
                      "type": "Level Head",
                      "parameters": {"Elevation": {"value": elevation, "units": "mm"}}})
    for name, eid, width in WALL_TYPES:
        items.append({"elementId": eid, "uniqueId": uid(f"type-{name}", eid), "kind": "type",
                      "category": "OST_Walls", "family": "Basic Wall", "type": name,
                      "parameters": {"Width": {"value": width, "units": "mm"},
                                     "Material": "Concrete"}})
    for name, eid, b, h in BEAM_TYPES:
        items.append({"elementId": eid, "uniqueId": uid(f"type-{name}", eid), "kind": "type",
                      "category": "OST_StructuralFraming", "family": "RC Beam", "type": name,
                      "parameters": {"b": {"value": b, "units": "mm"},
                                     "h": {"value": h, "units": "mm"}}})
    elevations = {name: elevation for name, _eid, elevation in LEVELS}
    widths = {name: width for name, _eid, width in WALL_TYPES}
    for n, (level, type_name, start, end, height) in enumerate(WALLS, start=1):
        eid = 3000 + n
        transform, length = placement((*start, 0.0), (*end, 0.0), elevations[level])
        t = widths[type_name]
        v, subs = mesh.box(0, length * FT, -t / 2 * FT, t / 2 * FT, 0, height * FT, "Concrete")
        items.append({
            "elementId": eid, "uniqueId": uid(f"wall-{n}", eid), "category": "OST_Walls",
            "family": "Basic Wall", "type": type_name, "level": level, "mark": f"W{n}",
            "parameters": {"Comments": "", "Fire Rating": "",
                           "Unconnected Height": {"value": float(height), "units": "mm"},
                           "Base Offset": {"value": 0.0, "units": "mm"}},
            "location": {"curve": [[0, 0, 0], [length * FT, 0, 0]]},
            "transform": transform, "geometry": _geometry(v, subs),
            "snapshotStamp": "2025-10-05T00:00:00.000000Z"})
    sizes = {name: (b, h) for name, _eid, b, h in BEAM_TYPES}
    for n, (type_name, start, end) in enumerate(BEAMS, start=1):
        eid = 4000 + n
        transform, length = placement((*start, 0.0), (*end, 0.0), elevations["2FL"])
        b, h = sizes[type_name]
        v, subs = mesh.box(0, length * FT, -b / 2 * FT, b / 2 * FT, -h * FT, 0, "Concrete")
        items.append({
            "elementId": eid, "uniqueId": uid(f"beam-{n}", eid),
            "category": "OST_StructuralFraming", "family": "RC Beam", "type": type_name,
            "level": "2FL", "mark": f"B{n}",
            "parameters": {"Comments": "", "Structural Usage": "Girder"},
            "location": {"curve": [[0, 0, 0], [length * FT, 0, 0]]},
            "transform": transform, "geometry": _geometry(v, subs),
            "snapshotStamp": "2025-10-05T00:00:00.000000Z"})
    return {"elements": items}

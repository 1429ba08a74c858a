"""Describe the rooms of an analysed plan as JSON-ready dictionaries (the render tool's rooms)."""

from __future__ import annotations

from typing import Any

from .model import Room
from .validate import Analysis


def num(value: float) -> int | float:
    value = float(value)
    return int(value) if value.is_integer() else round(value, 6)


def room_metadata(analysis: Analysis, room: Room) -> dict[str, Any]:
    """Name, size, walls (all sides; missing = solid), positions, label, sub-rooms and area.

    ``position`` is the written ``at`` (parent-relative for sub-rooms); ``resolvedPosition`` is
    absolute on the floor, also for sub-rooms and relatively placed rooms.
    """
    vocab_sides = ("top", "right", "bottom", "left")
    out: dict[str, Any] = {"name": room.name, "kind": room.kind}
    if room.floor is not None:
        out["floor"] = room.floor.name
    if room.size is not None:
        out["size"] = {"width": num(room.size[0]), "height": num(room.size[1])}
    sides = list(dict.fromkeys([*vocab_sides, *(s.side for s in room.walls)]))
    out["walls"] = {side: room.wall_type(side) for side in sides}
    if room.at is not None:
        out["position"] = {"x": num(room.at[0]), "y": num(room.at[1])}
    placed = analysis.layout.get(room) if analysis.layout else None
    if placed is not None:
        out["resolvedPosition"] = {"x": num(placed.rect.x), "y": num(placed.rect.y)}
    if room.relative is not None:
        rel: dict[str, Any] = {"direction": room.relative.direction,
                               "reference": room.relative.reference}
        if room.relative.gap is not None:
            rel["gap"] = num(room.relative.gap)
        if room.relative.alignment is not None:
            rel["alignment"] = room.relative.alignment
        out["relativePosition"] = rel
    if room.label is not None:
        out["label"] = room.label
    if room.height is not None:
        out["height"] = num(room.height)
    if room.size is not None:
        out["area"] = num(room.size[0] * room.size[1])
    if room.sub_rooms:
        out["subRooms"] = [room_metadata(analysis, sub) for sub in room.sub_rooms]
    return out


def rooms_metadata(analysis: Analysis) -> list[dict[str, Any]]:
    """Top-level rooms of every floor, in source order, sub-rooms nested."""
    if analysis.plan is None:
        return []
    return [room_metadata(analysis, room) for floor in analysis.plan.floors
            for room in floor.rooms]

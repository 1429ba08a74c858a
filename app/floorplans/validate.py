"""Semantic checks on a parsed floorplan: the errors and warnings beyond syntax.

Errors: missing position, unknown reference, circular reference, duplicate room name, missing or
repeated clause, non-positive size or height, a wall side given twice, a connection to an unknown
room, a door position outside 0-100. Warnings: overlapping siblings (at every nesting level), a
sub-room outside its parent, a connection between walls that do not touch.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic
from .geometry import Contact, Rect, bounding, exterior_side, find_contact, overlapping_pairs
from .language import Language, default_language
from .model import Connection, Floor, Floorplan, Room, Span
from .parser import parse
from .resolve import Layout, resolve

LIMIT = 1_000_000  # plan coordinates beyond this are almost certainly typos
_CLAUSE_WORDS = {"at_clause": "at", "size_clause": "size", "walls_clause": "walls",
                 "relative_clause": "relative placement", "label_clause": "label",
                 "height_clause": "height", "composed_clause": "composed of"}


@dataclass
class ConnectionGeometry:
    connection: Connection
    floor: Floor
    room_a: Room
    room_b: Room | None  # None for the outside
    contact: Contact


@dataclass
class Analysis:
    """Everything known about a text: the plan (if it parsed), positions and diagnostics."""

    text: str
    plan: Floorplan | None
    layout: Layout | None
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    doors: list[ConnectionGeometry] = field(default_factory=list)
    names: dict[str, Room] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return not self.errors


def analyze(text: str, language: Language | None = None) -> Analysis:
    """Parse, resolve and validate ``text``."""
    language = language or default_language()
    # Parsing allocates many short-lived objects, none of them in a reference cycle, so the
    # cyclic garbage collector is paused meanwhile: its passes would find nothing to free. It is
    # switched back on right after.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        result = parse(text, language)
    finally:
        if paused:
            gc.enable()
    if result.plan is None:
        return Analysis(text, None, None, list(result.errors))
    plan = result.plan
    analysis = Analysis(text, plan, None)
    _check_rooms(plan, analysis)
    analysis.layout = resolve(plan, analysis.names)
    analysis.errors.extend(analysis.layout.errors)
    _check_geometry(plan, analysis)
    _check_connections(plan, analysis)
    analysis.errors.sort(key=lambda d: (d.line, d.column))
    analysis.warnings.sort(key=lambda d: (d.line, d.column))
    return analysis


def _err(analysis: Analysis, kind: str, message: str, span: Span, room: str | None = None,
         **extra: Any) -> None:
    analysis.errors.append(Diagnostic(kind, message, span.line, span.column, room, extra))


def _warn(analysis: Analysis, kind: str, message: str, span: Span, room: str | None = None,
          **extra: Any) -> None:
    analysis.warnings.append(Diagnostic(kind, message, span.line, span.column, room, extra))


def _check_rooms(plan: Floorplan, analysis: Analysis) -> None:
    for room in plan.all_rooms():
        first = analysis.names.setdefault(room.name, room)
        if first is not room:
            _err(analysis, "duplicate_name",
                 f"Room name '{room.name}' is already used by the room on line "
                 f"{first.name_span.line}", room.name_span, room.name)
        seen: dict[str, int] = {}
        for clause in room.clauses:
            if clause.keyword in seen:
                _err(analysis, "duplicate_clause",
                     f"Room '{room.name}' has more than one '{_CLAUSE_WORDS[clause.keyword]}' "
                     f"clause", clause.span, room.name)
            seen[clause.keyword] = 1
        numbers = [*(room.at or ()), *(room.size or ()), room.height,
                   room.relative.gap if room.relative else None]
        if any(v is not None and not abs(v) <= LIMIT for v in numbers):
            _err(analysis, "number_out_of_range",
                 f"Room '{room.name}' uses a number beyond +/-{LIMIT:,}", room.span, room.name)
            room.size = None  # keep it out of geometry; reported above, not as missing_size
            continue
        if room.size is None:
            _err(analysis, "missing_size",
                 f"Room '{room.name}' has no size (add 'size (width x height)')",
                 room.span, room.name)
        elif room.size[0] <= 0 or room.size[1] <= 0:
            _err(analysis, "invalid_size",
                 f"Room '{room.name}' must have a positive size, got "
                 f"{_n(room.size[0])} x {_n(room.size[1])}", room.size_span or room.span,
                 room.name)
        if room.height is not None and room.height <= 0:
            clause = next(c for c in room.clauses if c.keyword == "height_clause")
            _err(analysis, "invalid_height",
                 f"Room '{room.name}' must have a positive height, got {_n(room.height)}",
                 clause.span, room.name)
        sides: set[str] = set()
        for spec in room.walls:
            if spec.side in sides:
                _err(analysis, "duplicate_wall",
                     f"Room '{room.name}' gives its {spec.side} wall more than once",
                     spec.span, room.name, side=spec.side)
            sides.add(spec.side)


def _check_geometry(plan: Floorplan, analysis: Analysis) -> None:
    layout = analysis.layout
    assert layout is not None
    for floor in plan.floors:
        _check_siblings(floor.rooms, layout, analysis)


def _check_siblings(rooms: list[Room], layout: Layout, analysis: Analysis) -> None:
    # A module function, not a recursive inner one: such a closure refers to itself, and that
    # cycle would keep the whole analysis alive until the cyclic collector next runs (memory
    # then grows render after render of a large plan).
    items = [(p.rect, r) for r in rooms if (p := layout.get(r)) is not None]
    for a, b in overlapping_pairs(items):
        first, second = sorted((a, b), key=lambda r: r.span.start)
        _warn(analysis, "overlap", f'Rooms "{first.name}" and "{second.name}" overlap',
              second.name_span, second.name, rooms=[first.name, second.name])
    for room in rooms:
        parent = room.parent
        parent_placed = layout.get(parent) if parent else None
        placed = layout.get(room)
        if parent and parent_placed and placed \
                and not parent_placed.rect.contains(placed.rect):
            _warn(analysis, "outside_parent",
                  f"Sub-room '{room.name}' extends outside its parent "
                  f"'{parent.name}'", room.name_span, room.name,
                  parent=parent.name)
        if room.sub_rooms:
            _check_siblings(room.sub_rooms, layout, analysis)


def _check_connections(plan: Floorplan, analysis: Analysis) -> None:
    layout = analysis.layout
    assert layout is not None
    floor_bounds: dict[int, Rect | None] = {}
    for conn in plan.connections:
        rooms: list[Room | None] = []
        for ref in (conn.source.room, conn.target.room):
            if ref.is_outside:
                rooms.append(None)
                continue
            room = analysis.names.get(ref.name)
            if room is None:
                _err(analysis, "unknown_room",
                     f"Connection refers to unknown room '{ref.name}'", ref.span, ref.name)
            rooms.append(room)
        if conn.opens_into is not None and not conn.opens_into.is_outside \
                and conn.opens_into.name not in (conn.source.room.name, conn.target.room.name):
            _err(analysis, "invalid_opens_into",
                 f"A door between '{conn.source.room.name}' and '{conn.target.room.name}' "
                 f"cannot open into '{conn.opens_into.name}'", conn.opens_into.span,
                 conn.opens_into.name)
        if conn.position is not None and not 0 <= conn.position <= 100:
            _err(analysis, "invalid_door_position",
                 f"Door position must be between 0 and 100%, got {_n(conn.position)}%",
                 conn.position_span or conn.span)
        a, b = rooms
        refs = (conn.source, conn.target)
        if a is None and b is None:
            if conn.source.room.is_outside and conn.target.room.is_outside:
                _err(analysis, "unknown_room", "A connection cannot join outside to outside",
                     conn.span)
            continue
        if (a is None and not refs[0].room.is_outside) or \
                (b is None and not refs[1].room.is_outside):
            continue
        geo = _connection_geometry(conn, a, b, layout, floor_bounds)
        if geo is None:
            names = " and ".join(f"'{r.room.name}{'.' + r.wall if r.wall else ''}'" for r in refs)
            _warn(analysis, "connection_not_adjacent",
                  f"Connection between {names}: the walls do not touch, so no door is drawn",
                  conn.span)
        else:
            analysis.doors.append(geo)


def _connection_geometry(conn: Connection, a: Room | None, b: Room | None, layout: Layout,
                         floor_bounds: dict[int, Rect | None]) -> ConnectionGeometry | None:
    if a is None or b is None:  # one side is the outside
        room, ref = (b, conn.target) if a is None else (a, conn.source)
        if room is None:  # both sides outside: no wall to put the door in
            return None
        placed = layout.get(room)
        if placed is None or room.floor is None:
            return None
        key = id(room.floor)
        if key not in floor_bounds:
            floor_bounds[key] = bounding([p.rect for r in room.floor.rooms
                                          if (p := layout.get(r)) is not None])
        bounds = floor_bounds[key]  # never None: it holds this placed room
        side = ref.wall or (exterior_side(placed.rect, bounds) if bounds else None)
        if side is None:
            return None
        seg = placed.rect.side(side)
        return ConnectionGeometry(conn, room.floor, room, None,
                                  Contact(side, side, seg.at, seg.lo, seg.hi))
    pa, pb = layout.get(a), layout.get(b)
    if pa is None or pb is None or a.floor is None or a.floor is not b.floor:
        return None
    found = find_contact(pa.rect, conn.source.wall, pb.rect, conn.target.wall)
    return None if found is None else ConnectionGeometry(conn, a.floor, a, b, found)


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"

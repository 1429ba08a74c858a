"""The parsed floorplan: plain dataclasses that keep the source span of every editable piece.

Spans are character offsets into the parsed text (``start`` inclusive, ``end`` exclusive) plus the
1-based line/column of the start, so validation can point at the source and edits can replace
exactly the characters they change.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast


class Span(NamedTuple):
    """A source stretch (a named tuple: models are built by the thousand on every parse)."""

    start: int
    end: int
    line: int
    column: int


@dataclass
class WallSpec:
    side: str
    type: str
    span: Span
    type_span: Span


@dataclass
class Relative:
    direction: str
    reference: str
    gap: float | None
    alignment: str | None
    span: Span
    reference_span: Span


class _Weak:
    """A dataclass field holding a weak reference: reads give the object (or None)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"_{name}_ref"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        ref = obj.__dict__.get(self.key)
        return ref() if ref is not None else None

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.key] = (weakref.ref(value)
                                  if value is not None and not isinstance(value, _Weak)
                                  else None)


@dataclass
class Clause:
    """Any room clause, by keyword, for duplicate detection and for insert positions."""

    keyword: str
    span: Span


@dataclass
class Room:
    kind: str
    name: str
    name_span: Span
    span: Span
    clauses: list[Clause] = field(default_factory=list)
    at: tuple[float, float] | None = None
    at_span: Span | None = None
    at_number_spans: tuple[Span, Span] | None = None
    size: tuple[float, float] | None = None
    size_span: Span | None = None
    size_number_spans: tuple[Span, Span] | None = None
    height: float | None = None
    walls: list[WallSpec] = field(default_factory=list)
    walls_span: Span | None = None
    relative: Relative | None = None
    label: str | None = None
    label_span: Span | None = None
    label_string_span: Span | None = None
    composed_span: Span | None = None
    sub_rooms: list[Room] = field(default_factory=list)
    # Back-references are weak: a room, its parent and its floor would otherwise form
    # reference cycles, and a plan would stay in memory after use until the cyclic collector
    # ran (resident memory then grows render after render of a large plan).
    parent: Room | None = field(default=cast("Room | None", _Weak()), repr=False)
    floor: Floor | None = field(default=cast("Floor | None", _Weak()), repr=False)

    def wall_type(self, side: str, default: str = "solid") -> str:
        """The declared type of a side; the first declaration wins, a missing side is solid."""
        for spec in self.walls:
            if spec.side == side:
                return spec.type
        return default

    def descendants(self) -> list[Room]:
        """Its sub-rooms, each followed by its own descendants."""
        return [room for sub in self.sub_rooms for room in (sub, *sub.descendants())]


@dataclass
class Floor:
    name: str
    name_span: Span
    span: Span
    rooms: list[Room] = field(default_factory=list)

    def all_rooms(self) -> list[Room]:
        return [room for top in self.rooms for room in (top, *top.descendants())]


@dataclass
class RoomRef:
    name: str  # "outside" for the outside keyword
    span: Span
    is_outside: bool


@dataclass
class WallRef:
    room: RoomRef
    wall: str | None
    span: Span


@dataclass
class Connection:
    span: Span
    source: WallRef
    target: WallRef
    door_type: str
    position: float | None
    position_span: Span | None
    opens_into: RoomRef | None
    swing: str | None


@dataclass
class Floorplan:
    text: str
    keyword_span: Span
    floors: list[Floor] = field(default_factory=list)
    connections: list[Connection] = field(default_factory=list)

    def all_rooms(self) -> list[Room]:
        return [room for floor in self.floors for room in floor.all_rooms()]

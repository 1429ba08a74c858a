"""Rectangles, wall segments and the adjacency tests used by validation and rendering.

Coordinates are plan units, origin top-left, y down. A side of a room is the segment of its
rectangle's edge: ``top`` runs along x at y, ``right`` runs along y at x + w, and so on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
EPS = 0.01
OPPOSITE = {"top": "bottom", "bottom": "top", "left": "right", "right": "left"}
# Pairs tried when a connection names no wall: side-by-side first, then stacked.
FACING_PAIRS = (("right", "left"), ("left", "right"), ("bottom", "top"), ("top", "bottom"))


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    @property
    def x2(self) -> float:
        return self.x + self.w

    @property
    def y2(self) -> float:
        return self.y + self.h

    def overlaps(self, other: Rect) -> bool:
        """Strict overlap: rooms that only share an edge do not overlap."""
        return (min(self.x2, other.x2) - max(self.x, other.x) > EPS
                and min(self.y2, other.y2) - max(self.y, other.y) > EPS)

    def contains(self, other: Rect) -> bool:
        return (other.x >= self.x - EPS and other.y >= self.y - EPS
                and other.x2 <= self.x2 + EPS and other.y2 <= self.y2 + EPS)

    def side(self, side: str) -> Segment:
        if side == "top":
            return Segment(side, self.y, self.x, self.x2)
        if side == "bottom":
            return Segment(side, self.y2, self.x, self.x2)
        if side == "left":
            return Segment(side, self.x, self.y, self.y2)
        return Segment(side, self.x2, self.y, self.y2)


@dataclass(frozen=True)
class Segment:
    """A wall line: ``at`` is the fixed coordinate, ``lo..hi`` the extent along the wall."""

    side: str
    at: float
    lo: float
    hi: float

    @property
    def horizontal(self) -> bool:
        return self.side in ("top", "bottom")

    @property
    def length(self) -> float:
        return self.hi - self.lo


@dataclass(frozen=True)
class Contact:
    """Where two facing walls touch: the shared stretch ``lo..hi`` on the line ``at``."""

    side_a: str
    side_b: str
    at: float
    lo: float
    hi: float


def contact(a: Rect, side_a: str, b: Rect, side_b: str) -> Contact | None:
    if OPPOSITE.get(side_a) != side_b:
        return None
    sa, sb = a.side(side_a), b.side(side_b)
    if abs(sa.at - sb.at) > EPS:
        return None
    lo, hi = max(sa.lo, sb.lo), min(sa.hi, sb.hi)
    if hi - lo <= EPS:
        return None
    return Contact(side_a, side_b, sa.at, lo, hi)


def find_contact(a: Rect, wall_a: str | None, b: Rect, wall_b: str | None) -> Contact | None:
    """The touching walls of ``a`` and ``b``, honouring the walls that were named."""
    if wall_a and wall_b:
        return contact(a, wall_a, b, wall_b)
    if wall_a:
        return contact(a, wall_a, b, OPPOSITE[wall_a])
    if wall_b:
        return contact(a, OPPOSITE[wall_b], b, wall_b)
    for pa, pb in FACING_PAIRS:
        found = contact(a, pa, b, pb)
        if found:
            return found
    return None


def exterior_side(room: Rect, bounds: Rect) -> str | None:
    """A side of ``room`` lying on the outline of ``bounds`` (for doors to the outside)."""
    for side in ("bottom", "top", "left", "right"):
        seg, edge = room.side(side), bounds.side(side)
        if abs(seg.at - edge.at) <= EPS:
            return side
    return None


def bounding(rects: list[Rect]) -> Rect | None:
    if not rects:
        return None
    x = min(r.x for r in rects)
    y = min(r.y for r in rects)
    return Rect(x, y, max(r.x2 for r in rects) - x, max(r.y2 for r in rects) - y)


def overlapping_pairs(items: Sequence[tuple[Rect, T]]) -> list[tuple[T, T]]:
    """All overlapping pairs, by a sweep along x (rooms of a plan are mostly disjoint)."""
    order = sorted(items, key=lambda it: it[0].x)
    out: list[tuple[T, T]] = []
    active: list[tuple[Rect, T]] = []
    for rect, obj in order:
        active = [a for a in active if a[0].x2 - rect.x > EPS]
        for other_rect, other in active:
            if rect.overlaps(other_rect):
                out.append((other, obj))
        active.append((rect, obj))
    return out

"""Compute every room's position, following explicit ``at`` and relative placement.

Positions follow the reference implementation's formulas (gap defaults to 0; alignment defaults
to ``top`` for left/right and ``left`` for above/below; diagonals ignore alignment). Work is done
in absolute plan coordinates so a sub-room may be placed relative to any room on its floor; its
``at`` is relative to its parent's top-left corner. An explicit ``at`` wins over a relative clause.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import Diagnostic
from .geometry import Rect
from .model import Floorplan, Room


@dataclass
class Placed:
    room: Room
    rect: Rect  # absolute
    local: tuple[float, float]  # relative to the parent (absolute for top-level rooms)


@dataclass
class Layout:
    placed: dict[int, Placed] = field(default_factory=dict)  # id(room) -> placement
    errors: list[Diagnostic] = field(default_factory=list)

    def get(self, room: Room) -> Placed | None:
        return self.placed.get(id(room))


def place(direction: str, ref: Rect, w: float, h: float, gap: float, align: str | None
          ) -> tuple[float, float]:
    """Top-left corner of a ``w`` x ``h`` room placed ``direction`` of ``ref``."""
    def align_y() -> float:
        if align == "bottom":
            return ref.y + ref.h - h
        if align == "center":
            return ref.y + (ref.h - h) / 2
        return ref.y

    def align_x() -> float:
        if align == "right":
            return ref.x + ref.w - w
        if align == "center":
            return ref.x + (ref.w - w) / 2
        return ref.x

    table = {
        "right-of": lambda: (ref.x2 + gap, align_y()),
        "left-of": lambda: (ref.x - w - gap, align_y()),
        "below": lambda: (align_x(), ref.y2 + gap),
        "above": lambda: (align_x(), ref.y - h - gap),
        "below-right-of": lambda: (ref.x2 + gap, ref.y2 + gap),
        "below-left-of": lambda: (ref.x - w - gap, ref.y2 + gap),
        "above-right-of": lambda: (ref.x2 + gap, ref.y - h - gap),
        "above-left-of": lambda: (ref.x - w - gap, ref.y - h - gap),
    }
    # A direction added to the grammar but unknown here places the room like right-of.
    return table.get(direction, table["right-of"])()


def resolve(plan: Floorplan, names: dict[str, Room]) -> Layout:
    """Place every room; ``names`` maps each name to its first declaration."""
    layout = _Resolver(plan, names)
    layout.run()
    return layout.layout


_WHITE, _GREY, _DONE = 0, 1, 2


class _Resolver:
    def __init__(self, plan: Floorplan, names: dict[str, Room]) -> None:
        self.plan = plan
        self.names = names
        self.layout = Layout()
        self.state: dict[int, int] = {}
        self.failed: set[int] = set()

    def deps(self, room: Room) -> list[Room]:
        out: list[Room] = []
        if room.parent is not None:
            out.append(room.parent)
        if room.at is None and room.relative is not None:
            ref = self.names.get(room.relative.reference)
            if ref is not None and ref.floor is room.floor:
                out.append(ref)
        return out

    def run(self) -> None:
        for room in self.plan.all_rooms():
            if self.state.get(id(room), _WHITE) == _WHITE:
                self.visit(room)

    def visit(self, start: Room) -> None:
        self.state[id(start)] = _GREY
        stack: list[tuple[Room, list[Room]]] = [(start, self.deps(start))]
        while stack:
            node, pending = stack[-1]
            if not pending:
                stack.pop()
                self.compute(node)
                self.state[id(node)] = _DONE
                continue
            nxt = pending.pop(0)
            st = self.state.get(id(nxt), _WHITE)
            if st == _DONE:
                continue
            if st == _GREY:
                idx = next(i for i, (n, _) in enumerate(stack) if n is nxt)
                self.report_cycle([n for n, _ in stack[idx:]])
                continue
            self.state[id(nxt)] = _GREY
            stack.append((nxt, self.deps(nxt)))

    def report_cycle(self, cycle: list[Room]) -> None:
        chain = " -> ".join([r.name for r in cycle] + [cycle[0].name])
        message = f"Circular reference: {chain} (each room is placed from the next)"
        for room in cycle:
            if id(room) in self.failed:
                continue
            self.failed.add(id(room))
            span = room.relative.span if room.relative else room.name_span
            self.layout.errors.append(Diagnostic(
                "circular_dependency", message, span.line, span.column, room.name,
                {"cycle": [r.name for r in cycle]}))

    def fail(self, room: Room, kind: str, message: str, line: int, column: int) -> None:
        self.failed.add(id(room))
        self.layout.errors.append(Diagnostic(kind, message, line, column, room.name))

    def compute(self, room: Room) -> None:
        if id(room) in self.failed:
            return
        if room.size is None:
            self.failed.add(id(room))  # reported as missing_size by the validator
            return
        w, h = room.size
        origin = (0.0, 0.0)
        if room.parent is not None:
            parent = self.layout.get(room.parent)
            if parent is None:
                self.fail(room, "unresolved_dependency",
                          f"Room '{room.name}' cannot be placed because its parent "
                          f"'{room.parent.name}' has no position", room.span.line,
                          room.span.column)
                return
            origin = (parent.rect.x, parent.rect.y)
        if room.at is not None:
            lx, ly = room.at
            self.put(room, origin[0] + lx, origin[1] + ly, w, h, origin)
            return
        rel = room.relative
        if rel is None:
            self.fail(room, "no_position",
                      f"Room '{room.name}' has no position specified (use 'at (x,y)' or "
                      f"relative positioning like 'right-of RoomA')",
                      room.span.line, room.span.column)
            return
        ref = self.names.get(rel.reference)
        sp = rel.reference_span
        if ref is None:
            self.fail(room, "missing_reference",
                      f"Room '{room.name}' references unknown room '{rel.reference}'",
                      sp.line, sp.column)
            return
        if ref.floor is not room.floor:
            self.fail(room, "missing_reference",
                      f"Room '{room.name}' references room '{rel.reference}', which is on "
                      f"another floor", sp.line, sp.column)
            return
        ref_placed = self.layout.get(ref)
        if ref_placed is None:
            self.fail(room, "unresolved_dependency",
                      f"Room '{room.name}' cannot be placed because '{rel.reference}' has no "
                      f"position", sp.line, sp.column)
            return
        x, y = place(rel.direction, ref_placed.rect, w, h, rel.gap or 0.0, rel.alignment)
        self.put(room, x, y, w, h, origin)

    def put(self, room: Room, x: float, y: float, w: float, h: float,
            origin: tuple[float, float]) -> None:
        self.layout.placed[id(room)] = Placed(room, Rect(x, y, w, h),
                                              (x - origin[0], y - origin[1]))

"""The ``convert_to_relative`` operation: explicit positions become relative placements.

Starting from an anchor room with an explicit position, it repeatedly picks the room (among the
anchor's siblings) whose position a relative clause against an already fixed neighbour
reproduces exactly, preferring small gaps, short distances, straight over diagonal directions
and default alignments. Rooms that no neighbour explains keep their explicit position.
"""

from __future__ import annotations

from typing import Any

from .edit_context import Context, OperationError, edited, relative_text
from .geometry import EPS
from .model import Room
from .resolve import place
from .text_edit import Edit


def convert_to_relative(ctx: Context, _target: str | None, p: dict[str, Any]
                        ) -> tuple[str, str]:
    anchor = ctx.room(p["anchorRoom"]) if p["anchorRoom"] in ctx.analysis.names else None
    if anchor is None:
        raise OperationError(f"Cannot convert to relative: Anchor room '{p['anchorRoom']}' "
                             f"not found")
    layout = ctx.analysis.layout
    if layout is None or layout.get(anchor) is None:
        raise OperationError(f"Cannot convert to relative: Anchor room '{anchor.name}' has no "
                             f"position")
    if anchor.at is None:
        raise OperationError(f"Cannot convert to relative: Anchor room '{anchor.name}' has no "
                             f"absolute position (give it 'at (x,y)' first)")
    tolerance = float(p.get("alignmentTolerance", 0.01))
    assert anchor.floor is not None  # the parser puts every room on its floor
    group = anchor.parent.sub_rooms if anchor.parent else anchor.floor.rooms
    wanted = set(p.get("targetRooms") or [r.name for r in group])
    unknown = wanted - {r.name for r in group}
    if unknown:
        raise OperationError(f"Rooms not beside the anchor '{anchor.name}': "
                             f"{', '.join(sorted(unknown))}")
    todo = [r for r in group if r is not anchor and r.name in wanted and r.at is not None
            and r.relative is None and layout.get(r) is not None]
    # A room can serve as a reference once its own position no longer depends on a room that
    # is about to be converted (otherwise a new clause could close a cycle).
    pending = [r for r in group if layout.get(r) is not None and r not in todo]
    fixed: list[Room] = []
    edits: list[Edit] = []
    converted: list[str] = []
    best: dict[int, tuple[float, Room, dict[str, Any]]] = {}  # todo room -> best relation
    seen_refs: set[int] = set()
    while todo:
        _settle(pending, fixed)
        for ref in fixed:  # score only references that became available since last round
            if id(ref) in seen_refs:
                continue
            seen_refs.add(id(ref))
            for room in todo:
                found = _best_relation(ctx, room, ref, tolerance)
                if found and (id(room) not in best or found[0] < best[id(room)][0]):
                    best[id(room)] = (found[0], ref, found[1])
        choices = [(best[id(r)][0], i, r) for i, r in enumerate(todo) if id(r) in best]
        if not choices:
            break
        _, _, room = min(choices)
        _, ref, rel = best.pop(id(room))
        assert room.at_span is not None  # todo holds rooms with an 'at' clause only
        edits.append(Edit(room.at_span.start, room.at_span.end, relative_text(rel)))
        converted.append(room.name)
        todo.remove(room)
        fixed.append(room)
    if not converted and todo:
        raise OperationError("Could not determine relative positions for rooms: "
                             f"{', '.join(r.name for r in todo)}. No room touches or lines up "
                             f"with an already placed room.")
    msg = f"Converted {len(converted)} room(s) to relative positioning"
    if todo:
        msg += f"; kept explicit positions for {', '.join(r.name for r in todo)}"
    return edited(ctx, edits), msg


def _settle(pending: list[Room], fixed: list[Room]) -> None:
    """Move rooms whose placement depends only on fixed rooms from ``pending`` to ``fixed``."""
    progress = True
    while progress:
        progress = False
        names = {r.name for r in fixed}
        for room in list(pending):
            if room.at is not None or room.relative is None or room.relative.reference in names:
                pending.remove(room)
                fixed.append(room)
                progress = True


def _best_relation(ctx: Context, room: Room, ref: Room, tol: float
                   ) -> tuple[float, dict[str, Any]] | None:
    """The simplest relative clause that reproduces ``room``'s position, with a score."""
    layout = ctx.analysis.layout
    placed_room, placed_ref = (layout.get(room), layout.get(ref)) if layout else (None, None)
    assert placed_room is not None and placed_ref is not None  # the caller passes placed rooms
    r, f = placed_room.rect, placed_ref.rect
    # Only neighbours make readable placements (and checking only them keeps this linear-ish).
    near = max(r.w, r.h, f.w, f.h)
    if max(f.x - r.x2, r.x - f.x2, f.y - r.y2, r.y - f.y2) > near:
        return None
    best = None
    for direction in ctx.vocab.directions:
        diagonal = direction.count("-") > 1
        sideways = direction in ("right-of", "left-of")
        default = "top" if sideways else "left"
        # Alignments for the other axis are ignored by the resolver, so never suggest them.
        axis = ("top", "bottom", "center") if sideways else ("left", "right", "center")
        aligns: list[str | None] = [None]
        if not diagonal:
            aligns += [a for a in ctx.vocab.alignments if a in axis and a != default]
        for align in aligns:
            probe_x, probe_y = place(direction, f, r.w, r.h, 0.0, align)
            # the gap is measured along the placement axis
            if direction in ("right-of", "below-right-of", "above-right-of"):
                gap = r.x - probe_x
            elif direction in ("left-of", "below-left-of", "above-left-of"):
                gap = probe_x - r.x
            elif direction == "below":
                gap = r.y - probe_y
            else:
                gap = probe_y - r.y
            if gap < -EPS or gap > near:
                continue
            x, y = place(direction, f, r.w, r.h, max(gap, 0.0), align)
            if abs(x - r.x) > tol or abs(y - r.y) > tol:
                continue
            rel: dict[str, Any] = {"direction": direction, "reference": ref.name}
            if gap > EPS:
                rel["gap"] = round(gap, 6)
            if align is not None:
                rel["alignment"] = align
            dist = abs((r.x + r.w / 2) - (f.x + f.w / 2)) + abs((r.y + r.h / 2) - (f.y + f.h / 2))
            score = gap * 10 + dist + (5 if diagonal else 0) + (1 if "alignment" in rel else 0)
            if best is None or score < best[0]:
                best = (score, rel)
    return best

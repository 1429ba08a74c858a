"""Draw an analysed floorplan as SVG.

Walls have real thickness and are centred on the room edges, so two rooms sharing an edge share
one wall. Doors (wall type ``door`` and ``connect`` statements) cut a gap in the wall and draw a
leaf plus a swing arc whose radius is the door width; windows are drawn in a gap as a glazed
panel; ``open`` sides draw nothing. Every room shows its name, label, dimensions and area; each
floor shows its total area. The output is a pure function of the input (same input, same bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

from . import glyphs
from .geometry import Rect, bounding
from .model import Floor, Room
from .validate import Analysis, ConnectionGeometry

WALL = 0.25  # wall thickness in plan units
DOOR = 2.0  # single door width
DOUBLE_DOOR = 3.2  # double door width (two leaves)
WINDOW_SHARE = 0.6  # share of a wall taken by a window
PADDING = 2.0
FLOOR_GAP = 5.0
LABEL_BAND = 2.0
TOTAL_BAND = 2.0
FONT = "DejaVu Sans, sans-serif"
INTO = {"top": 1, "bottom": -1, "left": 1, "right": -1}  # normal pointing into the room


@dataclass
class RenderOptions:
    width: int = 800
    height: int = 600
    floor_index: int = 0
    all_floors: bool = False
    layout: str = "sideBySide"  # or "stacked"
    # Room text smaller than this many pixels at the fitted size is left out. Raster output sets
    # it: such text is an unreadable smudge and costs most of the rasterising time.
    min_text_px: float = 0.0
    # Labels as glyph outlines (app.floorplans.glyphs) rather than <text>: for raster output,
    # where resvg's own text layout cost most of the time; the browser's SVG keeps <text>.
    glyph_text: bool = False


def fmt(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fit(view_w: float, view_h: float, width: int, height: int) -> tuple[int, int]:
    """The largest size within ``width`` x ``height`` with the view's aspect ratio."""
    scale = min(width / view_w, height / view_h)
    return max(1, round(view_w * scale)), max(1, round(view_h * scale))


def _describe(floors: list[Floor]) -> str:
    """The drawing's text alternative: its floors and rooms by name (the room table on the
    page gives sizes and positions)."""
    parts = []
    for floor in floors:
        names = [room.name for room in floor.all_rooms()]
        shown = ", ".join(names[:30]) + (f" and {len(names) - 30} more" if len(names) > 30 else "")
        parts.append(f"floor {floor.name}: {len(names)} room{'' if len(names) == 1 else 's'}"
                     + (f" ({shown})" if names else ""))
    return "Floorplan drawing, " + "; ".join(parts) if parts else "Floorplan drawing"


def render_svg(analysis: Analysis, options: RenderOptions) -> str:
    plan, layout = analysis.plan, analysis.layout
    assert plan is not None and layout is not None
    floors = plan.floors if options.all_floors else plan.floors[options.floor_index:
                                                                options.floor_index + 1]
    multi = len(floors) > 1
    frames: list[tuple[Floor, Rect, float, float]] = []  # floor, bounds, offset x, offset y
    cursor = 0.0
    order = list(reversed(floors)) if options.layout == "stacked" else floors
    for floor in order:
        rects = [p.rect for r in floor.all_rooms() if (p := layout.get(r)) is not None]
        bounds = bounding(rects) or Rect(0, 0, 10, 10)
        top_band = LABEL_BAND if multi else 0.0
        if options.layout == "stacked":
            frames.append((floor, bounds, -bounds.x, cursor + top_band - bounds.y))
            cursor += top_band + bounds.h + TOTAL_BAND + FLOOR_GAP
        else:
            frames.append((floor, bounds, cursor - bounds.x, top_band - bounds.y))
            cursor += bounds.w + FLOOR_GAP
    if frames:
        min_x = min(ox + b.x for _, b, ox, _ in frames)
        min_y = min(oy + b.y - (LABEL_BAND if multi else 0) for _, b, _, oy in frames)
        max_x = max(ox + b.x2 for _, b, ox, _ in frames)
        max_y = max(oy + b.y2 + TOTAL_BAND for _, b, _, oy in frames)
    else:
        min_x, min_y, max_x, max_y = 0.0, 0.0, 10.0, 10.0
    vx, vy = min_x - PADDING, min_y - PADDING
    vw, vh = max_x - min_x + 2 * PADDING, max_y - min_y + 2 * PADDING
    out_w, out_h = fit(vw, vh, options.width, options.height)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{fmt(vx)} {fmt(vy)} {fmt(vw)} '
        f'{fmt(vh)}" width="{out_w}" height="{out_h}" role="img" '
        f'aria-roledescription="floorplan" aria-label={quoteattr(_describe(floors))} '
        f'font-family="{FONT}">',
        f'<rect class="background" x="{fmt(vx)}" y="{fmt(vy)}" width="{fmt(vw)}" '
        f'height="{fmt(vh)}" fill="#ffffff"/>',
    ]
    doors_by_floor: dict[int, list[ConnectionGeometry]] = {}
    for geo in analysis.doors:
        doors_by_floor.setdefault(id(geo.floor), []).append(geo)
    for floor, bounds, ox, oy in frames:
        drawer = _FloorDrawer(analysis, floor, bounds, multi, doors_by_floor.get(id(floor), []))
        drawer.min_text = options.min_text_px / (out_w / vw)  # in plan units
        drawer.glyph_text = options.glyph_text
        parts.append(drawer.draw(ox, oy))
    parts.append("</svg>")
    return "\n".join(parts)


class _FloorDrawer:
    def __init__(self, analysis: Analysis, floor: Floor, bounds: Rect, multi: bool,
                 doors: list[ConnectionGeometry]) -> None:
        assert analysis.layout is not None  # only a valid, hence resolved, plan is drawn
        self.layout = analysis.layout
        self.floor = floor
        self.bounds = bounds
        self.multi = multi
        self.doors = doors
        self.rooms = [r for r in floor.all_rooms() if self.layout.get(r) is not None]
        # (room id, side) -> list of (lo, hi) stretches cut out of that wall
        self.cuts: dict[tuple[int, str], list[tuple[float, float]]] = {}
        self.min_text = 0.0
        self.glyph_text = False

    def text(self, text: str, x: float, y: float, size: float, **how: Any) -> str:
        """One label: glyph outlines for raster output where the face has every character,
        else ``<text>`` (see app.floorplans.glyphs)."""
        if self.glyph_text:
            drawn = glyphs.label(text, x, y, size, fmt=fmt, **how)
            if drawn is not None:
                return drawn
        return glyphs.text_element(text, x, y, size, fmt=fmt, **how)

    def rect(self, room: Room) -> Rect:
        placed = self.layout.get(room)
        assert placed is not None  # only placed rooms are drawn
        return placed.rect

    def cut(self, room: Room, side: str, lo: float, hi: float) -> None:
        self.cuts.setdefault((id(room), side), []).append((lo, hi))

    def draw(self, ox: float, oy: float) -> str:
        b = self.bounds
        out = [f'<g class="floor" data-floor={quoteattr(self.floor.name)} '
               f'aria-label={quoteattr("Floor: " + self.floor.name)} '
               f'transform="translate({fmt(ox)},{fmt(oy)})">',
               f'<rect class="floor-background" x="{fmt(b.x)}" y="{fmt(b.y)}" '
               f'width="{fmt(b.w)}" height="{fmt(b.h)}" fill="#f4f1e8" stroke="none"/>']
        if self.multi:
            out.append(self.text(self.floor.name, b.x, b.y - 0.6, 1.2, style="bold",
                                 attrs=' class="floor-label"'))
        out.append('<g class="rooms">')
        for room in self.rooms:
            r = self.rect(room)
            fill = "#ffffff" if room.parent is None else "#eef3f8"
            out.append(f'<rect class="room" data-room={quoteattr(room.name)} x="{fmt(r.x)}" '
                       f'y="{fmt(r.y)}" width="{fmt(r.w)}" height="{fmt(r.h)}" fill="{fill}"/>')
        out.append("</g>")
        openings = self.plan_openings()
        out.append('<g class="walls">')
        for room in self.rooms:
            out.extend(self.walls(room))
        out.append("</g>")
        out.append('<g class="openings">')
        out.extend(openings)
        out.append("</g>")
        out.append('<g class="labels">')
        for room in self.rooms:
            out.extend(self.texts(room))
        total = sum(r.size[0] * r.size[1] for r in self.floor.rooms
                    if self.layout.get(r) is not None and r.size)
        out.append(self.text(f"Total area: {fmt(total)}", b.x, b.y2 + 1.4, 0.9,
                             attrs=' class="total-area"'))
        out.append("</g>")
        out.append("</g>")
        return "\n".join(out)

    # ------------------------------------------------------------ openings

    def plan_openings(self) -> list[str]:
        out: list[str] = []
        for room in self.rooms:
            r = self.rect(room)
            for side in ("top", "right", "bottom", "left"):
                wtype = room.wall_type(side)
                seg = r.side(side)
                if wtype == "door":
                    width = min(DOOR, seg.length * 0.8)
                    mid = (seg.lo + seg.hi) / 2
                    lo, hi = mid - width / 2, mid + width / 2
                    self.cut(room, side, lo, hi)
                    out.append(_door_group("door", seg.horizontal, seg.at, lo, hi, INTO[side],
                                           "right", False,
                                           {"data-room": room.name, "data-side": side}))
                elif wtype == "window":
                    length = seg.length * WINDOW_SHARE
                    mid = (seg.lo + seg.hi) / 2
                    lo, hi = mid - length / 2, mid + length / 2
                    self.cut(room, side, lo, hi)
                    out.append(_window(room.name, side, seg.horizontal, seg.at, lo, hi))
        for geo in self.doors:
            out.append(self.connection_door(geo))
        return out

    def connection_door(self, geo: ConnectionGeometry) -> str:
        conn, c = geo.connection, geo.contact
        double = conn.door_type == "double-door"
        width = min(DOUBLE_DOOR if double else DOOR, (c.hi - c.lo) * 0.9)
        pos = 50.0 if conn.position is None else max(0.0, min(100.0, conn.position))
        centre = c.lo + (c.hi - c.lo) * pos / 100
        lo = max(c.lo, min(centre - width / 2, c.hi - width))
        hi = lo + width
        self.cut(geo.room_a, c.side_a, lo, hi)
        if geo.room_b is not None:
            self.cut(geo.room_b, c.side_b, lo, hi)
        # The door opens into the named room, else into the target room (or into the room
        # when the other end is the outside).
        into_room: Room | None
        if conn.opens_into is not None:
            into_room = None if conn.opens_into.is_outside else \
                (geo.room_a if conn.opens_into.name == geo.room_a.name else geo.room_b)
        else:
            into_room = geo.room_b if geo.room_b is not None else geo.room_a
        if into_room is None:
            sign = -INTO[c.side_a]
            into_name = "outside"
        elif into_room is geo.room_a:
            sign, into_name = INTO[c.side_a], geo.room_a.name
        else:
            sign, into_name = INTO[c.side_b], into_room.name
        horizontal = c.side_a in ("top", "bottom")
        attrs = {"data-from": conn.source.room.name, "data-to": conn.target.room.name,
                 "data-opens-into": into_name}
        kind = "double-door" if double else "door"
        return _door_group(f"connection {kind}", horizontal, c.at, lo, hi, sign,
                           conn.swing or "right", double, attrs)

    # ------------------------------------------------------------ walls and text

    def walls(self, room: Room) -> list[str]:
        r = self.rect(room)
        out: list[str] = []
        half = WALL / 2
        for side in ("top", "right", "bottom", "left"):
            if room.wall_type(side) == "open":
                continue
            seg = r.side(side)
            for lo, hi in _subtract((seg.lo - half, seg.hi + half),
                                    self.cuts.get((id(room), side), [])):
                if seg.horizontal:
                    x, y, w, h = lo, seg.at - half, hi - lo, WALL
                else:
                    x, y, w, h = seg.at - half, lo, WALL, hi - lo
                out.append(f'<rect class="wall" data-room={quoteattr(room.name)} '
                           f'data-side="{side}" x="{fmt(x)}" y="{fmt(y)}" width="{fmt(w)}" '
                           f'height="{fmt(h)}" fill="#222222"/>')
        return out

    def texts(self, room: Room) -> list[str]:
        r = self.rect(room)
        w, h = r.w, r.h  # a placed room's rectangle has its declared size
        font = max(0.25, min(0.9, min(r.w, r.h) / 6))
        size_text = f"{fmt(w)} × {fmt(h)}"
        if room.height is not None:
            size_text += f" × {fmt(room.height)}"
        # (class, text, size, style, fill)
        lines: list[tuple[str, str, float, str, str | None]] = [
            ("room-name", room.name, font, "bold", None)]
        if room.label:
            lines.append(("room-label", room.label, font * 0.85, "italic", None))
        lines.append(("room-size", size_text, font * 0.75, "normal", "#555555"))
        lines.append(("room-area", f"area {fmt(w * h)}", font * 0.75, "normal", "#555555"))
        step = font * 1.25
        cx = r.x + r.w / 2
        if room.sub_rooms:  # keep the parent's text clear of its sub-rooms: write it at the top
            y = r.y + WALL + font * 1.1
        else:
            y = r.y + r.h / 2 - step * (len(lines) - 1) / 2 + font * 0.35
        out = []
        for cls, text, size, style, fill in lines:
            # shrink a line that would not fit the room's width (bold text is about 0.7 em a letter)
            size = max(0.1, min(size, 0.9 * r.w / (0.7 * max(1, len(text)))))
            if size < self.min_text:
                y += step
                continue
            out.append(self.text(text, cx, y, size, anchor="middle", style=style, fill=fill,
                                 attrs=f' class="{cls}" data-room={quoteattr(room.name)}'))
            y += step
        return out


def _subtract(span: tuple[float, float], cuts: list[tuple[float, float]]
              ) -> list[tuple[float, float]]:
    pieces = [span]
    for lo, hi in sorted(cuts):
        nxt = []
        for a, b in pieces:
            if hi <= a or lo >= b:
                nxt.append((a, b))
                continue
            if lo - a > 1e-6:
                nxt.append((a, lo))
            if b - hi > 1e-6:
                nxt.append((hi, b))
        pieces = nxt
    return pieces


def _pt(horizontal: bool, along: float, at: float, normal: float = 0.0) -> tuple[float, float]:
    return (along, at + normal) if horizontal else (at + normal, along)


def _leaf(horizontal: bool, at: float, hinge: float, closed: float, sign: int) -> str:
    """A door leaf standing open at 90 degrees from ``hinge`` plus its swing arc to ``closed``."""
    width = abs(closed - hinge)
    hx, hy = _pt(horizontal, hinge, at)
    tx, ty = _pt(horizontal, hinge, at, sign * width)
    cx, cy = _pt(horizontal, closed, at)
    cross = (tx - hx) * (cy - hy) - (ty - hy) * (cx - hx)
    sweep = 1 if cross > 0 else 0
    return (f'<path class="door-leaf" d="M {fmt(hx)} {fmt(hy)} L {fmt(tx)} {fmt(ty)}" '
            f'stroke="#222222" stroke-width="0.08" fill="none"/>'
            f'<path class="door-swing" d="M {fmt(tx)} {fmt(ty)} A {fmt(width)} {fmt(width)} '
            f'0 0 {sweep} {fmt(cx)} {fmt(cy)}" stroke="#666666" stroke-width="0.05" '
            f'fill="none" stroke-dasharray="0.2 0.1"/>')


def _door_group(cls: str, horizontal: bool, at: float, lo: float, hi: float, sign: int,
                swing: str, double: bool, attrs: dict[str, str]) -> str:
    half = WALL / 2 + 0.02
    gx, gy = _pt(horizontal, lo, at, -half)
    gw, gh = (hi - lo, 2 * half) if horizontal else (2 * half, hi - lo)
    attr_text = "".join(f" {k}={quoteattr(v)}" for k, v in attrs.items())
    data_dir = "horizontal" if horizontal else "vertical"
    parts = [f'<g class="{cls}" data-swing="{swing}" data-width="{fmt(hi - lo)}" '
             f'data-orientation="{data_dir}"{attr_text}>',
             f'<rect class="door-gap" x="{fmt(gx)}" y="{fmt(gy)}" width="{fmt(gw)}" '
             f'height="{fmt(gh)}" fill="#ffffff"/>']
    if double:
        mid = (lo + hi) / 2
        parts.append(_leaf(horizontal, at, lo, mid, sign))
        parts.append(_leaf(horizontal, at, hi, mid, sign))
    elif swing == "left":
        parts.append(_leaf(horizontal, at, hi, lo, sign))
    else:
        parts.append(_leaf(horizontal, at, lo, hi, sign))
    parts.append("</g>")
    return "".join(parts)


def _window(room: str, side: str, horizontal: bool, at: float, lo: float, hi: float) -> str:
    half = WALL / 2
    x, y = _pt(horizontal, lo, at, -half)
    w, h = (hi - lo, WALL) if horizontal else (WALL, hi - lo)
    x1, y1 = _pt(horizontal, lo, at)
    x2, y2 = _pt(horizontal, hi, at)
    return (f'<g class="window" data-room={quoteattr(room)} data-side="{side}">'
            f'<rect x="{fmt(x)}" y="{fmt(y)}" width="{fmt(w)}" height="{fmt(h)}" '
            f'fill="#cfe8ff" stroke="#222222" stroke-width="0.04"/>'
            f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" '
            f'stroke="#222222" stroke-width="0.03"/></g>')

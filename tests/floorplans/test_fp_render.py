"""Rendering, checked structurally: the SVG is parsed as XML and its elements measured."""
# ruff: noqa: E501  (DSL fixtures are quoted verbatim from the seed)

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET

import pytest

from app.floorplans import tools
from app.floorplans.render_svg import WALL

NS = {"s": "http://www.w3.org/2000/svg"}

OFFICE = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: window, bottom: door, left: open] label "main workspace"
    room Lab size (6 x 12) right-of Office composed of [
      sub-room Booth at (1,1) size (3 x 3)
      sub-room Booth2 size (2 x 2) below Booth gap 1
    ]
  }
connect Office.right to Lab.left door at 25% opens into Office swing: left
connect Lab.bottom to outside double-door
"""


def svg_of(dsl: str, **args) -> ET.Element:
    image, mime, result = tools.render_floorplan({"dsl": dsl, "format": "svg", **args})
    assert result["success"], result
    assert mime == "image/svg+xml"
    return ET.fromstring(image)


def find(root: ET.Element, cls: str, **attrs: str) -> list[ET.Element]:
    out = []
    for el in root.iter():
        if cls in (el.get("class") or "").split() and all(
                el.get(k.replace("_", "-")) == v for k, v in attrs.items()):
            out.append(el)
    return out


def f(el: ET.Element, name: str) -> float:
    return float(el.get(name))


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_rooms_are_drawn_at_resolved_positions_including_relative_sub_rooms() -> None:
    root = svg_of(OFFICE)
    rooms = {el.get("data-room"): el for el in find(root, "room")}
    assert set(rooms) == {"Office", "Lab", "Booth", "Booth2"}
    lab = rooms["Lab"]
    assert (f(lab, "x"), f(lab, "y"), f(lab, "width"), f(lab, "height")) == (10, 0, 6, 12)
    booth2 = rooms["Booth2"]
    assert (f(booth2, "x"), f(booth2, "y")) == (11, 5)


def test_walls_have_thickness_open_sides_are_absent_and_doors_cut_a_gap() -> None:
    root = svg_of(OFFICE)
    walls = find(root, "wall", data_room="Office")
    assert walls and all(min(f(w, "width"), f(w, "height")) == WALL for w in walls)
    assert find(root, "wall", data_room="Office", data_side="left") == []
    bottom = find(root, "wall", data_room="Office", data_side="bottom")
    assert len(bottom) == 2  # the door splits the wall in two
    (door,) = find(root, "door", data_room="Office", data_side="bottom")
    gap = door.find("s:rect", NS)
    gap_lo, gap_hi = f(gap, "x"), f(gap, "x") + f(gap, "width")
    for seg in bottom:
        lo, hi = f(seg, "x"), f(seg, "x") + f(seg, "width")
        assert hi <= gap_lo + 1e-6 or lo >= gap_hi - 1e-6
    width = float(door.get("data-width"))
    arc = next(p for p in door.findall("s:path", NS) if p.get("class") == "door-swing")
    radius = float(re.search(r"A ([\d.]+) ", arc.get("d")).group(1))
    assert radius == pytest.approx(width) and width <= 2.0  # a door-width arc, not the wall
    assert find(root, "window", data_room="Office", data_side="right")


def test_texts_name_label_dimensions_and_areas() -> None:
    root = svg_of(OFFICE)
    texts = {(el.get("class"), el.get("data-room")): el.text for el in root.iter()
             if el.tag.endswith("text")}
    assert texts[("room-name", "Office")] == "Office"
    assert texts[("room-label", "Office")] == "main workspace"
    assert texts[("room-size", "Office")] == "10 × 12"
    assert texts[("room-area", "Office")] == "area 120"
    assert texts[("room-area", "Booth")] == "area 9"
    (total,) = find(root, "total-area")
    assert total.text == "Total area: 192"


def test_connection_doors_single_and_double_with_swing() -> None:
    root = svg_of(OFFICE)
    (single,) = find(root, "connection", data_from="Office", data_to="Lab")
    assert "door" in single.get("class").split()
    assert single.get("data-swing") == "left" and single.get("data-opens-into") == "Office"
    leaf = next(p for p in single.findall("s:path", NS) if p.get("class") == "door-leaf")
    # vertical wall at x = 10; opening into Office (x < 10) means the leaf points left
    nums = [float(n) for n in re.findall(r"-?[\d.]+", leaf.get("d"))]
    assert nums[0] == 10 and nums[2] < 10
    (double,) = find(root, "double-door")
    leaves = [p for p in double.findall("s:path", NS) if p.get("class") == "door-leaf"]
    assert len(leaves) == 2
    # both Office and Lab walls are cut where the connection door is
    gap = single.find("s:rect", NS)
    lo, hi = f(gap, "y"), f(gap, "y") + f(gap, "height")
    for room, side in (("Office", "right"), ("Lab", "left")):
        for seg in find(root, "wall", data_room=room, data_side=side):
            s_lo, s_hi = f(seg, "y"), f(seg, "y") + f(seg, "height")
            assert s_hi <= lo + 1e-6 or s_lo >= hi - 1e-6


def test_swing_left_and_right_put_the_hinge_at_opposite_ends() -> None:
    base = "floorplan floor f { room A at (0,0) size (5 x 5) room B at (5,0) size (5 x 5) }\n"
    hinges = []
    for swing in ("left", "right"):
        root = svg_of(base + f"connect A to B door swing: {swing}")
        (door,) = find(root, "connection")
        assert door.get("data-swing") == swing
        leaf = next(p for p in door.findall("s:path", NS) if p.get("class") == "door-leaf")
        hinges.append(leaf.get("d").split(" L ")[0])
    assert hinges[0] != hinges[1]


MULTI = """floorplan
  floor Ground { room Hall at (0,0) size (10 x 10) }
  floor First { room Bed at (0,0) size (8 x 4) }
"""


def test_floor_selection_and_layouts() -> None:
    ground = svg_of(MULTI)
    assert [g.get("aria-label") for g in find(ground, "floor")] == ["Floor: Ground"]
    first = svg_of(MULTI, floorIndex=1)
    assert [g.get("aria-label") for g in find(first, "floor")] == ["Floor: First"]
    side = svg_of(MULTI, renderAllFloors=True)
    floors = find(side, "floor")
    assert [g.get("data-floor") for g in floors] == ["Ground", "First"]
    assert len(find(side, "floor-label")) == 2
    xs = [float(re.search(r"translate\(([-\d.]+),", g.get("transform")).group(1)) for g in floors]
    assert xs[1] > xs[0]
    stacked = svg_of(MULTI, renderAllFloors=True, multiFloorLayout="stacked")
    ys = {g.get("data-floor"): float(re.search(r",([-\d.]+)\)", g.get("transform")).group(1))
          for g in find(stacked, "floor")}
    assert ys["Ground"] > ys["First"]  # the first floor is drawn at the bottom


def test_bad_floor_index_is_an_error_result() -> None:
    image, mime, result = tools.render_floorplan({"dsl": MULTI, "floorIndex": 5})
    assert image is None and result["success"] is False
    assert "floorIndex 5" in result["errors"][0]["message"]


@pytest.mark.parametrize("width, height", [(800, 600), (400, 400), (300, 900)])
def test_png_fits_width_by_height_keeping_the_aspect_ratio(width: int, height: int) -> None:
    image, mime, result = tools.render_floorplan({"dsl": OFFICE, "width": width,
                                                  "height": height})
    assert mime == "image/png" and result["format"] == "png"
    w, h = png_size(image)
    assert (w, h) == (result["imageSize"]["width"], result["imageSize"]["height"])
    assert w <= width and h <= height and (w == width or h == height)
    root = svg_of(OFFICE)
    _, _, vw, vh = (float(v) for v in root.get("viewBox").split())
    assert w / h == pytest.approx(vw / vh, rel=0.02)


def test_same_input_same_bytes() -> None:
    first = tools.render_floorplan({"dsl": OFFICE})[0]
    second = tools.render_floorplan({"dsl": OFFICE})[0]
    assert first == second
    assert tools.render_floorplan({"dsl": OFFICE, "format": "svg"})[0] == \
        tools.render_floorplan({"dsl": OFFICE, "format": "svg"})[0]


def test_png_contains_drawn_text() -> None:
    """A plan with text and the same plan without labels must rasterise differently."""
    with_label = tools.render_floorplan({"dsl": OFFICE})[0]
    without = tools.render_floorplan({"dsl": OFFICE.replace('label "main workspace"', "")})[0]
    assert with_label != without


def test_empty_plan_renders_a_blank_image() -> None:
    image, _, result = tools.render_floorplan({"dsl": "floorplan"})
    assert result["success"] and result["floorCount"] == 0 and result["rooms"] == []
    assert png_size(image)[0] > 0


def test_omitted_walls_are_all_solid_and_outside_doors_are_drawn() -> None:
    root = svg_of("floorplan floor f { room A at (0,0) size (6 x 4) }\n"
                  "connect A.bottom to outside door at 20% opens into outside")
    assert sorted(w.get("data-side") for w in find(root, "wall", data_room="A")) == \
        ["bottom", "bottom", "left", "right", "top"]  # the door splits the bottom wall
    (door,) = find(root, "connection", data_from="A", data_to="outside")
    assert door.get("data-opens-into") == "outside"
    leaf = next(p for p in door.findall("s:path", NS) if p.get("class") == "door-leaf")
    nums = [float(n) for n in re.findall(r"-?[\d.]+", leaf.get("d"))]
    assert nums[1] == 4 and nums[3] > 4  # hinge on the bottom wall, leaf outwards (y grows)


def test_png_leaves_out_only_illegibly_small_text() -> None:
    from app.floorplans.render_svg import RenderOptions, render_svg
    from app.floorplans.tools import MIN_TEXT_PX
    from app.floorplans.validate import analyze

    def texts(dsl: str, **opts) -> int:
        svg = render_svg(analyze(dsl), RenderOptions(**opts))
        return sum(1 for el in ET.fromstring(svg).iter() if el.tag.endswith("text"))

    assert texts(OFFICE, min_text_px=MIN_TEXT_PX) == texts(OFFICE)
    rooms = "\n".join(f"room R{i} at ({i * 10},0) size (10 x 8) label \"room {i}\""
                      for i in range(60))
    big = f"floorplan floor f {{\n{rooms}\n}}"
    full = texts(big, width=400, height=300)
    raster = texts(big, width=400, height=300, min_text_px=MIN_TEXT_PX)
    assert raster < full
    assert texts(big, width=4000, height=3000, min_text_px=MIN_TEXT_PX) == full


def _raster(svg: str) -> bytes:
    import svg2png_py

    from app.floorplans.render_png import _WHITE, _fonts, _options

    return svg2png_py.svg_to_rgba(svg, _fonts(), bg_color=_WHITE, options=_options())[0]


def test_png_labels_are_glyph_outlines_that_look_like_the_text() -> None:
    """For a PNG each label is drawn from the face's outlines (resvg's own text layout cost most
    of the rasterising); the picture matches the <text> one but for sub-pixel spacing, and the
    browser's SVG keeps its <text>."""
    from app.floorplans.render_svg import RenderOptions, render_svg
    from app.floorplans.validate import analyze

    analysis = analyze(OFFICE)
    text_svg = render_svg(analysis, RenderOptions())
    glyph_svg = render_svg(analysis, RenderOptions(glyph_text=True))
    root = ET.fromstring(glyph_svg)
    assert not [el for el in root.iter() if el.tag.endswith("}text")]
    names = find(root, "room-name", data_room="Office")
    assert [el.get("aria-label") for el in names] == ["Office"]
    assert len(names[0].findall("s:path", NS)) == len("Office")
    label = find(root, "room-label", data_room="Office")[0]
    assert label.get("aria-label") == "main workspace"  # the space has no outline
    assert len(label.findall("s:path", NS)) == len("mainworkspace")
    assert find(root, "room-size", data_room="Office")[0].get("fill") == "#555555"
    # The tool's PNG uses the outlines; the SVG format keeps real text.
    assert b"<text" in tools.render_floorplan({"dsl": OFFICE, "format": "svg"})[0].encode()

    with_text, with_glyphs = _raster(text_svg), _raster(glyph_svg)
    assert with_text != with_glyphs
    no_text = _raster(re.sub(r"<text[^>]*>.*?</text>", "", text_svg, flags=re.S))
    pixels = range(0, len(with_text), 4)

    def differing(a: bytes, b: bytes) -> int:
        return sum(1 for i in pixels if max(abs(a[i + k] - b[i + k]) for k in range(3)) > 64)

    inked, far = differing(with_text, no_text), differing(with_text, with_glyphs)
    # The glyphs land where resvg put its own (7% of the inked pixels differ much here, at the
    # edges of strokes; without the kerning pairs it was 40%).
    assert far * 8 < inked, (far, inked)


def test_a_label_the_face_cannot_draw_stays_text() -> None:
    from app.floorplans.render_svg import RenderOptions, render_svg
    from app.floorplans.validate import analyze

    plan = OFFICE.replace('label "main workspace"', 'label "会议室"')
    root = ET.fromstring(render_svg(analyze(plan), RenderOptions(glyph_text=True)))
    (label,) = find(root, "room-label", data_room="Office")
    assert label.tag.endswith("}text") and label.text == "会议室"
    assert find(root, "room-name", data_room="Office")[0].tag.endswith("}g")
    image, _, result = tools.render_floorplan({"dsl": plan})
    assert result["success"] and png_size(image)[0] > 0

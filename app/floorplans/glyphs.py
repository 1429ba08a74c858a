"""Text as glyph outlines, for the PNG drawing only.

resvg lays text out itself, and the binding we use reads the font's file again for every run
of glyphs it shapes or outlines. Here each face is read once per process with fontTools, each
character's outline is turned into SVG path data once, and a label becomes a group of those
paths, placed with the face's advance widths. resvg then only fills paths. The SVG served to
browsers keeps real ``<text>`` (selectable, accessible); this is for pixels.

Kerning comes from the face's pair table; not copied from resvg: its shaping beyond pairs
(ligatures, marks; these labels are plain words and numbers) and font fallback. A label with
a character the face lacks, or any label when the DejaVu faces or fontTools are missing, is
left as ``<text>`` for resvg to draw.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "/Library/Fonts",
             "C:/Windows/Fonts")
FACES = {"normal": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf",
         "italic": "DejaVuSans-Oblique.ttf"}


@cache
def font_files() -> dict[str, str]:
    """File name → path of the DejaVu faces the drawing uses, where the system has them."""
    found: dict[str, str] = {}
    for folder in FONT_DIRS:
        base = Path(folder)
        if base.is_dir():
            for path in sorted(base.rglob("DejaVuSans*.ttf")):
                if path.name in FACES.values():
                    found.setdefault(path.name, str(path))
    return found


_DRAWING = threading.Lock()


@dataclass
class Face:
    units_per_em: int
    cmap: dict[int, str]
    advances: dict[str, int]
    glyphs: Any  # fontTools glyph set
    kerning: dict[tuple[str, str], int]  # (left glyph, right glyph) -> adjustment
    # character -> (path data in font units, or "" for a blank glyph; advance; glyph name)
    outlines: dict[str, tuple[str, int, str]] = field(default_factory=dict)

    def outline(self, char: str) -> tuple[str, int, str] | None:
        found = self.outlines.get(char)
        if found is None:
            name = self.cmap.get(ord(char))
            if name is None:
                return None
            from fontTools.pens.svgPathPen import (  # lazy: fonts only when a PNG is drawn
                SVGPathPen,
            )

            # The face is read lazily and shared by every thread rendering a PNG: one drawing
            # of a new character at a time (a known one is read above without the lock).
            with _DRAWING:
                pen = SVGPathPen(self.glyphs, ntos=_number)
                self.glyphs[name].draw(pen)
                found = self.outlines[char] = (pen.getCommands(), self.advances[name], name)
        return found


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.2f}".rstrip("0")


@cache
def face(style: str) -> Face | None:
    """The face of ``style`` (normal, bold, italic), read once per process; None without it."""
    path = font_files().get(FACES[style])
    if path is None:
        return None
    try:
        from fontTools.ttLib import TTFont  # lazy: fonts only when a PNG is drawn
    except ImportError:
        return None
    font = TTFont(path, lazy=True)
    cmap = font.getBestCmap()
    advances = {name: metrics[0] for name, metrics in font["hmtx"].metrics.items()}
    kerning: dict[tuple[str, str], int] = {}
    if "kern" in font:  # the pair table resvg's shaper reads too (through GPOS)
        for table in font["kern"].kernTables:
            kerning.update(getattr(table, "kernTable", {}) or {})
    return Face(font["head"].unitsPerEm, dict(cmap), advances, font.getGlyphSet(), kerning)


def label(text: str, x: float, y: float, size: float, *, anchor: str = "start",
          style: str = "normal", fill: str | None = None, attrs: str = "",
          fmt: Any = str) -> str | None:
    """``text`` with its baseline at (x, y) and ``anchor`` (start, middle, end) as a group of
    glyph paths; ``attrs`` are the group's other attributes (class, data-room). None when the
    face or one of its characters is missing: the caller then writes ``<text>``."""
    found = face(style)
    if found is None:
        return None
    parts = []
    pen = 0
    previous = ""
    for char in text:
        glyph = found.outline(char)
        if glyph is None:
            return None
        path, advance, name = glyph
        pen += found.kerning.get((previous, name), 0)
        previous = name
        if path:  # a space has an advance and no outline
            parts.append(f'<path transform="translate({pen})" d="{path}"/>' if pen
                         else f'<path d="{path}"/>')
        pen += advance
    scale = size / found.units_per_em
    left = x - pen * scale * {"start": 0.0, "middle": 0.5, "end": 1.0}[anchor]
    # The font's y axis points up: flip it. The text itself stays as the group's label.
    paint = f' fill="{fill}"' if fill else ""
    return (f'<g{attrs}{paint} aria-label={quoteattr(text)} '
            f'transform="translate({fmt(left)},{fmt(y)}) scale({scale:.6g},{-scale:.6g})">'
            f'{"".join(parts)}</g>')


def text_element(text: str, x: float, y: float, size: float, *, anchor: str = "start",
                 style: str = "normal", fill: str | None = None, attrs: str = "",
                 fmt: Any = str) -> str:
    """The ``<text>`` element the browser's SVG uses for the same label."""
    extra = "" if anchor == "start" else f' text-anchor="{anchor}"'
    extra += {"normal": "", "bold": ' font-weight="bold"',
              "italic": ' font-style="italic"'}[style]
    extra += f' fill="{fill}"' if fill else ""
    return (f'<text{attrs} x="{fmt(x)}" y="{fmt(y)}" font-size="{fmt(size)}"{extra}>'
            f'{escape(text)}</text>')

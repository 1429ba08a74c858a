"""Rasterise floorplan SVG to PNG with resvg (no browser, deterministic output).

The SVG already carries its fitted pixel size. Text needs a font: a sans-serif family such as
"DejaVu Sans" (Debian package fonts-dejavu-core) is requested. The font database is built once
per process (svg2png_py keeps it between calls, which resvg_py could not): when the DejaVu faces
are found on the system only the three the SVG uses (regular, bold for names, oblique for labels)
are loaded, otherwise every system font.

resvg draws into an RGBA pixmap, which this module writes as a PNG itself with zlib's fastest
level and no row filter: resvg's own encoder (adaptive filters, default compression) costs as
much again as drawing the plan, for files not much smaller.
"""

from __future__ import annotations

import struct
import zlib
from functools import cache

import svg2png_py

from .glyphs import font_files

SANS = "DejaVu Sans"
_WHITE = (255, 255, 255, 255)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@cache
def _fonts() -> svg2png_py.FontDatabase:
    """The process's font database (thread-safe; shared by every render)."""
    files = tuple(font_files().values())  # the faces the labels use (app.floorplans.glyphs)
    if not files:
        return svg2png_py.FontDatabase.system()
    database = svg2png_py.FontDatabase()
    for path in files:
        database.load_font_file(path)
    return database


@cache
def _options() -> svg2png_py.RenderOptions:
    return svg2png_py.RenderOptions(font_family=SANS)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body)))


def encode_png(rgba: bytes, width: int, height: int) -> bytes:
    """An 8-bit RGBA PNG of ``rgba`` (rows top to bottom, 4 bytes a pixel, opaque).

    resvg's pixels are premultiplied; on an opaque background every pixel has alpha 255, where
    premultiplied and straight alpha are the same bytes.
    """
    stride = width * 4
    rows = memoryview(rgba)
    # Filter type 0 ("none") before every row; zlib level 1 is fast, and a plan's large plain
    # areas compress well at any level.
    raw = b"".join(b"\x00" + rows[y * stride:(y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (_PNG_SIGNATURE + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw, 1)) + _chunk(b"IEND", b""))


def svg_to_png(svg: str) -> bytes:
    rgba, width, height = svg2png_py.svg_to_rgba(svg, _fonts(), bg_color=_WHITE,
                                                 options=_options())
    return encode_png(rgba, width, height)

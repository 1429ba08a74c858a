"""Rasterise floorplan SVG to PNG with resvg (no browser, deterministic output).

The SVG already carries its fitted pixel size. Text needs a font: a sans-serif family such as
"DejaVu Sans" (Debian package fonts-dejavu-core) is requested; when it is found on the system,
only the faces the SVG uses (regular, bold for names, oblique for labels) are handed to resvg
and the system fonts are skipped. resvg_py builds its font database on every call (it has no
persistent one), so that per-render cost is kept to three files, looked up once per process,
instead of a scan of every installed font.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import resvg_py

SANS = "DejaVu Sans"
_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "/Library/Fonts",
              "C:/Windows/Fonts")
_FACES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf")


@cache
def _font_files() -> tuple[str, ...]:
    found: list[str] = []
    for folder in _FONT_DIRS:
        base = Path(folder)
        if base.is_dir():
            found.extend(str(p) for p in sorted(base.rglob("DejaVuSans*.ttf"))
                         if p.name in _FACES)
    return tuple(found)


def svg_to_png(svg: str) -> bytes:
    fonts = _font_files()
    if fonts:
        return bytes(resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff",
                                           skip_system_fonts=True, font_files=list(fonts),
                                           font_family=SANS, sans_serif_family=SANS))
    return bytes(resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff",
                                       font_family=SANS, sans_serif_family=SANS))

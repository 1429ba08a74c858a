"""The icons this server shows in a client: its own and one per kind of tool.

The pictures are the SVG files the web app serves (``app/static/icons``), so a person and an
agent's client see the same marks. MCP gets them as ``data:`` URIs: an icon must show over
stdio too, where the server has no URL of its own, and a client then never fetches anything
from us to draw it.
"""

from __future__ import annotations

import base64
from functools import cache
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parents[1] / "static" / "icons"
NAMES = ("harmonic", "page", "floorplan", "playbook")


@cache
def icons(name: str) -> list[dict[str, Any]]:
    """The ``icons`` list of an MCP Implementation, Tool, Resource or Prompt."""
    if name not in NAMES:
        raise ValueError(f"no icon {name!r}: use one of {', '.join(NAMES)}")
    svg = (FOLDER / f"{name}.svg").read_bytes()
    src = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    return [{"src": src, "mimeType": "image/svg+xml", "sizes": ["any"]}]

"""Errors and warnings reported about a floorplan: one shape for syntax and semantic problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Diagnostic:
    """A problem found in a floorplan; ``line``/``column`` are 1-based."""

    type: str
    message: str
    line: int
    column: int
    room_name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "message": self.message,
                               "line": self.line, "column": self.column}
        if self.room_name is not None:
            out["roomName"] = self.room_name
        out.update(self.extra)
        return out


def line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of character offset ``pos`` in ``text``."""
    pos = max(0, min(pos, len(text)))
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, column

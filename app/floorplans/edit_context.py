"""What every modification handler works with: the current text, its analysis, shared helpers.

Handlers compute span edits on the current text and return ``(new_text, message)``; they raise
``OperationError`` with a user-facing message when the operation cannot be applied.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .language import Language, Vocabulary
from .model import Connection, Floorplan, Room
from .text_edit import Edit, apply_edits, indent_before, number
from .validate import Analysis


class OperationError(ValueError):
    """An operation cannot be applied; the message is shown to the caller."""


@dataclass
class Context:
    text: str
    analysis: Analysis
    language: Language

    @property
    def vocab(self) -> Vocabulary:
        return self.language.vocabulary

    @property
    def plan(self) -> Floorplan:
        """The parsed plan: operations run only on text that parses (``modify`` checks)."""
        if self.analysis.plan is None:
            raise OperationError("The floorplan does not parse")
        return self.analysis.plan

    def room(self, name: str | None) -> Room:
        if name is None:
            raise OperationError("This operation needs a target room")
        room = self.analysis.names.get(name)
        if room is None:
            raise OperationError(f'Room "{name}" not found')
        return room


Handler = Callable[[Context, "str | None", dict[str, Any]], tuple[str, str]]


def edited(ctx: Context, edits: list[Edit]) -> str:
    return apply_edits(ctx.text, edits)


def check_new_name(ctx: Context, name: str) -> None:
    pattern = ctx.language.parser.get_terminal("NAME").pattern.to_regexp()
    if not re.fullmatch(pattern, name):
        raise OperationError(f"'{name}' is not a valid room name (letters, digits and _, "
                             f"starting with a letter or _)")
    if name in ctx.vocab.keywords:
        raise OperationError(f"'{name}' is a keyword and cannot be used as a room name")
    if name in ctx.analysis.names:
        raise OperationError(f'Room "{name}" already exists')


def clause_end(room: Room) -> int:
    """Where a new clause goes: after the last clause that is not ``composed of``."""
    ends = [c.span.end for c in room.clauses if c.keyword != "composed_clause"]
    return max(ends) if ends else room.name_span.end


def relative_text(rel: dict[str, Any]) -> str:
    text = f"{rel['direction']} {rel['reference']}"
    if rel.get("gap") is not None:
        text += f" gap {number(rel['gap'])}"
    if rel.get("alignment"):
        text += f" align {rel['alignment']}"
    return text


def walls_text(ctx: Context, walls: dict[str, str]) -> str:
    specs = [f"{side}: {walls[side]}" for side in ctx.vocab.wall_sides if side in walls]
    return f"walls [{', '.join(specs)}]"


def child_indent(text: str, children: list[Any]) -> str | None:
    for child in reversed(children):
        indent = indent_before(text, child.span.start)
        if indent is not None:
            return indent
    return None


def references_to(ctx: Context, names: set[str], exclude: set[int]
                ) -> tuple[list[Room], list[Connection]]:
    rooms = [r for r in ctx.plan.all_rooms()
             if id(r) not in exclude and r.relative and r.relative.reference in names]
    conns = [c for c in ctx.plan.connections
             if c.source.room.name in names or c.target.room.name in names
             or (c.opens_into is not None and c.opens_into.name in names)]
    return rooms, conns

# ruff: noqa: E501  (the document and its examples have long lines on purpose)
"""The ``floorplan://schema`` Markdown document, generated from the grammar and the operations.

Lists of values (wall types, sides, directions, ...) are read from the vocabulary; the grammar
itself is quoted in full at the end. Descriptions below only explain values; a value added to
the grammar appears in the document even before anyone writes a description for it.
"""

from __future__ import annotations

from .language import Language, default_language
from .operations import OPERATIONS

_EXPLAIN = {
    "solid": "A plain wall.",
    "door": "A door in the middle of the wall: a gap plus a swing arc into the room.",
    "window": "A window in the middle of the wall.",
    "open": "No wall at all (open to the neighbouring space).",
    "door-type:door": "A single door leaf.",
    "door-type:double-door": "Two leaves hinged at both ends, meeting in the middle.",
}

EXAMPLES = (
    ("A single room", """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: window, bottom: door, left: solid] label "main workspace"
  }"""),
    ("Sub-rooms and relative placement", """floorplan
  # sub-room coordinates are relative to the parent's top-left corner
  floor ground {
    room Office at (0,0) size (10 x 12) walls [right: window, bottom: door] label "main workspace"
    room Kitchen size (10 x 8) below Office gap 2 label "break area"
    room FlexArea size (20 x 22) right-of Office gap 2 walls [top: open, bottom: open] composed of [
      sub-room PhoneBooth1 at (3,5) size (3 x 3) walls [top: window, bottom: door]
      sub-room PhoneBooth2 size (3 x 3) right-of PhoneBooth1 gap 3
    ]
  }"""),
    ("Several floors and connections", """floorplan
  floor ground {
    room Hall at (0,0) size (8 x 6)
    room Living size (12 x 6) right-of Hall
    room Kitchen size (8 x 6) below Hall
  }
  floor upper {
    room Bedroom at (0,0) size (10 x 8) height 2.5 label "main bedroom"
  }
/* connections come after the floors */
connect Hall.right to Living.left door at 50% opens into Living swing: left
connect Hall to Kitchen double-door
connect Hall.top to outside door"""),
)


def _values(values: tuple[str, ...], kind: str = "") -> str:
    rows = ["| Value | Meaning |", "|---|---|"]
    for value in values:
        text = _EXPLAIN.get(f"{kind}:{value}") or _EXPLAIN.get(value, "") if kind else \
            _EXPLAIN.get(value, "")
        rows.append(f"| `{value}` | {text} |")
    return "\n".join(rows)


def _list(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def schema_markdown(language: Language | None = None) -> str:
    language = language or default_language()
    v = language.vocabulary
    walls = ", ".join(f"{side}: T" for side in v.wall_sides)
    ops = "\n".join(f"| `{op.name}` | {'yes' if op.takes_target else 'no'} | {op.description} |"
                    for op in OPERATIONS)
    examples = "\n\n".join(f"### {title}\n\n```floorplan\n{text}\n```"
                           for title, text in EXAMPLES)
    return f"""# Floorplan DSL

A floorplan is text: floors holding rooms (which may be composed of sub-rooms, to any depth),
followed by connections (doors) between rooms. Coordinates are abstract plan units; the origin
is the top-left, x grows to the right and y grows downwards. Numbers may be negative or decimal.

## Structure

```
floorplan
  floor <id> {{
    room <Name> at (<x>,<y>) size (<width> x <height>) walls [{walls}] label "<text>"
    room <Name> size (<w> x <h>) <direction> <OtherRoom> gap <n> align <alignment>
    room <Name> at (<x>,<y>) size (<w> x <h>) composed of [
      sub-room <Name> at (<x>,<y>) size (<w> x <h>)
    ]
  }}
connect <Room>[.<side>] to <Room|outside>[.<side>] <door type> at <n>% opens into <Room> swing: <swing>
```

## Room clauses

A room starts with `room` (or `sub-room`) and its name; the clauses below may follow in any
order, each at most once. `size` is required, and so is a position: `at` or a relative placement.

| Clause | Syntax | Meaning |
|---|---|---|
| Position | `at (x,y)` | Top-left corner; for a sub-room, relative to its parent's top-left corner |
| Size | `size (width x height)` | Must be positive |
| Walls | `walls [side: type, ...]` | Optional; every side not listed is `solid`; a side may appear once |
| Relative placement | `<direction> <Room> [gap n] [align a]` | Placed against another room on the same floor |
| Label | `label "text"` | Shown under the name (single or double quotes, no escapes) |
| Height | `height n` | Ceiling height, shown with the dimensions |
| Sub-rooms | `composed of [ sub-room ... ]` | Nested rooms, any depth |

Room names are letters, digits and `_`, not starting with a digit, and unique in the whole plan.

### Wall sides

{_list(v.wall_sides)}

### Wall types

{_values(v.wall_types)}

## Relative placement

Directions: {_list(v.directions)}. Alignments: {_list(v.alignments)}.

- `right-of R`: x = R.x + R.width + gap; `left-of R`: x = R.x - width - gap; y from `align`
  (`top` default: y = R.y; `bottom`: R.y + R.height - height; `center`: centred).
- `below R`: y = R.y + R.height + gap; `above R`: y = R.y - height - gap; x from `align`
  (`left` default: x = R.x; `right`: R.x + R.width - width; `center`: centred).
- Diagonals (`below-right-of` and so on) put the room at the matching corner, `gap` applied on
  both axes; alignment is ignored.
- An explicit `at` wins over a relative clause. Cycles are errors.

## Connections

`connect A[.side] to B[.side] <door type> [at n%] [opens into R] [swing: s]`, at top level
(never inside a floor), usually after the floors. Door types: {_list(v.door_types)}. Swings:
{_list(v.swings)}. `outside` stands for the exterior. Without `.side` the touching walls are
found automatically (a warning tells when the walls do not touch). `at n%` (0-100, default 50)
places the door along the shared stretch of wall. The door opens into `opens into R`, by default
into the second room; `swing: right` (the default) hinges it at the left/top end of the opening,
`swing: left` at the right/bottom end. A `door` wall type draws its own door, opening into the
room.

{_values(v.door_types, "door-type")}

## Comments

`# to the end of the line` and `/* block */`.

## Validation

Errors: `parse` (with line and column, what was expected and what was found), `no_position`,
`missing_reference`, `circular_dependency` (names the cycle), `unresolved_dependency`,
`duplicate_name`, `duplicate_clause`, `missing_size`, `invalid_size`, `invalid_height`,
`duplicate_wall`, `number_out_of_range`, `unknown_room`, `invalid_door_position`, `invalid_opens_into`.
Warnings: `overlap` (siblings at every level), `outside_parent`, `connection_not_adjacent`.
Every item has `type`, `message`, `line`, `column` and, where it concerns a room, `roomName`.

## Modification operations (`modify_floorplan`)

| Action | Needs `target` | What it does |
|---|---|---|
{ops}

## Examples

{examples}

## Grammar (lark)

```lark
{language.grammar_text.strip()}
```
"""

"""Parser cases mirrored from the reference implementation's suite, plus our extensions."""

from __future__ import annotations

import pytest

from app.floorplans.parser import parse


def ok(text: str):
    result = parse(text)
    assert result.errors == [], [e.to_dict() for e in result.errors]
    return result.plan


BASIC = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) walls [top: solid, right: window, bottom: door, left: solid]
  }
"""


def test_basic_structure() -> None:
    plan = ok(BASIC)
    assert [f.name for f in plan.floors] == ["f1"]
    room = plan.floors[0].rooms[0]
    assert (room.name, room.at, room.size) == ("Office", (0, 0), (10, 12))
    assert [(w.side, w.type) for w in room.walls] == [
        ("top", "solid"), ("right", "window"), ("bottom", "door"), ("left", "solid")]


@pytest.mark.parametrize("wtype", ["solid", "door", "window", "open"])
@pytest.mark.parametrize("side", ["top", "right", "bottom", "left"])
def test_every_wall_type_on_every_side(side: str, wtype: str) -> None:
    plan = ok(f"floorplan floor f {{ room A at (0,0) size (1 x 1) walls [{side}: {wtype}] }}")
    assert plan.floors[0].rooms[0].wall_type(side) == wtype


def test_connection_with_all_parts() -> None:
    plan = ok("floorplan floor f { room RoomA at (0,0) size (5 x 5) room RoomB at (5,0) "
              "size (5 x 5) }\nconnect RoomA.right to RoomB.left door at 50% opens into RoomA "
              "swing: left")
    conn = plan.connections[0]
    assert (conn.position, conn.opens_into.name, conn.swing) == (50, "RoomA", "left")
    assert (conn.source.wall, conn.target.wall) == ("right", "left")


def test_double_door_with_optional_door_keyword_before_opens() -> None:
    plan = ok("floorplan floor f { room A at (0,0) size (5 x 5) }\n"
              "connect A to B double-door at 75% door opens into B swing: right")
    conn = plan.connections[0]
    assert (conn.door_type, conn.position, conn.swing) == ("double-door", 75, "right")
    assert conn.source.wall is None and conn.target.wall is None


def test_sub_rooms_nest_three_levels() -> None:
    plan = ok("""floorplan floor f {
      room A at (0,0) size (30 x 30) composed of [
        sub-room B at (1,1) size (20 x 20) composed of [
          sub-room C at (1,1) size (10 x 10) composed of [
            sub-room D at (1,1) size (2 x 3)
          ]
        ]
      ]
    }""")
    a = plan.floors[0].rooms[0]
    assert [r.name for r in a.descendants()] == ["B", "C", "D"]
    assert a.descendants()[-1].size == (2, 3)
    assert a.descendants()[-1].parent.name == "C"


def test_top_level_sub_room_is_allowed() -> None:
    plan = ok("floorplan floor f { sub-room S at (0,0) size (1 x 1) }")
    assert plan.floors[0].rooms[0].kind == "sub-room"


def test_empty_floor_and_bare_floorplan() -> None:
    assert ok("floorplan floor f1 { }").floors[0].rooms == []
    bare = ok("floorplan")
    assert bare.floors == [] and bare.connections == []


def test_two_floors_and_outside_connections() -> None:
    plan = ok("""floorplan
      floor Ground { room Hall at (0,0) size (5 x 5) }
      floor First { room Bed at (0,0) size (5 x 5) }
    connect Hall.bottom to outside door
    connect outside to Bed double-door""")
    assert [f.name for f in plan.floors] == ["Ground", "First"]
    assert plan.connections[0].target.room.is_outside
    assert plan.connections[1].source.room.is_outside


def test_comments_and_decimals() -> None:
    plan = ok("""# a comment
    floorplan /* block
    comment */ floor f {
      room A at (1.5, 2.75) size (10.5 x 12.25) # trailing
    }""")
    assert plan.floors[0].rooms[0].at == (1.5, 2.75)
    assert plan.floors[0].rooms[0].size == (10.5, 12.25)


def test_label_present_and_absent_and_both_quote_styles() -> None:
    plan = ok("floorplan floor f { room A at (0,0) size (1 x 1) label \"it's\" "
              "room B at (1,0) size (1 x 1) label 'say \"hi\"' room C at (2,0) size (1 x 1) }")
    assert [r.label for r in plan.floors[0].rooms] == ["it's", 'say "hi"', None]


@pytest.mark.parametrize("clause, expected", [
    ("right-of A", ("right-of", "A", None, None)),
    ("left-of A", ("left-of", "A", None, None)),
    ("below A", ("below", "A", None, None)),
    ("above A", ("above", "A", None, None)),
    ("below-right-of A", ("below-right-of", "A", None, None)),
    ("right-of A gap 2", ("right-of", "A", 2, None)),
    ("right-of A align bottom", ("right-of", "A", None, "bottom")),
    ("below A gap 1.5 align center", ("below", "A", 1.5, "center")),
])
def test_relative_clauses(clause: str, expected: tuple) -> None:
    plan = ok(f"floorplan floor f {{ room A at (0,0) size (5 x 5) "
              f"room B size (5 x 5) walls [top: solid] {clause} label \"x\" }}")
    rel = plan.floors[0].rooms[1].relative
    assert (rel.direction, rel.reference, rel.gap, rel.alignment) == expected


def test_at_and_relative_both_kept() -> None:
    room = ok("floorplan floor f { room B at (3,4) size (1 x 1) walls [top: solid] right-of A }"
              ).floors[0].rooms[0]
    assert room.at == (3, 4) and room.relative.reference == "A"


def test_extensions_negative_numbers_no_walls_any_clause_order_height() -> None:
    room = ok("floorplan floor f { room A label \"l\" size (4 x 5) at (-3,-2.5) height 2.7 }"
              ).floors[0].rooms[0]
    assert (room.at, room.size, room.height, room.walls) == ((-3, -2.5), (4, 5), 2.7, [])
    assert room.wall_type("left") == "solid"


def test_compact_size_and_unicode_names() -> None:
    room = ok("floorplan floor f { room Küche at (0,0) size (10x12) }").floors[0].rooms[0]
    assert (room.name, room.size) == ("Küche", (10, 12))


# ---------------------------------------------------------------- errors


def test_invalid_wall_type_reports_line_column_expected_and_found() -> None:
    text = ("floorplan\n  floor f1 {\n    room Office at (0,0) size (10 x 12) "
            "walls [top: invalid_type]\n  }")
    errors = parse(text).errors
    assert len(errors) == 1
    err = errors[0]
    assert (err.type, err.line, err.column) == ("parse", 3, 53)
    assert "wall type" in err.message and "solid" in err.message
    assert "invalid_type" in err.message


def test_wrong_first_word() -> None:
    err = parse("invalid dsl content").errors[0]
    assert (err.line, err.column) == (1, 1)
    assert "'floorplan'" in err.message and "invalid" in err.message


def test_end_of_text_error_has_a_position() -> None:
    err = parse("floorplan\nfloor f1 {\n  room A at (0,0) size (1 x 1)\n").errors[0]
    assert (err.line, err.column) == (4, 1)
    assert "end of the text" in err.message and "'}'" in err.message


def test_several_errors_are_reported_after_recovery() -> None:
    text = """floorplan
  floor f1 {
    room A at (0,0) size (10 x 12) walls [top: solid
    room B at (0,0) size (1 x 1) walls [left: glass]
    room C at (0,0) size (1 x 1) label "unterminated
    room D at (0,0) size (1 x 1) $
  }
"""
    errors = parse(text).errors
    assert [e.line for e in errors] == [4, 4, 5, 6]
    assert "']'" in errors[0].message
    assert "glass" in errors[1].message
    assert "Unterminated string" in errors[2].message
    assert "$" in errors[3].message


def test_connect_inside_a_floor_is_an_error() -> None:
    err = parse("floorplan floor f { room A at (0,0) size (1 x 1) connect A to B door }"
                ).errors[0]
    assert "connect" in err.message

"""Position resolution (the reference formulas) and semantic validation."""

from __future__ import annotations

import pytest

from app.floorplans.validate import analyze


def positions(body: str) -> dict[str, tuple[float, float]]:
    analysis = analyze(f"floorplan\nfloor f {{\n{body}\n}}")
    assert analysis.errors == [], [e.to_dict() for e in analysis.errors]
    return {p.room.name: (p.rect.x, p.rect.y) for p in analysis.layout.placed.values()}


def types(text: str) -> list[str]:
    return [e.type for e in analyze(text).errors]


A5 = "room A at (0,0) size (5 x 5)"


@pytest.mark.parametrize("body, name, expected", [
    (f"{A5}\nroom B size (5 x 5) right-of A", "B", (5, 0)),
    ("room A at (10,0) size (5 x 5)\nroom B size (5 x 5) left-of A", "B", (5, 0)),
    (f"{A5}\nroom B size (5 x 5) below A", "B", (0, 5)),
    ("room A at (0,10) size (5 x 5)\nroom B size (5 x 5) above A", "B", (0, 5)),
    (f"{A5}\nroom B size (5 x 5) right-of A gap 2", "B", (7, 0)),
    ("room A at (0,0) size (5 x 10)\nroom B size (5 x 5) right-of A align bottom", "B", (5, 5)),
    ("room A at (0,0) size (5 x 10)\nroom B size (5 x 4) right-of A align center", "B", (5, 3)),
    (f"{A5}\nroom B size (5 x 5) below-right-of A gap 1", "B", (6, 6)),
    (f"{A5}\nroom B size (2 x 3) below-left-of A", "B", (-2, 5)),
    (f"{A5}\nroom B size (2 x 3) above-right-of A", "B", (5, -3)),
    (f"{A5}\nroom B size (2 x 3) above-left-of A gap 1", "B", (-3, -4)),
    # the grammar spec's numeric scenarios
    ("room MainBedroom at (0,0) size (20 x 15)\nroom Closet size (5 x 8) right-of MainBedroom "
     "align bottom", "Closet", (20, 7)),
    ("room Wide at (0,0) size (20 x 10)\nroom Narrow size (10 x 5) below Wide align center",
     "Narrow", (5, 10)),
    ("room Center at (10,10) size (5 x 5)\nroom R size (5 x 5) right-of Center", "R", (15, 10)),
    ("room Center at (10,10) size (5 x 5)\nroom R size (5 x 5) below Center", "R", (10, 15)),
    ("room A at (0,0) size (10 x 10)\nroom B size (4 x 4) below A align right", "B", (6, 10)),
    # the reference's quirk: an alignment for the other axis falls back to the default
    ("room A at (0,0) size (10 x 10)\nroom B size (4 x 4) below A align bottom", "B", (0, 10)),
    # explicit at wins over relative placement
    (f"{A5}\nroom B at (30,30) size (5 x 5) right-of A", "B", (30, 30)),
])
def test_resolution_formulas(body: str, name: str, expected: tuple[float, float]) -> None:
    assert positions(body)[name] == pytest.approx(expected)


def test_chain_resolves_in_any_order() -> None:
    got = positions("room C size (5 x 5) right-of B\nroom B size (5 x 5) right-of A\n" + A5)
    assert (got["A"], got["B"], got["C"]) == ((0, 0), (5, 0), (10, 0))


def test_sub_room_positions_are_relative_to_the_parent_and_can_be_relative() -> None:
    text = """floorplan floor f {
      room P at (10,20) size (20 x 20) composed of [
        sub-room S1 at (2,3) size (4 x 4)
        sub-room S2 size (4 x 4) right-of S1 gap 1 composed of [
          sub-room T at (1,1) size (1 x 1)
        ]
      ]
    }"""
    analysis = analyze(text)
    assert analysis.errors == []
    got = {p.room.name: (p.rect.x, p.rect.y, p.local) for p in analysis.layout.placed.values()}
    assert got["S1"] == (12, 23, (2, 3))
    assert got["S2"] == (17, 23, (7, 3))
    assert got["T"] == (18, 24, (1, 1))


def test_circular_reference_names_the_cycle() -> None:
    analysis = analyze("floorplan floor f { room A size (1 x 1) right-of C\n"
                       "room B size (1 x 1) right-of A\nroom C size (1 x 1) right-of B\n"
                       "room D size (1 x 1) right-of A }")
    cyc = [e for e in analysis.errors if e.type == "circular_dependency"]
    assert sorted(e.room_name for e in cyc) == ["A", "B", "C"]
    # A is placed from C, C from B, B from A
    assert any(chain in cyc[0].message for chain in
               ("A -> C -> B -> A", "C -> B -> A -> C", "B -> A -> C -> B"))
    assert all(e.line >= 1 and e.column >= 1 for e in analysis.errors)
    assert [e.room_name for e in analysis.errors if e.type == "unresolved_dependency"] == ["D"]


def test_self_reference_is_circular() -> None:
    assert types("floorplan floor f { room A size (1 x 1) right-of A }") == ["circular_dependency"]


def test_missing_reference_and_no_position() -> None:
    analysis = analyze("floorplan\nfloor f {\nroom A size (1 x 1) right-of Nope\n"
                       "room B size (1 x 1)\n}")
    got = {e.type: e for e in analysis.errors}
    assert got["missing_reference"].message == "Room 'A' references unknown room 'Nope'"
    assert (got["missing_reference"].line, got["missing_reference"].column) == (3, 30)
    assert got["no_position"].room_name == "B" and got["no_position"].line == 4


def test_duplicate_names_sizes_walls_and_clauses() -> None:
    text = """floorplan floor f {
      room A at (0,0) size (0 x 5) walls [top: solid, top: door]
      room A at (9,9) size (5 x -1) size (1 x 1)
      room B at (20,0)
    }"""
    got = types(text)
    assert sorted(got) == sorted(["invalid_size", "duplicate_wall", "duplicate_name",
                                  "invalid_size", "duplicate_clause", "missing_size"])
    diag = {e.type: e for e in analyze(text).errors}["duplicate_wall"]
    assert diag.to_dict()["roomName"] == "A" and diag.line == 2


def test_connection_errors() -> None:
    text = """floorplan floor f { room A at (0,0) size (5 x 5) room B at (5,0) size (5 x 5) }
connect A to Ghost door
connect A to B door at 101%
connect A to B door at -1%
connect A to B door opens into C
connect A to B door at 100%"""
    got = types(text)
    assert got == ["unknown_room", "invalid_door_position", "invalid_door_position",
                   "invalid_opens_into"]


def test_warnings_overlap_at_every_level_outside_parent_and_non_touching_doors() -> None:
    text = """floorplan floor f {
      room A at (0,0) size (10 x 10)
      room B at (5,5) size (10 x 10) composed of [
        sub-room S1 at (0,0) size (4 x 4)
        sub-room S2 at (2,2) size (4 x 4)
        sub-room S3 at (8,8) size (5 x 5)
      ]
      room C at (40,0) size (5 x 5)
      room D at (10,0) size (5 x 5)
    }
connect A to C door
connect A.right to D.left door
connect A.bottom to D door"""
    analysis = analyze(text)
    assert analysis.errors == []
    warnings = [(w.type, w.extra.get("rooms") or w.room_name) for w in analysis.warnings]
    assert ("overlap", ["A", "B"]) in warnings
    assert ("overlap", ["S1", "S2"]) in warnings
    assert ("outside_parent", "S3") in warnings
    assert [w for w in warnings if w[0] == "connection_not_adjacent"] == [
        ("connection_not_adjacent", None), ("connection_not_adjacent", None)]
    assert [d.connection.span.line for d in analysis.doors] == [12]
    for w in analysis.warnings:
        d = w.to_dict()
        assert {"type", "message", "line", "column"} <= d.keys()


def test_touching_rooms_do_not_overlap() -> None:
    assert analyze(f"floorplan floor f {{ {A5} room B at (5,0) size (5 x 5) }}").warnings == []


def test_relative_reference_to_another_floor_is_an_error() -> None:
    assert types("floorplan floor a { room A at (0,0) size (1 x 1) } "
                 "floor b { room B size (1 x 1) right-of A }") == ["missing_reference"]


def test_bare_floorplan_is_valid() -> None:
    analysis = analyze("floorplan")
    assert analysis.valid and analysis.warnings == []


def test_absurd_numbers_are_errors_not_crashes() -> None:
    huge = "9" * 400
    assert types(f"floorplan floor f {{ room A at ({huge},0) size (1 x 1) }}") == \
        ["number_out_of_range"]


def test_deep_nesting_is_resolved() -> None:
    depth = 60
    text = "floorplan floor f {\n"
    for i in range(depth):
        text += f"{'room' if i == 0 else 'sub-room'} N{i} at (1,1) size ({200 - 2 * i} x " \
                f"{200 - 2 * i}) composed of [\n"
    text += "]\n" * depth + "}"
    analysis = analyze(text)
    assert analysis.errors == [] and analysis.warnings == []
    deepest = analysis.names[f"N{depth - 1}"]
    assert analysis.layout.get(deepest).rect.x == depth

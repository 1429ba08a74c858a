"""Hypothesis strategies that generate valid floorplans, with what the tests need to know."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from app.floorplans.language import default_language

VOCAB = default_language().vocabulary
LABEL_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\"'\n\r\\",
                                   exclude_categories=("Cc", "Cs")), max_size=12)


@dataclass
class GeneratedPlan:
    dsl: str
    rooms: list[str] = field(default_factory=list)  # every room, sub-rooms included
    top_rooms: list[str] = field(default_factory=list)
    connections: list[tuple[str, str]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)


@st.composite
def walls_clause(draw) -> str:
    sides = draw(st.lists(st.sampled_from(VOCAB.wall_sides), unique=True, max_size=4))
    if not sides:
        return ""
    specs = [f"{side}: {draw(st.sampled_from(VOCAB.wall_types))}" for side in sides]
    return f" walls [{', '.join(specs)}]"


@st.composite
def number(draw, lo: int, hi: int) -> float:
    whole = draw(st.integers(lo, hi))
    return whole + draw(st.sampled_from([0, 0, 0.5]))


def fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


@st.composite
def plans(draw, max_rows: int = 3, max_cols: int = 3) -> GeneratedPlan:
    out = GeneratedPlan("")
    lines = ["floorplan"]
    n_floors = draw(st.integers(1, 2))
    for f in range(n_floors):
        comment = f"# floor comment {f}"
        out.comments.append(comment)
        lines.append(f"  {comment}")
        lines.append(f"  floor F{f} {{")
        rows, cols = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
        widths = [draw(number(4, 12)) for _ in range(cols)]
        heights = [draw(number(4, 12)) for _ in range(rows)]
        ox, oy = draw(st.integers(-20, 20)), draw(st.integers(-20, 20))
        for r in range(rows):
            for c in range(cols):
                name = f"R{f}_{r}_{c}"
                x, y = ox + sum(widths[:c]), oy + sum(heights[:r])
                w, h = widths[c], heights[r]
                mode = draw(st.sampled_from(["at", "rel", "rel"])) if (r or c) else "at"
                if mode == "at":
                    place = f" at ({fmt(x)},{fmt(y)})"
                elif c:
                    place = f" right-of R{f}_{r}_{c - 1}"
                else:
                    place = f" below R{f}_{r - 1}_{c}"
                clauses = [place, f" size ({fmt(w)} x {fmt(h)})", draw(walls_clause())]
                if draw(st.booleans()):
                    clauses.append(f' label "{draw(LABEL_TEXT)}"')
                if draw(st.booleans()):
                    clauses.append(f" height {fmt(draw(number(2, 4)))}")
                body = "".join(clauses[:1] + draw(st.permutations(clauses[1:])))
                out.rooms.append(name)
                out.top_rooms.append(name)
                subs = []
                if w >= 4 and h >= 4 and draw(st.booleans()):
                    s1, s2 = f"S{f}_{r}_{c}a", f"S{f}_{r}_{c}b"
                    subs.append(f"      sub-room {s1} at (0.5,0.5) size (1 x 1)"
                                f"{draw(walls_clause())}")
                    subs.append(f"      sub-room {s2} size (1 x 1) right-of {s1} gap 0.5")
                    out.rooms += [s1, s2]
                if subs:
                    lines.append(f"    room {name}{body} composed of [")
                    lines.extend(subs)
                    lines.append("    ]")
                else:
                    lines.append(f"    room {name}{body}")
        lines.append("  }")
        for r in range(rows):
            for c in range(cols - 1):
                if draw(st.booleans()):
                    a, b = f"R{f}_{r}_{c}", f"R{f}_{r}_{c + 1}"
                    out.connections.append((a, b))
    tail = []
    for a, b in out.connections:
        door = draw(st.sampled_from(VOCAB.door_types))
        extra = ""
        if draw(st.booleans()):
            extra += f" at {draw(st.integers(0, 100))}%"
        if draw(st.booleans()):
            extra += f" opens into {draw(st.sampled_from([a, b]))}"
        if draw(st.booleans()):
            extra += f" swing: {draw(st.sampled_from(VOCAB.swings))}"
        walls = draw(st.sampled_from(["", ".right|.left"]))
        wa, wb = walls.split("|") if walls else ("", "")
        tail.append(f"connect {a}{wa} to {b}{wb} {door}{extra}")
    if tail:
        out.comments.append("/* doors */")
        lines.append("/* doors */")
        lines.extend(tail)
    out.dsl = "\n".join(lines) + "\n"
    return out


TOKENS = sorted(VOCAB.keywords | {"{", "}", "[", "]", "(", ")", ",", ":", ".", "%", "x",
                                  "A", "B", "1", "-2.5", '"l"', "#c\n", "/*", "*/", "\n", "@"})
token_soup = st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join)

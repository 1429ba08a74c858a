"""Parse floorplan text into the model, reporting every syntax error it can recover from.

Errors carry 1-based line/column, what was expected and what was found. Recovery is by line:
after an error the offending line (and, if it opens a bracket, everything up to the matching
close) is blanked out — offsets are kept — and the text is parsed again, up to ``MAX_ERRORS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from .diagnostics import Diagnostic, line_col
from .language import Language, default_language
from .model import (
    Clause,
    Connection,
    Floor,
    Floorplan,
    Relative,
    Room,
    RoomRef,
    Span,
    WallRef,
    WallSpec,
)

MAX_ERRORS = 10
_WORD = re.compile(r"[^\W\d][\w-]*|-?\d+(?:\.\d+)?|\S")
_TERMINAL_WORDS = {"NAME": "a name", "NUMBER": "a number", "STRING": "a quoted string",
                   "$END": "the end of the text", "OUTSIDE": "'outside'"}
_ENUM_WORDS = {"wall_type": "a wall type", "wall_side": "a wall side", "direction": "a direction",
               "alignment": "an alignment", "door_type": "a door type", "swing": "a swing"}
_OPENERS, _CLOSERS = "([{", ")]}"


@dataclass
class ParseResult:
    plan: Floorplan | None
    errors: list[Diagnostic] = field(default_factory=list)


def parse(text: str, language: Language | None = None) -> ParseResult:
    """Parse ``text``; ``plan`` is None when there is any syntax error."""
    language = language or default_language()
    if not isinstance(text, str):
        return ParseResult(None, [Diagnostic("parse", "The DSL must be a string", 1, 1)])
    errors: list[Diagnostic] = []
    work = text
    seen: set[tuple[int, int]] = set()
    inserted: set[int] = set()  # closers written by recovery; blanking must keep them
    while len(errors) < MAX_ERRORS:
        try:
            tree = language.parser.parse(work)
        except UnexpectedInput as exc:
            diag, blank = _describe(exc, work, language)
            if (diag.line, diag.column) in seen or (blank is None and errors):
                break  # a repeat, or an end-of-text error caused by an earlier recovery
            seen.add((diag.line, diag.column))
            errors.append(diag)
            if blank is None:
                break
            fixed = _insert_closer(exc, work)
            if fixed is not None:
                work, at = fixed
                inserted.add(at)
                continue
            work = _blank(work, *blank, keep=inserted)
            continue
        except Exception as exc:  # lark internals should not escape as a crash
            errors.append(Diagnostic("parse", f"Could not parse the DSL: {exc}", 1, 1))
            break
        if not errors:
            return ParseResult(_Builder(text, language).plan(tree))
        break
    return ParseResult(None, errors)


# ---------------------------------------------------------------- error wording and recovery


def _describe(exc: UnexpectedInput, text: str, language: Language
              ) -> tuple[Diagnostic, tuple[int, int] | None]:
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0  # always set on this error (lark's stubs say None)
        found = _word_at(text, pos)
        expected = _expected(set(exc.allowed or ()), language)
        line, column = line_col(text, pos)
        msg = f"Expected {expected} but found `{found}`" if expected else f"Unexpected `{found}`"
        if text[pos] in "\"'":
            msg = "Unterminated string: a quoted string must end on the same line"
            return Diagnostic("parse", msg, line, column), _line_block(text, pos)
        return Diagnostic("parse", msg, line, column), (pos, pos + 1)
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        tok = exc.token
        pos = tok.start_pos if tok.start_pos is not None else 0
        line, column = line_col(text, pos)
        expected = _expected(set(exc.expected or ()), language)
        found = f"`{tok.value}`"
        if tok.type != "NAME" and "NAME" in (exc.expected or ()) and str(tok.value).isalpha():
            found += " (a keyword, which cannot be used as a name)"
        msg = f"Expected {expected} but found {found}"
        return Diagnostic("parse", msg, line, column), _line_block(text, pos)
    expected = _expected(set(getattr(exc, "expected", None) or ()), language)
    line, column = line_col(text, len(text))
    msg = f"Unexpected end of the text: expected {expected}" if expected else \
        "Unexpected end of the text"
    return Diagnostic("parse", msg, line, column), None


def _blank(text: str, start: int, end: int, keep: set[int]) -> str:
    """Replace a stretch with spaces, keeping line breaks so offsets and lines stay valid."""
    chars = list(text[start:end])
    for i, ch in enumerate(chars):
        if ch != "\n" and start + i not in keep:
            chars[i] = " "
    return text[:start] + "".join(chars) + text[end:]


def _insert_closer(exc: UnexpectedInput, text: str) -> tuple[str, int] | None:
    """Recover from a forgotten ']', ')' or '}' by writing it over the space before the token."""
    if not isinstance(exc, UnexpectedToken) or exc.token.start_pos is None:
        return None
    closers = {name: ch for name, ch in (("RSQB", "]"), ("RPAR", ")"), ("RBRACE", "}"))
               if name in (exc.expected or ())}
    pos = exc.token.start_pos
    if len(closers) != 1 or pos == 0 or text[pos - 1] not in " \t":
        return None
    return text[:pos - 1] + next(iter(closers.values())) + text[pos:], pos - 1


def _word_at(text: str, pos: int) -> str:
    m = _WORD.match(text, pos)
    return m.group(0) if m else text[pos:pos + 1]


def _expected(names: set[str], language: Language) -> str:
    if len(names) > 1:  # "end of the text" only matters when nothing else would do
        names.discard("$END")
    words: list[str] = []
    for terms, rule in language.enum_by_terminals.items():
        if rule in _ENUM_WORDS and terms <= names and len(terms) > 1:
            values = language.vocabulary.by_rule(rule)
            listed = ", ".join(values[:-1]) + " or " + values[-1]
            words.append(f"{_ENUM_WORDS.get(rule, rule)} ({listed})")
            names -= terms
    def order(name: str) -> tuple[bool, str]:
        return name not in _TERMINAL_WORDS, language.literals.get(name, name)

    for name in sorted(names, key=order):
        if name in _TERMINAL_WORDS:
            words.append(_TERMINAL_WORDS[name])
        elif name in language.literals:
            words.append(f"'{language.literals[name]}'")
        else:
            words.append(name)
    if not words:
        return ""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _line_block(text: str, pos: int) -> tuple[int, int]:
    """The line holding ``pos``, extended to the close of any bracket it leaves open."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    depth = _bracket_depth(text, start, end)
    if depth > 0:
        i = end
        while i < len(text) and depth > 0:
            ch = text[i]
            if ch in _OPENERS:
                depth += 1
            elif ch in _CLOSERS:
                depth -= 1
            i += 1
        nl = text.find("\n", i)
        end = len(text) if nl < 0 else nl
    return start, end


def _bracket_depth(text: str, start: int, end: int) -> int:
    depth = 0
    quote = ""
    for ch in text[start:end]:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        elif ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth -= 1
    return depth


# ---------------------------------------------------------------- tree -> model


def _tspan(tok: Token) -> Span:
    # lark types a token's position Optional; this parser's tokens always carry one.
    assert tok.start_pos is not None and tok.end_pos is not None
    assert tok.line is not None and tok.column is not None
    return Span(tok.start_pos, tok.end_pos, tok.line, tok.column)


def _edge(tree: Tree, index: int) -> Token:
    node: Tree | Token = tree
    while isinstance(node, Tree):
        node = node.children[index]
    assert isinstance(node, Token)
    return node


def _mspan(tree: Tree) -> Span:
    # The parser keeps every token (cheaper than lark's position propagation), so a rule's span
    # runs from its first token to its last, brackets included.
    first, last = _tspan(_edge(tree, 0)), _tspan(_edge(tree, -1))
    return Span(first.start, last.end, first.line, first.column)


_VALUE_TOKENS = frozenset({"NAME", "NUMBER", "STRING", "OUTSIDE"})


def _kids(tree: Tree) -> list[Any]:
    """A rule's children without its keywords and punctuation.

    Any, not ``Tree | Token``: which child is a rule and which a token is fixed by the grammar,
    which the builder below follows and a type checker cannot see.
    """
    return [c for c in tree.children if isinstance(c, Tree) or c.type in _VALUE_TOKENS]


def _enum(tree: Tree) -> Token:
    token = tree.children[0]
    assert isinstance(token, Token)  # an enumeration rule is one keyword
    return token


class _Builder:
    def __init__(self, text: str, language: Language) -> None:
        self.text = text
        self.language = language

    def plan(self, tree: Tree) -> Floorplan:
        kw = self.text.find("floorplan")
        line, column = line_col(self.text, kw)
        plan = Floorplan(self.text, Span(kw, kw + 9, line, column))
        for child in _kids(tree):
            if child.data == "floor":
                plan.floors.append(self.floor(child))
            else:
                plan.connections.append(self.connection(child))
        return plan

    def floor(self, tree: Tree) -> Floor:
        name = _kids(tree)[0]
        floor = Floor(str(name), _tspan(name), _mspan(tree))
        for child in _kids(tree)[1:]:
            floor.rooms.append(self.room(child, None, floor))
        return floor

    def room(self, tree: Tree, parent: Room | None, floor: Floor) -> Room:
        kids = _kids(tree)
        kind_tok, name = _enum(kids[0]), kids[1]
        room = Room(str(kind_tok), str(name), _tspan(name), _mspan(tree),
                    parent=parent, floor=floor)
        for clause in kids[2:]:
            span = _mspan(clause)
            kind = clause.data
            room.clauses.append(Clause(kind, span))
            kids = _kids(clause)
            if kind == "at_clause":
                if room.at is None:
                    room.at = (float(kids[0]), float(kids[1]))
                    room.at_span = span
                    room.at_number_spans = (_tspan(kids[0]), _tspan(kids[1]))
            elif kind == "size_clause":
                if room.size is None:
                    room.size = (float(kids[0]), float(kids[1]))
                    room.size_span = span
                    room.size_number_spans = (_tspan(kids[0]), _tspan(kids[1]))
            elif kind == "height_clause":
                if room.height is None:
                    room.height = float(kids[0])
            elif kind == "walls_clause":
                if room.walls_span is None:
                    room.walls_span = span
                for spec in kids:
                    side, wtype = _enum(_kids(spec)[0]), _enum(_kids(spec)[1])
                    room.walls.append(WallSpec(str(side), str(wtype), _mspan(spec),
                                               _tspan(wtype)))
            elif kind == "relative_clause":
                if room.relative is None:
                    room.relative = self.relative(clause)
            elif kind == "label_clause":
                if room.label is None:
                    room.label = str(kids[0])[1:-1]
                    room.label_span = span
                    room.label_string_span = _tspan(kids[0])
            elif kind == "composed_clause":
                if room.composed_span is None:
                    room.composed_span = span
                for sub in kids:
                    room.sub_rooms.append(self.room(sub, room, floor))
        return room

    def relative(self, tree: Tree) -> Relative:
        direction = str(_enum(_kids(tree)[0]))
        ref = _kids(tree)[1]
        gap = alignment = None
        for extra in _kids(tree)[2:]:
            if extra.data == "gap_clause":
                gap = float(_kids(extra)[0])
            else:
                alignment = str(_enum(_kids(extra)[0]))
        return Relative(direction, str(ref), gap, alignment, _mspan(tree), _tspan(ref))

    def room_ref(self, tree: Tree) -> RoomRef:
        tok = _kids(tree)[0]
        return RoomRef(str(tok), _tspan(tok), tok.type == "OUTSIDE")

    def wall_ref(self, tree: Tree) -> WallRef:
        ref = self.room_ref(_kids(tree)[0])
        wall = str(_enum(_kids(tree)[1])) if len(_kids(tree)) > 1 else None
        return WallRef(ref, wall, _mspan(tree))

    def connection(self, tree: Tree) -> Connection:
        kids = _kids(tree)
        conn = Connection(_mspan(tree), self.wall_ref(kids[0]), self.wall_ref(kids[1]),
                          str(_enum(kids[2])), None, None, None, None)
        for extra in kids[3:]:
            if extra.data == "door_at":
                conn.position = float(_kids(extra)[0])
                conn.position_span = _tspan(_kids(extra)[0])
            elif extra.data == "opens_into":
                conn.opens_into = self.room_ref(_kids(extra)[-1])
            elif extra.data == "swing_clause":
                conn.swing = str(_enum(_kids(extra)[0]))
        return conn

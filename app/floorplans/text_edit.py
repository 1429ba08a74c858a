"""Span edits on DSL text: replace, insert and delete exactly the characters that change.

Everything outside an edit's span is left byte-for-byte alone, so the user's formatting and
comments survive modifications.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Span


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


class EditConflict(ValueError):
    """Two edits of one operation touch the same characters."""


def apply_edits(text: str, edits: list[Edit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end:
            raise EditConflict(f"overlapping edits at {a.start}-{a.end} and {b.start}-{b.end}")
    out = text
    for edit in reversed(ordered):
        out = out[:edit.start] + edit.text + out[edit.end:]
    return out


def number(value: float) -> str:
    """A number as the DSL writes it: integers without a decimal point."""
    value = float(value)
    if value.is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def quote(text: str) -> str:
    """A DSL string literal; the DSL has no escapes, so pick the quote the text lacks."""
    if "\n" in text or "\r" in text:
        raise ValueError("a label cannot contain a line break")
    if '"' not in text:
        return f'"{text}"'
    if "'" not in text:
        return f"'{text}'"
    raise ValueError("a label cannot contain both single and double quotes")


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def indent_before(text: str, pos: int) -> str | None:
    """The indentation before ``pos`` if only whitespace precedes it on its line."""
    start = line_start(text, pos)
    prefix = text[start:pos]
    return prefix if prefix.strip() == "" else None


def delete_statement(text: str, span: Span) -> Edit:
    """Delete a statement; when it is alone on its lines, delete those lines entirely."""
    start, end = span.start, span.end
    before = indent_before(text, start)
    after_end = line_end(text, end)
    rest = text[end:after_end].strip()
    if before is not None and (rest == "" or rest.startswith("#")):
        lstart = line_start(text, start)
        return Edit(lstart, min(after_end + 1, len(text)), "")
    # Also remove the whitespace that separated it from what precedes it.
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return Edit(start, end, "")


def delete_clause(text: str, span: Span) -> Edit:
    """Delete a clause inside a statement together with the blank space before it."""
    start = span.start
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return Edit(start, span.end, "")


def insert_line_before(text: str, close_pos: int, line: str, child_indent: str | None) -> Edit:
    """Insert ``line`` as the last entry of a block whose closing bracket is at ``close_pos``."""
    closer_indent = indent_before(text, close_pos)
    if closer_indent is not None:
        indent = child_indent if child_indent is not None else closer_indent + "  "
        pos = line_start(text, close_pos)
        return Edit(pos, pos, f"{indent}{line}\n")
    return Edit(close_pos, close_pos, f"{line} ")

"""Line differences between two versions of a text (a note, a floorplan's DSL), for people.

``difflib`` finds the changed lines; ``diff`` groups them into hunks with a little context, each
line marked added, removed or unchanged with its line numbers, so a page can show a diff that a
screen reader reads as words ("added", "removed"), not only as colours.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

CONTEXT = 2  # unchanged lines shown around each change


@dataclass(frozen=True)
class Line:
    kind: str  # "add" | "del" | "same"
    text: str
    old: int | None  # line number in the old text (1-based), None for an added line
    new: int | None


@dataclass(frozen=True)
class Hunk:
    old_start: int
    new_start: int
    lines: list[Line]

@dataclass(frozen=True)
class Diff:
    hunks: list[Hunk]
    added: int
    removed: int

    @property
    def same(self) -> bool:
        return not self.hunks


def diff(old: str, new: str, context: int = CONTEXT) -> Diff:
    a, b = (old or "").splitlines(), (new or "").splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    hunks: list[Hunk] = []
    added = removed = 0
    for group in matcher.get_grouped_opcodes(context):
        lines: list[Line] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [Line("same", a[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2)]
                continue
            if tag in ("replace", "delete"):
                lines += [Line("del", a[i], i + 1, None) for i in range(i1, i2)]
                removed += i2 - i1
            if tag in ("replace", "insert"):
                lines += [Line("add", b[j], None, j + 1) for j in range(j1, j2)]
                added += j2 - j1
        hunks.append(Hunk(group[0][1] + 1, group[0][3] + 1, lines))
    return Diff(hunks, added, removed)

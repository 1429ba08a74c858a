"""Reading a workflow document: YAML text in, a plain dict (or a located problem) out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 512 * 1024


@dataclass(frozen=True)
class Problem:
    path: str  # e.g. mcp.turns[0].model, or (document)
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class DocumentError(Exception):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


def parse(text: str) -> dict[str, Any]:
    """The document as a dict; DocumentError for YAML that is broken, huge or not a mapping."""
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise DocumentError([Problem("(document)", f"larger than {MAX_BYTES} bytes")])
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise DocumentError([Problem("(document)", f"not valid YAML{where}: {reason}")]) from None
    if not isinstance(data, dict):
        raise DocumentError([Problem("(document)", "must be a YAML mapping with apiVersion, "
                                                   "kind, metadata, ...")])
    return data


def read_file(path: str | Path) -> str:
    file = Path(path)
    if not file.is_file():
        raise DocumentError([Problem("(document)", f"no such file: {file}")])
    return file.read_text(encoding="utf-8")


def join(base: str, key: str | int) -> str:
    """Extend a dotted path: join('mcp.turns', 0) → 'mcp.turns[0]'."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else key

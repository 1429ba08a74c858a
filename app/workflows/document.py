"""Reading a workflow document: YAML text in, a plain dict (or a located problem) out.

Playbooks are often written with templates left unquoted (``dsn: {{ secrets.pg_dsn }}``,
``url: {{ secrets.llm_gateway }}/chat``), which YAML reads as a flow mapping and refuses.
Before parsing, ``quote_templates`` wraps every such value in single quotes (a value that
*starts* with ``{{``, after ``key:`` or ``-``, outside block scalars); lines are never added or
removed and a YAML error's column is mapped back, so positions point into the original text.
"""

from __future__ import annotations

import re
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


# ``key: {{ x }}…`` or ``- {{ x }}…`` (also ``- key: {{ x }}``): lead, then the value to quote.
_UNQUOTED = re.compile(
    r"""^(?P<lead>[ \t]*(?:-[ \t]+)*"""  # indentation and list dashes
    r"""(?:(?:[^\s'"{\[#&*!|>%@`-][^:#]*?|"[^"]*"|'[^']*')[ \t]*:[ \t]+)?)"""  # a key
    r"""(?P<value>\{\{.*)$""")
# A line whose value opens a block scalar (``key: |``, ``- >-``): deeper lines are its text.
_BLOCK_START = re.compile(r"""(?:^|[:\s-])[|>][-+0-9]*[ \t]*(?:#.*)?$""")


def quote_templates(text: str) -> tuple[str, dict[int, list[int]]]:
    """``text`` with unquoted template values single-quoted, and per changed line (0-based) the
    original column of each column of the new line (for mapping error positions back)."""
    out: list[str] = []
    columns: dict[int, list[int]] = {}
    block_indent: int | None = None  # indentation of the key that opened a block scalar
    for number, line in enumerate(text.split("\n")):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                out.append(line)
                continue
            block_indent = None
        match = _UNQUOTED.match(line)
        if match and match.group("lead").strip():
            lead, value = match.group("lead"), match.group("value")
            comment = ""
            end = value.rfind("}}")
            hash_at = value.find(" #", end if end >= 0 else 0)
            if hash_at >= 0:
                value, comment = value[:hash_at], value[hash_at:]
            body = value.rstrip()
            trailing = value[len(body):]
            quoted = "'" + body.replace("'", "''") + "'"
            mapping = list(range(len(lead)))
            mapping.append(len(lead))  # the opening quote stands where the value began
            for i, char in enumerate(body):
                mapping += [len(lead) + i] * (2 if char == "'" else 1)
            mapping.append(len(lead) + len(body))  # the closing quote
            rest_at = len(lead) + len(body)
            mapping += [rest_at + i for i in range(len(trailing) + len(comment) + 1)]
            columns[number] = mapping
            line = lead + quoted + trailing + comment
        elif _BLOCK_START.search(line.split(" #")[0].rstrip()) and (":" in line or
                                                                    line.lstrip().startswith("-")):
            block_indent = indent
        out.append(line)
    return "\n".join(out), columns


def parse(text: str) -> dict[str, Any]:
    """The document as a dict; DocumentError for YAML that is broken, huge or not a mapping."""
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise DocumentError([Problem("(document)", f"larger than {MAX_BYTES} bytes")])
    quoted, columns = quote_templates(text)
    try:
        data = yaml.safe_load(quoted)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        column = 0
        if mark:
            mapping = columns.get(mark.line)
            column = (mapping[min(mark.column, len(mapping) - 1)] if mapping
                      else mark.column)
        where = f" at line {mark.line + 1}, column {column + 1}" if mark else ""
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

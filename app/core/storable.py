"""Text no database of ours can store, found anywhere in an input: the one rule of every door.

PostgreSQL refuses a NUL character (U+0000) in text and in JSON columns, and neither database
takes a lone surrogate (U+D800 to U+DFFF standing alone, which a JSON ``"\\ud800"`` escape
decodes to in Python): the driver cannot encode it as UTF-8. Such a character is refused where
a request enters, naming where it was (``votes[0].title``, ``params.text``), rather than
failing deep in a query as a 500 on one database and a quiet miss on the other.

Each door says it in its own words, from the same ``problems``: HTTP answers 422 with
``errors`` (``app.web.limits``: query strings, form fields and JSON bodies), an MCP tool call
answers an ``isError`` result (``app.mcp.server``: tool arguments), and the JSON-RPC doors
answer -32602 (``app.core.jsonrpc.check_text``: MCP's other params, ``/rpc``,
``/design-model/rpc``). A NUL in a URL path stays a 404: no page has such a path.

Standard library only: ``bin/mcp-server`` answers before the app loads.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

NUL = "must not contain NUL characters"
SURROGATE = "must be valid Unicode text (it holds a lone surrogate, U+D800 to U+DFFF)"
# A refusal names this many places at most: enough to fix the input, bounded for a hostile one.
MAX_PROBLEMS = 10

_SURROGATES = re.compile("[\ud800-\udfff]")
_UNSHOWABLE = re.compile("[\x00\ud800-\udfff]")


class Problem(NamedTuple):
    """Where a string no database stores was found (``field``), and what is wrong with it."""

    field: str
    message: str

    def as_error(self) -> dict[str, str]:
        """The ``{"param", "message"}`` entry every door's ``errors`` list holds."""
        return {"param": self.field, "message": self.message}


def text_problem(text: str) -> str | None:
    """What is wrong with ``text`` for a database, or None when any column can hold it."""
    if "\x00" in text:
        return NUL
    if has_lone_surrogate(text):
        return SURROGATE
    return None


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` has no UTF-8 form (a lone surrogate in it)."""
    return not text.isascii() and _SURROGATES.search(text) is not None


def shown(text: str) -> str:
    """``text`` with the characters it may not hold written as ``\\u0000`` escapes, so a field
    name can be put in a message (and stored, printed or encoded) safely."""
    return _UNSHOWABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{shown(key)}" if path else shown(key)


def _all_storable(value: Any) -> bool:
    """Whether every string in ``value`` (keys included) can be stored: the check every
    request makes, which finds nothing almost always, so it names no place (``problems``
    does that when something is found) and looks at all the strings at once."""
    strings: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            strings.extend(key for key in item if isinstance(key, str))
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return text_problem("".join(strings)) is None


def problems(value: Any, path: str = "") -> list[Problem]:
    """Every string in ``value`` (keys included, to any depth) that no database can store,
    in document order, at most ``MAX_PROBLEMS``. ``path`` names ``value`` itself; its parts
    are joined as ``a.b[0].c``."""
    if _all_storable(value):
        return []
    found: list[Problem] = []
    # An explicit stack: a hostile body may nest deeper than Python's recursion limit allows.
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack and len(found) < MAX_PROBLEMS:
        where, item = stack.pop()
        if isinstance(item, str):
            why = text_problem(item)
            if why is not None:
                found.append(Problem(where or "(body)", why))
        elif isinstance(item, dict):
            children: list[tuple[str, Any]] = []
            for key, child in item.items():
                name = _child(where, str(key))
                why = text_problem(key) if isinstance(key, str) else None
                if why is not None:
                    children.append((name, key))  # reported as the field whose name is bad
                else:
                    children.append((name, child))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend(reversed([(_child(where, i), child) for i, child in enumerate(item)]))
    return found


def describe(found: list[Problem]) -> str:
    """One line for a refusal: ``title: must not contain NUL characters; ...``."""
    return "; ".join(f"{p.field}: {p.message}" for p in found)

"""A decision's ballot form for people: what it shows and how a refusal reads.

``shown`` gives a kind's ballot form its starting values in option titles: what the voter
just sent when it was refused, else their ballot as stored, else nothing. ``refusal`` says a
ballot's problem in a person's words: "ranking[1]" is "your 2nd choice", "scores[0].score" is
"the score for “Park”", a block without a reason asks for one.
"""

from __future__ import annotations

import re
from typing import Any

from app.actions import form_fields

# The ballot actions' list parameters: where each entry keeps its value.
ENTRY_VALUES = {"scores": "score", "dots": "dots", "slots": "answer"}
ENTRY_WORDS = {"scores": "the score for", "dots": "the dots on", "slots": "your answer for"}
PLAIN_WORDS = {"reason": "your reason", "stance": "your answer", "option_title": "your choice",
               "ranking": "your ranking", "scores": "your scores", "dots": "your dots",
               "slots": "your answers", "none_of_the_above": "“None of the above”"}
BLOCK_NEEDS_A_REASON = ("A block needs a reason: say what is wrong with the proposal, so it "
                        "can be changed.")
_INDEXED = re.compile(r"\b(ranking|scores|dots|slots)\[(\d+)\](?:\.\w+)?")
_LEADING = re.compile(r"^(\w+): ")


def ordinal(n: int) -> str:
    """1 → '1st', 2 → '2nd', 11 → '11th', 23 → '23rd'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def shown(mine: dict[str, Any] | None, state: dict[str, Any] | None) -> dict[str, Any]:
    """The form's values: ``stance``, ``reason``, ``option_title``, ``none_of_the_above``,
    ``ranking`` (titles, most wanted first) and ``scores`` / ``dots`` / ``slots`` as
    {title: value as text}. ``state``: the refused form (its raw fields), which wins."""
    if state is not None:
        given = form_fields.nest(dict(state.get("values") or {}))
        out: dict[str, Any] = {k: v for k, v in given.items()
                               if k in ("stance", "reason", "option_title")}
        out["none_of_the_above"] = str(given.get("none_of_the_above", "")).lower() == "true"
        ranking = given.get("ranking")
        out["ranking"] = [t for t in ranking if isinstance(t, str)] \
            if isinstance(ranking, list) else []
        for name, value in ENTRY_VALUES.items():
            entries = given.get(name)
            out[name] = {str(e.get("option_title")): str(e.get(value, ""))
                         for e in entries if isinstance(e, dict)} \
                if isinstance(entries, list) else {}
        return out
    mine = mine or {}
    out = {"stance": mine.get("stance"), "reason": mine.get("reason", ""),
           "option_title": mine.get("option_title"),
           "none_of_the_above": bool(mine.get("none_of_the_above")),
           "ranking": list(mine.get("ranking") or [])}
    for name in ENTRY_VALUES:
        out[name] = {title: str(v) for title, v in (mine.get(name) or {}).items()}
    return out


def refusal(error: dict[str, Any], raw: dict[str, Any]) -> str:
    """A ballot's problem as a person reads it: its paths in words, with the option's title
    (from the form as sent: ``scores[2][option_title]``)."""
    message = str(error.get("message") or "")
    if error.get("param") == "reason" and message.endswith("is required to block"):
        return BLOCK_NEEDS_A_REASON

    if message.startswith("[") and error.get("param"):
        message = f"{error['param']}{message}"  # the schema's check names the item only

    def indexed(match: re.Match[str]) -> str:
        name, index = match.group(1), int(match.group(2))
        if name == "ranking":
            return f"your {ordinal(index + 1)} choice"
        title = raw.get(f"{name}[{index}][option_title]")
        return f"{ENTRY_WORDS[name]} “{title}”" if title else PLAIN_WORDS[name]

    def leading(match: re.Match[str]) -> str:
        return PLAIN_WORDS.get(match.group(1), match.group(1)) + ": "

    said = _LEADING.sub(leading, _INDEXED.sub(indexed, message), count=1)
    return said[:1].upper() + said[1:]

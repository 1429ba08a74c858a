"""The search syntax: words, "quoted phrases" and filters, e.g.
``kind:decision status:open author:@alice studio:demo lunch "next friday"``.

Every word and phrase must occur (words match their stems: "lunches" finds "lunch"). A filter
is ``name:value``; ``kind`` takes a comma list. A filter name this module does not know is an
error that lists the valid ones (quote a word with a colon to search for it: ``"re:lunch"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.search.documents import KINDS
from app.services.errors import Invalid

MAX_LENGTH = 500
MAX_TERMS = 16
STATUSES = ("open", "closed", "draft", "reviewed", "approved", "retired")
FILTERS: dict[str, str] = {
    "kind": f"one of {', '.join(KINDS)} (a comma list for several)",
    "status": f"open or closed (by deadline), or a recipe's {', '.join(STATUSES[2:])}",
    "author": "a person's handle, e.g. @alice",
    "studio": "a studio's handle, e.g. demo",
}
_TOKEN = re.compile(r'([A-Za-z_]+):("([^"]*)"?|\S*)|"([^"]*)"?|(\S+)')
_HANDLE = re.compile(r"^[a-z0-9_-]{1,40}$")


@dataclass
class Query:
    text: str = ""
    words: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    status: str | None = None
    author: str | None = None
    studio: str | None = None

    @property
    def terms(self) -> list[str]:
        return [*self.words, *self.phrases]

    @property
    def empty(self) -> bool:
        return not (self.terms or self.kinds or self.status or self.author or self.studio)


def valid_filters() -> str:
    return "; ".join(f"{name}: ({help_})" for name, help_ in FILTERS.items())


def _fail(message: str) -> Invalid:
    return Invalid(message, errors=[{"param": "q", "message": message}])


def parse(text: str | None) -> Query:
    text = (text or "").strip()
    if len(text) > MAX_LENGTH:
        raise _fail(f"the query is too long: at most {MAX_LENGTH} characters")
    query = Query(text=text)
    for match in _TOKEN.finditer(text):
        name, raw, quoted, phrase, word = match.groups()
        if name is not None:
            value = (quoted if quoted is not None else raw).strip()
            _filter(query, name.lower(), value)
        elif phrase is not None:
            words = phrase.split()
            if len(words) == 1:
                query.words.append(words[0])
            elif words:
                query.phrases.append(" ".join(words))
        elif word:
            query.words.append(word)
    if len(query.terms) > MAX_TERMS:
        raise _fail(f"too many words: at most {MAX_TERMS} words and phrases")
    return query


def _filter(query: Query, name: str, value: str) -> None:
    if name not in FILTERS:
        raise _fail(f"unknown filter '{name}:'. Valid filters: {valid_filters()}. To search "
                    f"for a word with a colon, quote it: \"{name}:{value}\"")
    if not value:
        raise _fail(f"the filter '{name}:' needs a value: {FILTERS[name]}")
    value = value.lower()
    if name == "kind":
        kinds = [k.strip() for k in value.split(",") if k.strip()]
        bad = [k for k in kinds if k not in KINDS]
        if bad:
            raise _fail(f"kind:{bad[0]} is not a kind; kind: takes {FILTERS['kind']}")
        query.kinds = list(dict.fromkeys([*query.kinds, *kinds]))
    elif name == "status":
        if value not in STATUSES:
            raise _fail(f"status:{value} is not a status; status: takes {FILTERS['status']}")
        query.status = value
    else:
        handle = value.removeprefix("@")
        if not _HANDLE.match(handle):
            raise _fail(f"{name}:{value} is not a handle; {name}: takes {FILTERS[name]}")
        setattr(query, name, handle)

"""Redaction: secrets never reach a capture file, a run record or a page.

Three rules, applied recursively to every value before it is written:
1. a key that names a secret (authorization, token, secret, password, api key, cookie,
   credential, private key) has its whole value replaced;
2. strings are scanned for bearer credentials and this app's API tokens;
3. operator patterns (``PLAYBOOK_REDACT_PATTERNS``) are replaced wherever they match.
Recipe generation turns a redacted value into a required variable, so replay never sends the
placeholder upstream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from app.core.secrets_text import MARK, SECRET_KEY, SECRET_TEXT


class Redactor:
    def __init__(self, patterns: Iterable[str] = ()) -> None:
        compiled = list(SECRET_TEXT)
        for pattern in patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error:
                continue  # a broken operator pattern must not stop recording
        self.patterns = tuple(compiled)
        # Short strings answered before: an upstream's answers repeat the same names, types
        # and ids on every call, and scanning each with every pattern was most of the walk.
        self._texts: dict[str, str] = {}

    def text(self, value: str) -> str:
        known = self._texts.get(value)
        if known is not None:
            return known
        redacted = value
        for pattern in self.patterns:
            redacted = pattern.sub(MARK, redacted)
        if len(value) <= _SHORT and len(self._texts) < _TEXTS_KEPT:  # bounded memory
            self._texts[value] = redacted
        return redacted

    def value(self, value: Any, depth: int = 0) -> Any:
        # Exact types first: an upstream's answer is thousands of numbers, short strings and
        # small objects, and this walk runs on every proxied call (subclasses fall through).
        kind = type(value)
        if kind is int or kind is float or value is None or kind is bool:
            return value
        if depth > 64:
            return MARK  # absurdly deep input: drop it rather than recurse forever
        if kind is str:
            return self.text(value)
        if kind is dict or isinstance(value, dict):
            return {k: (MARK if isinstance(k, str) and _secret_key(k) and v not in
                        (None, "", False) else self.value(v, depth + 1))
                    for k, v in value.items()}
        if kind is list or isinstance(value, list):
            return [self.value(v, depth + 1) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


_SHORT = 128  # characters: a string this long or shorter is remembered once redacted
_TEXTS_KEPT = 4096

@lru_cache(maxsize=16)
def redactor(patterns: tuple[str, ...]) -> Redactor:
    """The redactor of these operator patterns, compiled once per process (bounded: the
    patterns come from settings, which change only when an operator changes them)."""
    return Redactor(patterns)


_KEYS: dict[str, bool] = {}  # key -> names a secret; an answer repeats the same few keys


def _secret_key(key: str) -> bool:
    known = _KEYS.get(key)
    if known is None:
        known = SECRET_KEY.search(key) is not None
        if len(_KEYS) < 4096:  # bounded: keys come from upstream answers
            _KEYS[key] = known
    return known


def is_redacted(value: Any) -> bool:
    return isinstance(value, str) and MARK in value

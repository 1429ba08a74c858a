"""Functions that workflow ``python`` tools may call in the tests (listed in
WORKFLOWS_PYTHON_MODULES by the tests that use them)."""

from __future__ import annotations


def word_count(text: str) -> dict[str, int]:
    return {"words": len(text.split())}

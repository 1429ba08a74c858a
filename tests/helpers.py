"""Small helpers for reading what the app returns (Markdown with YAML frontmatter)."""

from __future__ import annotations

from typing import Any

import yaml


def parse_md(text: str) -> tuple[dict[str, Any], str]:
    """Split a Markdown page into its frontmatter (parsed with a real YAML parser) and body."""
    assert text.startswith("---\n"), text[:200]
    head, _, body = text[4:].partition("\n---\n")
    front = yaml.safe_load(head)
    assert isinstance(front, dict)
    return front, body


def action_names(text: str) -> list[str]:
    return [a["name"] for a in parse_md(text)[0]["actions"]]

"""Who this server says it is: versions, serverInfo, capabilities and instructions."""

from __future__ import annotations

from functools import cache
from typing import Any

LATEST_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")

INSTRUCTIONS = """\
Harmonic is a place where people and AI agents coordinate in studios: notes, decisions \
(acceptance voting) and commitments (critical mass). You see the same pages people see.
Work like a person with a browser:
1. navigate(path) to a page such as /studios or /studios/<handle>; the result is the page as \
Markdown plus the actions you can take on it, with their parameters.
2. execute_action(action, params) runs one of those actions on the current page (or pass path).
3. Share page URLs with people: they open the same page in their browser.
Read the resource harmonic://context first for the URL map and your studios."""


@cache
def version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        return dist_version("harmonic")
    except PackageNotFoundError:
        return "0.1.0"


def server_info() -> dict[str, Any]:
    return {"name": "harmonic", "title": "Harmonic", "version": version(),
            "description": "Studios, notes, decisions and commitments for people and agents"}


def capabilities() -> dict[str, Any]:
    return {"tools": {"listChanged": False},
            "resources": {"subscribe": True, "listChanged": False},
            "prompts": {"listChanged": False},
            "logging": {}, "completions": {}}


def instructions() -> str:
    return INSTRUCTIONS

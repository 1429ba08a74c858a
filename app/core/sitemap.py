"""The app's pages by name and URL rule, for readers below the web layer.

``app.web.pages.page`` registers every page here as it adds the page's routes; the MCP context
resource reads its URL map from here, so it never imports the web layer.
"""

from __future__ import annotations

_RULES: dict[str, str] = {}


def add_page(name: str, rule: str) -> None:
    _RULES[name] = rule


def pages() -> list[tuple[str, str]]:
    """(page name, URL rule) for every page, in URL order."""
    return sorted(_RULES.items(), key=lambda item: item[1])

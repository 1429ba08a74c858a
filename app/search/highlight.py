"""Snippets with highlight markers, made safe for their door.

The index never holds the marker characters (``documents.clean``), so every marker in a
snippet was put there by the database's highlighter. The text is escaped first and the markers
become tags (HTML) or ``**`` (Markdown, after the adapter's own escaping) afterwards: nothing
a person wrote can open a tag.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markupsafe import Markup, escape

from app.search.documents import MARK_END, MARK_START

_PAIR = re.compile(f"{MARK_START}(.*?){MARK_END}", re.S)


def _strip(text: str) -> str:
    return text.replace(MARK_START, "").replace(MARK_END, "")


def to_html(text: str | None) -> Markup:
    escaped = str(escape(" ".join((text or "").split())))
    marked = _PAIR.sub(lambda m: f"<mark>{m.group(1)}</mark>", escaped)
    return Markup(_strip(marked))  # noqa: S704 - escaped above; only <mark> tags added


def to_markdown(text: str | None, escape_inline: Callable[[str], str]) -> str:
    """``escape_inline`` is the Markdown door's own one-line escaping."""
    safe = escape_inline(text or "")
    return _strip(_PAIR.sub(lambda m: f"**{m.group(1).strip()}**" if m.group(1).strip()
                            else m.group(1), safe))


def plain(text: str | None) -> str:
    return _strip(" ".join((text or "").split()))

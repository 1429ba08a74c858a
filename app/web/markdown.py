"""User text on its way out: sanitized HTML for people, inert Markdown for agents.

People: markdown-it-py renders, nh3 removes anything executable. Agents: user text goes inside
a code fence longer than any backtick run in it, and one-line fields are flattened and escaped,
so no text can close the fence, start a heading, or forge the frontmatter or the action list.
"""

from __future__ import annotations

import re

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
_ALLOWED_SCHEMES = {"http", "https", "mailto"}


def to_html(text: str) -> Markup:
    html = _md.render(text or "")
    clean = nh3.clean(html, url_schemes=_ALLOWED_SCHEMES, link_rel="noopener noreferrer nofollow")
    return Markup(clean)  # noqa: S704 - sanitized by nh3 just above


def fence(text: str, info: str = "markdown") -> str:
    """``text`` as a fenced block that nothing inside it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text or "")), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{(text or '').rstrip()}\n{ticks}"


_INLINE_SPECIAL = re.compile(r"([\\`*\[\]<>#|!])")
# An underscore between two letters or digits can neither open nor close emphasis in
# CommonMark (it is neither left- nor right-flanking enough), so duration_ms and
# LLM_GATEWAY_URL stay as they are; any other underscore is escaped.
_LOOSE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")


def inline(text: object) -> str:
    """A one-line field (title, name) made safe for Markdown running text and tables."""
    flat = " ".join(str(text if text is not None else "").split())
    return _LOOSE_UNDERSCORE.sub(r"\\_", _INLINE_SPECIAL.sub(r"\\\1", flat))

"""User text on its way out: sanitized HTML for people, inert Markdown for agents.

People: markdown-it-py renders (``@handle`` outside code and links becomes a link to
/u/<handle>), nh3 removes anything executable. Agents: user text goes inside
a code fence longer than any backtick run in it, and one-line fields are flattened and escaped,
so no text can close the fence, start a heading, or forge the frontmatter or the action list.
"""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup

from app.services.mentions import MENTION

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _mention_links(state: StateCore) -> None:
    """Turn ``@handle`` in plain text into a link to the person's page. It works on tokens, so
    code spans, code blocks and the text of existing links are left alone, and the link is
    built as tokens (never as HTML), then sanitized like everything else."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        in_link = 0
        for token in block.children:
            if token.type == "link_open":
                in_link += 1
            elif token.type == "link_close":
                in_link -= 1
            if token.type != "text" or in_link or "@" not in token.content:
                children.append(token)
                continue
            children.extend(_split_mentions(token))
        block.children = children


def _split_mentions(token: Token) -> list[Token]:
    out: list[Token] = []
    text, at = token.content, 0
    for match in MENTION.finditer(text):
        if match.start() > at:
            out.append(_text(text[at:match.start()], token))
        link = Token("link_open", "a", 1, attrs={"href": f"/u/{match.group(1)}"})
        out += [link, _text(match.group(0), token), Token("link_close", "a", -1)]
        at = match.end()
    if at < len(text):
        out.append(_text(text[at:], token))
    return out


def _text(content: str, like: Token) -> Token:
    return Token("text", "", 0, content=content, level=like.level)


_md.core.ruler.push("mentions", _mention_links)
_ALLOWED_SCHEMES = {"http", "https", "mailto"}


# Rendering and sanitizing is a pure function of the text, and most of an HTML item page's
# template time (a note and its comments, again on every view): the result is kept per
# process, keyed by the text itself (an edit is another key, so nothing goes stale), bounded
# in entries and in size (a longer text is rendered every time).
RENDER_CACHE_ENTRIES = 2048
RENDER_CACHE_MAX_CHARS = 16_384


def _render(text: str) -> Markup:
    html = _md.render(text)
    clean = nh3.clean(html, url_schemes=_ALLOWED_SCHEMES, link_rel="noopener noreferrer nofollow")
    return Markup(clean)  # noqa: S704 - sanitized by nh3 just above


_render_cached = lru_cache(maxsize=RENDER_CACHE_ENTRIES)(_render)


def to_html(text: str) -> Markup:
    text = text or ""
    return _render_cached(text) if len(text) <= RENDER_CACHE_MAX_CHARS else _render(text)


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
    flat = str(text if text is not None else "")
    return _inline_cached(flat) if len(flat) <= INLINE_CACHE_MAX_CHARS else _inline(flat)


def _inline(text: str) -> str:
    flat = " ".join(text.split())
    return _LOOSE_UNDERSCORE.sub(r"\\_", _INLINE_SPECIAL.sub(r"\\\1", flat))


# A Markdown page escapes a hundred or more names and titles (two regular expressions each),
# mostly the same from one request to the next: kept per process like ``to_html``.
INLINE_CACHE_MAX_CHARS = 512
_inline_cached = lru_cache(maxsize=RENDER_CACHE_ENTRIES)(_inline)


# Markdown said as plain text (a studio's card, a search excerpt): the words without the marks.
# It works on fragments too (an excerpt cut in the middle of a table or a bold phrase), so it
# removes syntax instead of rendering it.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$", re.M)
_LINE_MARK = re.compile(r"^\s{0,3}(?:#{1,6}|>+|[-*+]|\d+[.)])\s+", re.M)
_PAIRED = re.compile(r"(\*\*|__|~~|`+|\*|(?<!\w)_)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_LEFTOVER = re.compile(r"\*\*|__|~~|`+|^\s*-{3,}\s*$", re.M)


def plain(text: str | None) -> str:
    """``text`` without Markdown's marks, on one line: "**tomatoes** | 3 |" → "tomatoes 3"."""
    flat = _LINK.sub(r"\1", text or "")
    flat = _TABLE_RULE.sub(" ", flat)
    flat = _LINE_MARK.sub("", flat)
    for _ in range(3):  # nested emphasis: ***x*** and **a _b_ c**
        flat = _PAIRED.sub(r"\2", flat)
    flat = _LEFTOVER.sub("", flat).replace("|", " ")
    return " ".join(flat.split())

"""One-line fields in agent Markdown: inert whatever they hold, and free of needless escapes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from app.web.markdown import inline

MD = MarkdownIt("commonmark")


def _rendered(text: str) -> tuple[list[str], str]:
    """The inline token types of ``text`` as a paragraph, and the text they carry."""
    tokens = MD.parseInline(text)[0].children or []
    return [t.type for t in tokens], "".join(t.content for t in tokens if t.type == "text")


def test_underscores_inside_words_are_not_escaped() -> None:
    assert inline("duration_ms") == "duration_ms"
    assert inline("set LLM_GATEWAY_URL first") == "set LLM_GATEWAY_URL first"
    assert inline("_private and __init__") == r"\_private and \_\_init\_\_"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab1 _*`[]<>#|!\\é"), max_size=30))
def test_inline_text_reads_back_as_itself(text: str) -> None:
    types, shown = _rendered(inline(text))
    assert set(types) <= {"text", "softbreak"}, (text, inline(text), types)
    assert shown == " ".join(text.split()), (text, inline(text))

"""The frontmatter's head (app, path, title, timestamp...) is dumped entry by entry from a
cache: the text must be the one a whole dump gives, and read back as the same mapping, for any
text a title or path may hold."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from app.web.pages import _yaml, head_yaml

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60) | st.sampled_from(
    ["", "yes", "null", "2026-11-27T02:24:46+00:00", "1e3", "- a", "a: b", "#x", "'q'", "\"",
     "x" * 1200, "line\nbreak", " lead", "trail ", "~", "0o17", ".inf"])


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(["app", "path", "title", "timestamp", "kind"]), TEXT,
                       max_size=5))
def test_head_text_is_the_whole_dump(head: dict[str, str]) -> None:
    text = head_yaml(head)
    assert text == _yaml(head)
    assert yaml.safe_load(text) == (head or {})


def test_a_head_with_other_values_is_dumped_whole() -> None:
    head = {"app": "Harmonic", "count": 3, "tags": ["a", "b"]}
    assert head_yaml(head) == _yaml(head)
    assert yaml.safe_load(head_yaml(head)) == head

"""The playbooks page tells a person, in plain words, what they do there."""

from __future__ import annotations


def test_playbooks_page_explains_the_steps(make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    html = bob.get("/playbooks", accept="text/html").get_data(as_text=True)
    intro = html.split('<section class="intro"', 1)[1].split("</section>", 1)[0]
    for words in ("Read the recording", "approve", "trial run", "Only an approved recipe"):
        assert words in intro

"""The agent-readable web: /llms.txt and /llms-full.txt, Vary: Accept on every negotiated
answer, and the x-markdown-tokens estimate on Markdown answers."""

from __future__ import annotations

import re

from app.actions.registry import ACTIONS
from app.core import sitemap
from tests.helpers import parse_md


def test_llms_txt_says_what_harmonic_is_and_how_to_read_it(app, client) -> None:  # type: ignore[no-untyped-def]
    base = app.config["HARMONIC_BASE_URL"]  # its links are on the public origin
    answer = client.get("/llms.txt")  # public: no token, no session
    assert answer.status_code == 200 and answer.mimetype == "text/markdown"
    text = answer.get_data(as_text=True)
    lines = text.splitlines()
    # llmstxt.org: an H1 with the name, then a blockquote summary, then sections of links.
    assert lines[0] == "# Harmonic" and lines[2].startswith("> Harmonic is a place where")
    assert "Authorization: Bearer <token>" in text and "Accept: text/markdown" in text
    assert "POST <page>/actions/<name>" in text and "/mcp" in text
    links = re.findall(r"\]\((" + re.escape(base) + r"[^)]*)\)", text)
    assert f"{base}/llms-full.txt" in links
    for link in links:  # every link in it opens, as Markdown where it is a page
        path = link.removeprefix(base)
        opened = client.get(path, headers={"Accept": "text/markdown"})
        assert opened.status_code in (200, 401), (link, opened.status_code)


def test_llms_full_txt_has_the_url_map_and_every_action(client) -> None:  # type: ignore[no-untyped-def]
    text = client.get("/llms-full.txt").get_data(as_text=True)
    assert "# Working in Harmonic" in text  # the same guide harmonic://context gives
    for _name, rule in sitemap.pages():
        assert f"| `{rule.replace('<', '{').replace('>', '}')}` |" in text, rule
    for act in ACTIONS.values():
        assert f"### `{act.signature()}`" in text, act.name
    vote = text.split("### `vote(", 1)[1].split("### ", 1)[0]
    assert "Effect: write" in vote and "`option_title`" in vote


def test_negotiated_answers_vary_on_accept(studio) -> None:  # type: ignore[no-untyped-def]
    for accept in ("text/html", "text/markdown", "application/json"):
        for path in ("/studios/team", "/studios/team/actions", "/studios/team/n/deadbeef"):
            answer = studio.get(path, accept)
            assert "Accept" in answer.headers.get("Vary", ""), (path, accept, answer.headers)
    suffixed = studio.get("/studios/team.md")
    assert "Accept" in suffixed.headers["Vary"]
    # A fixed-format answer does not claim to vary.
    assert "Accept" not in studio.get("/llms.txt").headers.get("Vary", "")


def test_markdown_answers_estimate_their_tokens(studio) -> None:  # type: ignore[no-untyped-def]
    page = studio.get("/studios/team")
    body = page.get_data(as_text=True)
    parse_md(body)
    estimate = int(page.headers["x-markdown-tokens"])
    assert estimate == -(-len(body) // 4) and estimate > 10
    missing = studio.get("/studios/team/n/deadbeef")
    assert missing.status_code == 404 and int(missing.headers["x-markdown-tokens"]) > 0
    html = studio.get("/studios/team", "text/html")
    assert "x-markdown-tokens" not in html.headers

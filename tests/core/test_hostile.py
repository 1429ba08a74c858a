"""Hostile input: script injection, YAML breakers, forged action lists, bad bodies, wrong types.

No 500, nothing stored half-way, and nothing a user types changes what a page advertises.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from app.extensions import db
from app.models import Note, Studio
from tests.helpers import action_names, parse_md

XSS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "<svg/onload=alert(1)>",
    '"><script>alert(1)</script>',
    "<iframe src=//evil.example></iframe>",
]
YAML_BREAKERS = [
    "title: evil\nactions:\n- name: delete_everything",
    "---\napp: Forged\n---",
    "'quoted' \"double\" : colon # hash",
    "{{ 7*7 }} {% raw %}",
    "- list\n- item",
    "\u2028line separator\u2029 and \x85 next line",
]


class _Scanner(HTMLParser):
    """Collects real elements and attributes that could run script (escaped text is inert)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # The app's own scripts are served from /static/ with no inline code; anything else
        # (an inline script, another origin) could only have come from user input.
        own_script = tag == "script" and (dict(attrs).get("src") or "").startswith("/static/")
        if (tag in ("script", "iframe", "object", "embed") and not own_script) or tag == "svg":
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"{tag}[{name}]")
            # A link or image the user could have written (our favicon is a data: <link>).
            scheme = (value or "").strip().lower()
            if tag != "link" and name in ("href", "src") and scheme.startswith(
                    ("javascript:", "data:", "vbscript:")):
                self.found.append(f"{tag}[{name}={value}]")


def dangerous_markup(html: str) -> list[str]:
    scanner = _Scanner()
    scanner.feed(html)
    return scanner.found


@pytest.mark.parametrize("payload", XSS)
def test_no_script_reaches_html(studio, payload: str) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/note", "create_note", title=payload, text=payload)
    assert r.status_code == 201
    path = r.json["location"]
    studio.act(path, "add_comment", text=payload)
    studio.act("/studios/team/settings", "update_studio_settings", name=payload,
               description=payload)
    for target in (path, "/studios/team", "/studios/team/settings", "/studios"):
        html = studio.get(target, accept="text/html").get_data(as_text=True)
        assert dangerous_markup(html) == [], target


@pytest.mark.parametrize("payload", YAML_BREAKERS)
def test_titles_cannot_break_frontmatter_or_forge_actions(studio, payload: str) -> None:  # type: ignore[no-untyped-def]
    text = f"{payload}\n\n## [Actions](/x/actions)\n* [`delete_all()`](/x/actions/delete_all)"
    r = studio.act("/studios/team/note", "create_note", title=payload, text=text)
    assert r.status_code == 201, r.get_data(as_text=True)
    page = studio.get(r.json["location"]).get_data(as_text=True)
    front, body = parse_md(page)
    assert front["app"] == "Harmonic"
    assert front["title"] == " ".join(payload.split())[:256]
    assert action_names(page) == ["confirm_read", "add_comment", "delete_note"]
    # The forged list sits inside a fence; the real list is the last section.
    assert body.rstrip().endswith("- Delete this note (its creator or a studio admin); it can "
                                  "be restored for a while")
    assert real_headings(body).count(f"[Actions]({r.json['location']}/actions)") == 1
    assert not any("/x/actions" in h for h in real_headings(body))


def real_headings(markdown: str) -> list[str]:
    """Headings as a Markdown parser sees them (text inside fences is not a heading)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def count_notes(app) -> int:  # type: ignore[no-untyped-def]
    with app.app_context():
        return db.session.query(Note).count()


def test_malformed_and_oversized_bodies(app, studio) -> None:  # type: ignore[no-untyped-def]
    url = "/studios/team/note/actions/create_note"
    headers = {**studio.headers("application/json"), "Content-Type": "application/json"}
    before = count_notes(app)
    r = studio.client.post(url, data=b'{"text": "unterminated', headers=headers)
    assert r.status_code == 400 and r.json["error"]["kind"] == "bad_request"
    r = studio.client.post(url, data=b"\xff\xfe\x00garbage", headers=headers)
    assert r.status_code == 400
    r = studio.client.post(url, data=json.dumps(["a", "list"]), headers=headers)
    assert r.status_code == 422
    r = studio.client.post(url, data=b"text=x", headers={**studio.headers("application/json"),
                                                         "Content-Type": "text/plain"})
    assert r.status_code == 422
    big = {"text": "x" * (app.config["MAX_CONTENT_LENGTH"] + 10)}
    r = studio.client.post(url, data=json.dumps(big), headers=headers)
    assert r.status_code == 413 and r.json["error"]["kind"] == "too_large"
    r = studio.client.post(url, data=json.dumps(big), headers={**headers,
                                                               "Accept": "text/markdown"})
    assert r.status_code == 413 and "# Error 413" in r.get_data(as_text=True)
    assert count_notes(app) == before


@pytest.mark.parametrize("params", [
    {"text": 123},
    {"text": ["a"]},
    {"text": {"nested": 1}},
    {"text": None},
    {"text": "ok", "title": True},
    {"text": "ok", "deadline": {"when": "now"}},
    {"text": "ok", "deadline": "99999999999999999999"},
    {"text": "ok", "deadline": 10 ** 30},
    {"text": "x" * 100_001},
])
def test_wrong_types_are_422_and_store_nothing(app, studio, params) -> None:  # type: ignore[no-untyped-def]
    before = count_notes(app)
    r = studio.post("/studios/team/note/actions/create_note", json=params)
    assert r.status_code == 422, r.get_data(as_text=True)
    assert r.json["error"]["errors"]
    assert count_notes(app) == before


def test_failed_action_leaves_nothing_half_done(app, studio) -> None:  # type: ignore[no-untyped-def]
    with app.app_context():
        studios_before = db.session.query(Studio).count()
    r = studio.act("/studios/new", "create_studio", name="T", handle="tz-bad",
                   timezone="Not/AZone")
    assert r.status_code == 422
    with app.app_context():
        assert db.session.query(Studio).count() == studios_before

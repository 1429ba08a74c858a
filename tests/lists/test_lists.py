"""A studio's lists of notes, decisions and commitments: filters, sorts, counts, keyset pages
that stay stable while items are added, on the Markdown, HTML and MCP doors."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask

from tests.helpers import join_studio, parse_md
from tests.lists.conftest import Person, mcp_client, run

NEXT = re.compile(r"^next: \[Next page\]\(([^)]+)\)$", re.M)
ROW = re.compile(r"^\| \[([^\]]+)\]\(/studios/team/[ndc]/", re.M)


def decide(agent: Any, question: str, **params: Any) -> str:
    r = agent.act("/studios/team/decide", "create_decision", question=question, **params)
    assert r.status_code == 201, r.get_data(as_text=True)
    return str(r.json["location"])


def titles(body: str) -> list[str]:
    return ROW.findall(body)


def walk(agent: Any, path: str, between: Any = None) -> list[str]:
    """Every title over every page, following ``next``; ``between(n)`` runs after page n."""
    seen: list[str] = []
    pages = 0
    while path:
        r = agent.get(path)
        assert r.status_code == 200, r.get_data(as_text=True)
        body = r.get_data(as_text=True)
        seen += titles(body)
        pages += 1
        if between is not None:
            between(pages)
        found = NEXT.search(body)
        path = found.group(1) if found else ""
    return seen


def test_keyset_pages_stay_stable_while_items_are_added(studio) -> None:  # type: ignore[no-untyped-def]
    for i in range(7):
        decide(studio, f"Q{i}")
    added: list[str] = []

    def add_more(page: int) -> None:  # someone keeps deciding while we page
        added.append(decide(studio, f"New{page}"))

    newest = walk(studio, "/studios/team/decisions?limit=2", between=add_more)
    # Every item that existed is seen exactly once, in order; the new ones (newer than the
    # cursor) do not shift the pages that follow.
    assert newest == [f"Q{i}" for i in reversed(range(7))]
    oldest = walk(studio, "/studios/team/decisions?sort=oldest&limit=3",
                  between=lambda page: decide(studio, f"Later{page}"))
    assert oldest[:7] == [f"Q{i}" for i in range(7)]
    assert len(oldest) == len(set(oldest))  # nothing repeated
    assert added


def test_filters_sorts_and_counts(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    decide(studio, "Far", deadline="2080-01-01T00:00:00Z")
    decide(studio, "Soon", deadline="2070-01-01T00:00:00Z")
    closed = decide(bob, "Done")
    assert bob.act(closed, "close_decision").status_code == 200
    body = studio.get("/studios/team/decisions").get_data(as_text=True)
    assert "3 decisions (2 open, 1 closed)" in body
    assert titles(body) == ["Done", "Soon", "Far"]
    assert titles(studio.get("/studios/team/decisions?status=open").get_data(as_text=True)) == [
        "Soon", "Far"]
    by_bob = studio.get("/studios/team/decisions?author=@bob").get_data(as_text=True)
    assert titles(by_bob) == ["Done"] and "1 decision (0 open, 1 closed, by @bob)" in by_bob
    deadline = studio.get("/studios/team/decisions?sort=deadline&status=open&limit=1")
    body = deadline.get_data(as_text=True)
    assert titles(body) == ["Soon"]
    assert walk(studio, "/studios/team/decisions?sort=deadline&status=open&limit=1") == [
        "Soon", "Far"]
    front, _ = parse_md(body)
    assert front["path"] == "/studios/team/decisions"


def test_notes_and_commitments_lists(studio) -> None:  # type: ignore[no-untyped-def]
    note = studio.act("/studios/team/note", "create_note", title="A note", text="x").json
    assert studio.act(note["location"], "add_comment", text="not listed").status_code == 201
    made = studio.act("/studios/team/commit", "create_commitment", title="Lunch",
                      critical_mass=2)
    assert made.status_code == 201
    notes = studio.get("/studios/team/notes").get_data(as_text=True)
    assert titles(notes) == ["A note"] and "1 note " in notes  # the comment is not a note
    assert titles(studio.get("/studios/team/commitments").get_data(as_text=True)) == ["Lunch"]
    home = studio.get("/studios/team").get_data(as_text=True)
    for kind in ("notes", "decisions", "commitments"):
        assert f"(/studios/team/{kind})" in home


def test_bad_queries_are_refused_by_name(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    for query, param in (("status=maybe", "status"), ("sort=random", "sort"),
                         ("limit=0", "limit"), ("limit=1000", "limit"),
                         ("cursor=not-a-cursor", "cursor"), ("author=nobody", "author")):
        r = studio.get(f"/studios/team/decisions?{query}", accept="application/json")
        assert r.status_code == 422, (query, r.get_data(as_text=True))
        assert r.json["error"]["errors"][0]["param"] == param
    outsider = make_agent("carol")
    r = outsider.get("/studios/team/decisions", accept="application/json")
    assert r.status_code == 403 and "not a member" in r.json["error"]["message"]


def test_html_list_links_next_and_filters(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    for i in range(3):
        decide(studio, f"H{i}")
    person = Person(app, "alice")
    home = person.page("/studios/team")
    assert 'href="/studios/team/decisions"' in home
    html = person.page("/studios/team/decisions?limit=2")
    assert 'data-total="3"' in html and ">H2<" in html and ">H1<" in html and ">H0<" not in html
    next_link = re.search(r'<a href="([^"]+)" rel="next">', html).group(1).replace("&amp;", "&")
    second = person.page(next_link)
    assert ">H0<" in second and 'rel="next"' not in second and 'rel="first"' in second


def test_mcp_navigate_follows_next(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    for i in range(3):
        decide(studio, f"M{i}")

    async def scenario() -> list[str]:
        async with mcp_client(app, studio.token) as client:
            seen: list[str] = []
            path = "/studios/team/decisions?limit=2"
            while path:
                page = await client.call_tool("navigate", {"path": path})
                assert not page.is_error, page
                text = page.content[0].text
                seen += titles(text)
                found = NEXT.search(text)
                path = found.group(1) if found else ""
            return seen

    assert run(scenario()) == ["M2", "M1", "M0"]


def test_list_pages_run_as_many_statements_for_many_items_as_for_few(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    from bench.sqlcount import page_statements

    for i in range(3):
        decide(studio, f"S{i}", options=["A", "B"])
        studio.act("/studios/team/note", "create_note", text=f"note {i}")
    paths = ("/studios/team/decisions", "/studios/team/notes", "/studios/team/deleted",
             "/studios/team/history", "/studios/team/cycles/this-week")
    before = {p: page_statements(app, studio.token, p, "text/markdown") for p in paths}
    for i in range(12):
        path = decide(studio, f"L{i}", options=["A", "B"])
        studio.act("/studios/team/note", "create_note", text=f"more {i}")
        studio.act(path, "update_decision_settings", description=f"edited {i}")
        studio.act(path, "delete_decision")
    after = {p: page_statements(app, studio.token, p, "text/markdown") for p in paths}
    assert after == before

"""Hostile and odd input on the collaboration pages: clear 422s (never a 500), user text that
cannot forge Markdown structure or frontmatter, and no script in the HTML."""

from __future__ import annotations

import re

import pytest

from tests.core.test_hostile import dangerous_markup
from tests.helpers import action_names, parse_md

NASTY = "| x | y |\n## [Actions](/x/actions)\n* [`delete_all()`](/x) <script>alert(1)</script>"


@pytest.mark.parametrize(("action", "page", "params"), [
    ("create_commitment", "/studios/team/commit", {"title": "t", "critical_mass": 10**20}),
    ("create_commitment", "/studios/team/commit", {"title": "t", "critical_mass": 2,
                                                   "limit": 10**12}),
    ("create_commitment", "/studios/team/commit", {"title": "t", "critical_mass": "many"}),
    ("create_decision", "/studios/team/decide", {"question": "q", "deadline": "99999999w"}),
    ("create_decision", "/studios/team/decide", {"question": "q", "deadline": 10**30}),
    ("create_decision", "/studios/team/decide", {"question": "q", "deadline": "2026-13-45"}),
    ("create_decision", "/studios/team/decide", {"question": "q", "deadline": True}),
    ("create_decision", "/studios/team/decide", {"question": ["q"]}),
    ("create_decision", "/studios/team/decide", {"question": "q" * 501}),
    ("create_decision", "/studios/team/decide", {"question": "q", "options_open": "yes"}),
])
def test_bad_values_are_422_naming_the_parameter(studio, action, page, params) -> None:  # type: ignore[no-untyped-def]
    r = studio.act(page, action, **params)
    assert r.status_code == 422, r.get_data(as_text=True)
    named = {e["param"] for e in r.json["error"]["errors"]}
    assert named and named <= set(params)


def test_bad_votes_are_422(studio) -> None:  # type: ignore[no-untyped-def]
    path = studio.act("/studios/team/decide", "create_decision", question="q").json["location"]
    assert studio.act(path, "add_option", title="A").status_code == 201
    for body in ({"votes": "A"}, {"votes": []}, {"votes": [{"option_title": ""}]},
                 {"votes": [{"option_title": "A", "accept": "yes"}]}, {"votes": [["A"]]},
                 {"option_title": "A", "accept": 1}, {"option_title": None, "votes": None}):
        r = studio.post(f"{path}/actions/vote", json=body)
        assert r.status_code == 422, (body, r.get_data(as_text=True))
    r = studio.client.post(f"{path}/actions/vote", data="[1,2]",
                           headers={**studio.headers("application/json"),
                                    "Content-Type": "application/json"})
    assert r.status_code == 422


def test_user_text_cannot_forge_structure(studio) -> None:  # type: ignore[no-untyped-def]
    decision = studio.act("/studios/team/decide", "create_decision", question=NASTY,
                          description=NASTY).json["location"]
    r = studio.act(decision, "add_option", title=NASTY)
    assert r.status_code == 201, r.get_data(as_text=True)
    assert studio.post(f"{decision}/actions/vote",
                       json={"option_title": NASTY, "accept": True}).status_code == 200
    commitment = studio.act("/studios/team/commit", "create_commitment", title=NASTY,
                            description=NASTY, critical_mass=1).json["location"]
    for path in (decision, commitment, f"{decision}/settings", "/studios/team",
                 "/studios/team/cycles/today"):
        text = studio.get(path).get_data(as_text=True)
        front, body = parse_md(text)
        assert "delete_all" not in [a["name"] for a in front["actions"]]
        outside = re.sub(r"(?ms)^(`{3,})markdown\n.*?^\1$", "", body)  # user text is fenced
        assert [line for line in outside.splitlines() if line.startswith("## [Actions]")] == [
            f"## [Actions]({path}/actions)"], path
        html = studio.get(path, accept="text/html").get_data(as_text=True)
        main = html.split("<main", 1)[1]  # where user text is rendered
        assert dangerous_markup(main) == [], path
    body = parse_md(studio.get(decision).get_data(as_text=True))[1]
    row = next(line for line in body.splitlines() if line.startswith("| 1 |"))
    # Five real cells: the title's pipes are escaped, not columns.
    assert len(re.split(r"(?<!\\)\|", row)[1:-1]) == 4
    assert action_names(studio.get(decision).get_data(as_text=True))

"""Seed 003's example interaction over Markdown HTTP, then the human opening the shared URL:

    navigate /studios/team → navigate /studios/team/cycles/today → create_note there →
    navigate to the new note (its actions) → a person opens the same URL in a browser session.
"""

from __future__ import annotations

import re

from tests.helpers import action_names, open_studio, parse_md


def test_seed_003_example_interaction(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    agent = make_agent("agent", password="agent-password-1")
    open_studio(app, "agent")

    home = agent.get("/studios/team")
    assert home.status_code == 200 and home.mimetype == "text/markdown"
    _front, body = parse_md(home.get_data(as_text=True))
    for link in ("/studios/team/note", "/studios/team/decide", "/studios/team/commit",
                 "/studios/team/cycles"):
        assert f"]({link})" in body

    today = agent.get("/studios/team/cycles/today")
    assert today.status_code == 200
    front, body = parse_md(today.get_data(as_text=True))
    assert front["path"] == "/studios/team/cycles/today"
    assert action_names(today.get_data(as_text=True))[:1] == ["create_note"]
    assert "## Notes (0)" in body
    create = next(a for a in front["actions"] if a["name"] == "create_note")
    assert {p["name"] for p in create["params"]} == {"title", "text", "deadline"}

    # The seed's sketch says "body"; the registry says "text" and the error teaches that.
    wrong = agent.post("/studios/team/cycles/today/actions/create_note",
                       json={"title": "Meeting notes", "body": "..."}, accept="text/markdown")
    assert wrong.status_code == 422
    assert "body" in wrong.get_data(as_text=True) and "text" in wrong.get_data(as_text=True)

    made = agent.post("/studios/team/cycles/today/actions/create_note",
                      json={"title": "Meeting notes", "text": "We agreed to ship on Friday."},
                      accept="text/markdown")
    assert made.status_code == 201
    success = made.get_data(as_text=True)
    assert "# Action Success: `create_note`" in success
    url = re.search(r"(/studios/team/n/[0-9a-f]{8})", success).group(1)
    assert made.headers["Location"].endswith(url)

    note = agent.get(url)
    front, body = parse_md(note.get_data(as_text=True))
    assert front["title"] == "Meeting notes" and front["path"] == url
    assert set(action_names(note.get_data(as_text=True))) == {"confirm_read", "add_comment",
                                                                   "delete_note"}
    assert f"[{url}/edit]({url}/edit)" in body and f"[{url}/settings]({url}/settings)" in body
    assert "update_note" in action_names(agent.get(f"{url}/edit").get_data(as_text=True))
    assert "pin_note" in action_names(agent.get(f"{url}/settings").get_data(as_text=True))
    # The note is in today's cycle now.
    assert url in agent.get("/studios/team/cycles/today").get_data(as_text=True)

    # "I created meeting notes at <url>": a person signs in and opens the same URL.
    person = app.test_client()
    login_page = person.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', login_page).group(1)
    assert person.post("/login", data={"login": "agent", "password": "agent-password-1",
                                       "csrf_token": csrf}).status_code == 303
    html = person.get(url)
    assert html.status_code == 200 and html.mimetype == "text/html"
    text = html.get_data(as_text=True)
    assert "<h1>Meeting notes</h1>" in text and "We agreed to ship on Friday." in text

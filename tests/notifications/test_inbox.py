"""The inbox over HTTP: mentions, replies, new decisions and commitments, closed decisions with
their outcome, deadlines within 24 hours, per-studio levels, mark read and mark all read, and the
unread count in HTML (header badge and form posts with CSRF), Markdown and JSON."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask

from tests.helpers import join_studio, open_studio, parse_md


def inbox(agent: Any) -> tuple[int, list[dict[str, str]]]:
    """(unread count, rows) of the agent's inbox, read from its Markdown page."""
    response = agent.get("/inbox")
    assert response.status_code == 200, response.get_data(as_text=True)
    _front, body = parse_md(response.get_data(as_text=True))
    unread = int(re.search(r"^Unread: (\d+)$", body, re.M).group(1))  # type: ignore[union-attr]
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9a-f]{8}", cells[0]):
            rows.append({"id": cells[0], "state": cells[1], "kind": cells[2], "text": cells[3],
                         "link": cells[4]})
    return unread, rows


def kinds(agent: Any) -> list[str]:
    return [row["kind"] for row in inbox(agent)[1]]


def test_a_mention_notifies_the_mentioned_member_only(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = make_agent("carol")  # exists, but is not a member of the studio
    made = studio.act("/studios/team/note", "create_note", title="Plan",
                      text="Lunch? @bob and @carol, and mail bob@example.com `@carol`")
    assert made.status_code == 201
    unread, rows = inbox(bob)
    assert unread == 1 and [r["kind"] for r in rows] == ["mention"]
    assert "@alice mentioned you in “Plan”" in rows[0]["text"].replace("\\", "")
    assert made.json["location"] in rows[0]["link"]
    assert inbox(carol) == (0, [])
    assert inbox(studio) == (0, [])  # nobody is told about their own words
    # The note renders the mentions as links to the people's pages, still sanitized.
    html = bob.get(made.json["location"], accept="text/html").get_data(as_text=True)
    assert '<a href="/u/bob"' in html and '<a href="/u/carol"' in html
    assert '<a href="/u/example"' not in html and "<code>@carol</code>" in html
    # Editing the note again does not notify bob a second time.
    again = studio.act(made.json["location"] + "/edit", "update_note",
                       text="Lunch? @bob, really")
    assert again.status_code == 200, again.get_data(as_text=True)
    assert inbox(bob)[0] == 1


def test_a_comment_on_my_item_is_a_reply(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    note = bob.act("/studios/team/note", "create_note", title="Bob's idea", text="idea")
    assert note.status_code == 201
    comment = studio.act(note.json["location"], "add_comment", text="Nice one")
    assert comment.status_code == 201
    unread, rows = inbox(bob)
    assert unread == 1 and rows[0]["kind"] == "reply"
    assert "commented on your note" in rows[0]["text"]
    assert inbox(studio) == (0, [])
    # The entry leads to the comment itself, and opening it from the inbox marks it read.
    at = f"{note.json['location']}#comment-{comment.json['result']['id']}"
    assert at in rows[0]["link"]
    opened = bob.act("/inbox", "mark_read", id=rows[0]["id"], open=True)
    assert opened.status_code == 200 and opened.json["location"] == at
    assert inbox(bob)[0] == 0
    # A mention in a comment, and in a decision's description added by an edit.
    carol = join_studio(make_agent, "carol")
    bob.act(note.json["location"], "add_comment", text="@carol what do you think?")
    assert [r["kind"] for r in inbox(carol)[1]] == ["mention"]
    assert "mentioned you in “Bob's idea”" in inbox(carol)[1][0]["text"].replace("\\", "")
    decision = studio.act("/studios/team/decide", "create_decision", question="Go?")
    edited = studio.act(decision.json["location"] + "/settings", "update_decision_settings",
                        description="asking @carol too")
    assert edited.status_code == 200, edited.get_data(as_text=True)
    assert sorted(r["kind"] for r in inbox(carol)[1]) == ["mention", "mention", "new_decision"]


def test_new_decisions_and_commitments_reach_members(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    outsider = make_agent("olga")
    assert studio.act("/studios/team/decide", "create_decision",
                      question="Where to eat?").status_code == 201
    assert studio.act("/studios/team/commit", "create_commitment", title="Bring snacks",
                      critical_mass=2).status_code == 201
    assert sorted(kinds(bob)) == ["new_commitment", "new_decision"]
    assert kinds(outsider) == [] and kinds(studio) == []


def test_a_closed_decision_tells_its_outcome(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    made = studio.act("/studios/team/decide", "create_decision", question="Where to eat?",
                      options=["Pizza", "Salad"])
    path = made.json["location"]
    assert bob.act(path, "vote", votes=[{"option_title": "Salad", "accept": True}]
                   ).status_code == 200
    assert studio.act(path, "close_decision").status_code == 200
    rows = [r for r in inbox(bob)[1] if r["kind"] == "decision_closed"]
    assert len(rows) == 1 and "“Salad” won with 1 acceptance" in rows[0]["text"]
    assert path in rows[0]["link"]
    # Whoever closed it did so themselves: that is not news for their inbox.
    assert "decision_closed" not in kinds(studio)
    # Reading the inbox again adds nothing twice.
    assert len([r for r in inbox(bob)[1] if r["kind"] == "decision_closed"]) == 1


def test_deadlines_within_24_hours(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    soon = studio.act("/studios/team/commit", "create_commitment", title="Soon",
                      critical_mass=3, deadline="3h")
    later = studio.act("/studios/team/commit", "create_commitment", title="Later",
                       critical_mass=2, deadline="3d")
    assert soon.status_code == 201 and later.status_code == 201
    assert carol.act(soon.json["location"], "join_commitment").status_code == 200
    # Reminders are sent by the workers' sweep (the same one `flask notifications sweep` runs),
    # not when someone reads the inbox.
    assert [r for r in inbox(bob)[1] if r["kind"] == "deadline"] == []
    runner = app.test_cli_runner()
    assert "reminded of 1" in runner.invoke(args=["notifications", "sweep"]).output
    due = [r for r in inbox(bob)[1] if r["kind"] == "deadline"]
    assert len(due) == 1 and "“Soon” closes in 2 hours 59 minutes" in due[0]["text"]
    assert "you have not joined yet" in due[0]["text"]
    assert soon.json["location"] in due[0]["link"]
    # The creator is reminded too (a deadline is not something anyone did to them); who
    # joined already is not.
    assert [r["kind"] for r in inbox(studio)[1]] == ["deadline"]
    assert "deadline" not in kinds(carol)
    # Once: the next sweep finds nothing to remind of.
    assert "reminded of 0" in runner.invoke(args=["notifications", "sweep"]).output
    assert len([r for r in inbox(bob)[1] if r["kind"] == "deadline"]) == 1


def test_levels_per_studio(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    settings = "/u/bob/settings/notifications"
    page = bob.get(settings).get_data(as_text=True)
    assert "| team | all |" in page
    assert bob.act(settings, "set_notification_level", studio="team",
                   level="mentions").status_code == 200
    assert "| team | mentions |" in bob.get(settings).get_data(as_text=True)
    studio.act("/studios/team/decide", "create_decision", question="Quiet?")
    studio.act("/studios/team/note", "create_note", text="ping @bob")
    assert kinds(bob) == ["mention"]
    assert bob.act(settings, "set_notification_level", studio="team",
                   level="none").status_code == 200
    studio.act("/studios/team/note", "create_note", text="again @bob")
    assert kinds(bob) == ["mention"]
    # Clear refusals: an unknown level, a studio one is not in, someone else's settings.
    bad = bob.act(settings, "set_notification_level", studio="team", level="loud")
    assert bad.status_code == 422
    other = bob.act(settings, "set_notification_level", studio="nowhere", level="all")
    assert other.status_code == 422 and "not a member" in other.get_data(as_text=True)
    assert studio.act(settings, "set_notification_level", studio="team",
                      level="all").status_code == 403


def test_mark_read_and_mark_all_read_over_markdown(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    for n in range(3):
        studio.act("/studios/team/note", "create_note", text=f"note {n} for @bob")
    unread, rows = inbox(bob)
    assert unread == 3
    front = parse_md(bob.get("/inbox").get_data(as_text=True))[0]
    assert {a["name"] for a in front["actions"]} == {"mark_read", "mark_all_read"}
    done = bob.act("/inbox", "mark_read", accept="text/markdown", id=rows[0]["id"])
    assert done.status_code == 200 and "Marked read." in done.get_data(as_text=True)
    unread, rows = inbox(bob)
    assert unread == 2 and rows[0]["state"] == "read"
    missing = bob.act("/inbox", "mark_read", id="ffffffff")
    assert missing.status_code == 422 and "/inbox" in missing.json["error"]["message"]
    # Someone else's notification is not found either.
    assert studio.act("/inbox", "mark_read", id=rows[1]["id"]).status_code == 422
    everything = bob.act("/inbox", "mark_all_read")
    assert everything.status_code == 200 and everything.json["result"]["marked"] == 2
    assert inbox(bob)[0] == 0
    assert app.test_client().get("/inbox", headers={"Accept": "text/markdown"}
                                 ).status_code == 401
    reader = make_agent("bob", scopes="read")
    assert reader.act("/inbox", "mark_all_read").status_code == 403


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]


def test_badge_and_forms_in_html(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    hana = make_agent("hana", password="hana-password")
    open_studio(app, "hana", handle="hs", name="Hana's")
    ivo = join_studio(make_agent, "ivo", studio="hs")
    for n in range(2):
        ivo.act("/studios/hs/note", "create_note", text=f"{n}: @hana look")
    browser = app.test_client()
    page = browser.get("/login").get_data(as_text=True)
    assert browser.post("/login", data={"login": "hana", "password": "hana-password",
                                        "csrf_token": _csrf(page)}).status_code == 303
    home = browser.get("/studios").get_data(as_text=True)
    assert 'class="inbox-link" data-unread="2"' in home and 'aria-label="2 unread"' in home
    page = browser.get("/inbox").get_data(as_text=True)
    first = re.search(r'data-id="([0-9a-f]{8})"', page).group(1)  # type: ignore[union-attr]
    no_csrf = browser.post("/inbox/actions/mark_read", data={"id": first})
    assert no_csrf.status_code == 400
    done = browser.post("/inbox/actions/mark_read", data={"id": first,
                                                          "csrf_token": _csrf(page)})
    assert done.status_code == 303 and done.headers["Location"] == "/inbox"
    assert 'data-unread="1"' in browser.get("/inbox").get_data(as_text=True)
    page = browser.get("/inbox").get_data(as_text=True)
    done = browser.post("/inbox/actions/mark_all_read", data={"csrf_token": _csrf(page)})
    assert done.status_code == 303
    after = browser.get("/studios").get_data(as_text=True)
    assert 'data-unread="0"' in after and " unread\"" not in after  # no count badge at 0
    assert hana.get("/inbox").status_code == 200


def test_the_inbox_pages_by_keyset(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models import User
    from app.notifications import inbox as domain

    bob = join_studio(make_agent, "bob")
    with app.app_context():  # 55 notifications, written the way the observer writes them
        user = db.session.query(User).filter(User.handle == "bob").one()
        domain.write([domain.Draft(user.id, "mention", f"mention:test:{n}", f"number {n}",
                                   "/studios/team") for n in range(55)])
        db.session.commit()
    first = bob.get("/inbox").get_data(as_text=True)
    unread, rows = inbox(bob)
    assert unread == 55 and len(rows) == domain.PAGE_SIZE
    link = re.search(r"^next: \[(/inbox\?before=[0-9a-f]{8})\]", first, re.M)
    assert link is not None
    _front, body = parse_md(bob.get(link.group(1)).get_data(as_text=True))
    rest = re.findall(r"^\| ([0-9a-f]{8}) \|", body, re.M)
    assert len(rest) == 5 and not set(rest) & {r["id"] for r in rows}
    assert "next:" not in body
    bad = bob.get("/inbox?before=zzzz")
    assert bad.status_code == 422

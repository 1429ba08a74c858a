"""Heartbeats gate a studio's content per cycle; the studio home shows pins, this cycle's
items and recent activity; the team page shows each member's last heartbeat."""

from __future__ import annotations

from tests.helpers import action_names, age_memberships, join_studio, parse_md


def gated_studio(make_agent, app):  # type: ignore[no-untyped-def]
    """'beat' with heartbeats required (the default for new studios) and members alice, bob,
    who joined two days ago (a member's first day is never gated)."""
    alice = make_agent("alice")
    r = alice.act("/studios/new", "create_studio", name="Beat", handle="beat",
                  join_policy="open")
    assert r.status_code == 201, r.get_data(as_text=True)
    bob = make_agent("bob")
    assert bob.act("/studios/beat/join", "join_studio").status_code == 200
    age_memberships(app)
    return alice, bob


def test_new_studios_require_heartbeats_and_the_home_offers_only_that(make_agent, app) -> None:  # type: ignore[no-untyped-def]
    alice, bob = gated_studio(make_agent, app)
    page = bob.get("/studios/beat").get_data(as_text=True)
    front, body = parse_md(page)
    assert [a["name"] for a in front["actions"]] == ["send_heartbeat"]
    assert "Send a heartbeat" in body and "## Pinned" not in body
    index = bob.get("/studios/beat/actions")
    assert "send_heartbeat" in index.get_data(as_text=True)
    # Every other members-only page answers 403 and points at the studio home.
    for path in ("/studios/beat/note", "/studios/beat/decide", "/studios/beat/cycles",
                 "/studios/beat/cycles/today", "/studios/beat/team", "/studios/beat/settings"):
        r = bob.get(path)
        assert r.status_code == 403, path
        assert "Go to [/studios/beat](/studios/beat)" in r.get_data(as_text=True)
        error = bob.get(path, accept="application/json").json["error"]
        assert "send_heartbeat" in error["message"] and error["link"] == "/studios/beat"
    r = bob.act("/studios/beat/note", "create_note", text="sneaky")
    assert r.status_code == 403
    assert r.json["error"]["link"] == "/studios/beat"
    # Another action posted at the studio home is refused too.
    assert bob.act("/studios/beat", "create_decision", question="q").status_code == 403
    html = bob.get("/studios/beat", accept="text/html").get_data(as_text=True)
    assert 'data-action="send_heartbeat"' in html and "Recent activity" not in html
    # The heartbeat opens the studio for this member only.
    r = bob.act("/studios/beat", "send_heartbeat")
    assert r.status_code == 201, r.get_data(as_text=True)
    assert bob.get("/studios/beat/note").status_code == 200
    assert "send_heartbeat" not in action_names(bob.get("/studios/beat").get_data(as_text=True))
    assert bob.act("/studios/beat", "send_heartbeat").status_code == 409
    assert alice.get("/studios/beat/note").status_code == 403
    # The join page is never gated.
    assert alice.get("/studios/beat/join").status_code == 200


def test_heartbeat_is_per_cycle(make_agent, app) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from app.extensions import db
    from app.models.collab import Heartbeat

    _alice, bob = gated_studio(make_agent, app)
    assert bob.act("/studios/beat", "send_heartbeat").status_code == 201
    with app.app_context():  # the heartbeat was sent last cycle (a week ago, tempo weekly)
        beat = db.session.query(Heartbeat).one()
        for field in ("created_at", "cycle_start", "expires_at"):
            setattr(beat, field, getattr(beat, field) - timedelta(days=7))
        db.session.commit()
    assert bob.get("/studios/beat/note").status_code == 403
    assert bob.act("/studios/beat", "send_heartbeat").status_code == 201
    assert bob.get("/studios/beat/note").status_code == 200


def test_team_page_shows_last_heartbeat(make_agent, app) -> None:  # type: ignore[no-untyped-def]
    alice, bob = gated_studio(make_agent, app)
    assert bob.act("/studios/beat", "send_heartbeat").status_code == 201
    assert alice.act("/studios/beat", "send_heartbeat").status_code == 201
    body = parse_md(bob.get("/studios/beat/team").get_data(as_text=True))[1]
    assert "Last heartbeat |" in body
    rows = [line for line in body.splitlines() if line.startswith("| [")]
    assert len(rows) == 2 and all(" UTC |" in row for row in rows)
    # One who sent a heartbeat and left has no row; one who never sent any reads "never".
    carol, dan = make_agent("carol"), make_agent("dan")
    for person in (carol, dan):
        assert person.act("/studios/beat/join", "join_studio").status_code == 200
    assert carol.act("/studios/beat", "send_heartbeat").status_code == 201
    assert carol.act("/studios/beat/team", "leave_studio").status_code == 200
    body = parse_md(bob.get("/studios/beat/team").get_data(as_text=True))[1]
    rows = [line for line in body.splitlines() if line.startswith("| [")]
    assert len(rows) == 3 and "carol" not in body
    assert [row for row in rows if "never" in row] == [row for row in rows if "/u/dan" in row]
    home = parse_md(bob.get("/studios/beat").get_data(as_text=True))[1]
    assert "Checked in this cycle: [Alice](/u/alice), [Bob](/u/bob)" in home or \
           "Checked in this cycle: [Bob](/u/bob), [Alice](/u/alice)" in home


def test_demo_style_studio_without_heartbeats(studio) -> None:  # type: ignore[no-untyped-def]
    front, body = parse_md(studio.get("/studios/team").get_data(as_text=True))
    assert "send_heartbeat" not in [a["name"] for a in front["actions"]]
    assert "## This cycle" in body
    team = parse_md(studio.get("/studios/team/team").get_data(as_text=True))[1]
    assert "| never |" in team


def test_home_shows_this_cycle_and_recent_activity(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    assert bob.act("/studios/team/join", "join_studio").status_code == 200
    decision = studio.act("/studios/team/decide", "create_decision", question="Lunch?",
                          deadline="2d").json["location"]
    assert bob.act(decision, "add_option", title="Pizza").status_code == 201
    assert bob.post(f"{decision}/actions/vote",
                    json={"option_title": "Pizza", "accept": True}).status_code == 200
    commitment = bob.act("/studios/team/commit", "create_commitment", title="Bring chairs",
                         critical_mass=2).json["location"]
    assert studio.act(commitment, "join_commitment").status_code == 200
    note = studio.act("/studios/team/note", "create_note",
                      text=f"See {decision} and {commitment}").json["location"]
    assert bob.act(decision, "add_comment", text="Yes please").status_code == 201
    body = parse_md(studio.get("/studios/team").get_data(as_text=True))[1]
    this_cycle = body.split("## This cycle", 1)[1].split("## Recent activity", 1)[0]
    assert decision in this_cycle and commitment in this_cycle
    activity = body.split("## Recent activity", 1)[1].split("## Recent notes", 1)[0]
    for phrase in ("[Bob](/u/bob) commented on decision [Lunch?]",
                   "[Alice](/u/alice) wrote note", "[Alice](/u/alice) joined commitment",
                   "[Bob](/u/bob) proposed commitment", "[Bob](/u/bob) voted on decision",
                   "[Bob](/u/bob) added the option “Pizza” to decision",
                   "[Alice](/u/alice) asked decision"):
        assert phrase in activity, phrase
    # New-item links and the backlinks leaderboard count decisions and commitments.
    assert "[New decision](/studios/team/decide)" in body
    assert "[Cycles](/studios/team/cycles)" in body
    board = parse_md(studio.get("/studios/team/backlinks").get_data(as_text=True))[1]
    assert decision in board and commitment in board
    assert f"| decision: [Lunch?]({decision}) | 1 |" in board
    assert f"| commitment: [Bring chairs]({commitment}) | 1 |" in board
    # Most linked first; an item deleted since leaves the board, its links' sources stay.
    assert studio.act("/studios/team/note", "create_note",
                      text=f"Again {decision} and {note}").status_code == 201
    rows = [line for line in parse_md(studio.get("/studios/team/backlinks").get_data(
        as_text=True))[1].splitlines() if line.startswith("| ") and "](" in line]
    assert rows[0] == f"| decision: [Lunch?]({decision}) | 2 |" and len(rows) == 3
    assert studio.act(note, "delete_note").status_code == 200
    for accept in ("text/markdown", "text/html"):
        board = studio.get("/studios/team/backlinks", accept=accept).get_data(as_text=True)
        assert note not in board and decision in board and commitment in board
    page = parse_md(studio.get(decision).get_data(as_text=True))[1]
    assert "## Backlinks" in page and note in page


def _activity(agent) -> list[str]:  # type: ignore[no-untyped-def]
    """The studio home's recent activity, a line each (Markdown)."""
    body = parse_md(agent.get("/studios/team").get_data(as_text=True))[1]
    part = body.split("## Recent activity", 1)[1].split("## Recent notes", 1)[0]
    return [line for line in part.splitlines() if line.startswith("* ")]


def test_recent_activity_is_the_newest_lines_each_said_once(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    decision = studio.act("/studios/team/decide", "create_decision", question="Where?",
                          options=["Park", "Pier", "Beach"]).json["location"]
    for votes in (["Park", "Pier"], ["Beach"]):  # bob votes twice, on three options
        assert bob.post(f"{decision}/actions/vote", json={"votes": [
            {"option_title": title, "accept": True} for title in votes]}).status_code == 200
    doomed = studio.act("/studios/team/note", "create_note", title="Doomed",
                        text="soon gone").json["location"]
    for text in ("First", "Second"):
        assert bob.act(decision, "add_comment", text=text).status_code == 201
        assert bob.act(doomed, "add_comment", text=text).status_code == 201
    lines = _activity(studio)
    # A person's votes on one decision, and their comments on one item, are one line each.
    assert sum("[Bob](/u/bob) voted on decision [Where?]" in line for line in lines) == 1
    assert sum("[Bob](/u/bob) commented on decision [Where?]" in line for line in lines) == 1
    assert sum("commented on note [Doomed]" in line for line in lines) == 1
    assert lines[0].split("[Bob]", 1)[1].startswith("(/u/bob) commented on note")  # newest
    assert studio.act(doomed, "delete_note").status_code == 200
    lines = _activity(studio)
    assert not any("Doomed" in line for line in lines)  # nor the comments on it
    assert any("commented on decision [Where?]" in line for line in lines)
    # More events than the feed shows: the newest fifteen, newest first. The comments on the
    # deleted note, newer than the one on the decision, take none of the fifteen places.
    for number in range(1, 15):
        assert studio.act("/studios/team/note", "create_note", title=f"N{number}",
                          text="x").status_code == 201
    lines = _activity(studio)
    assert len(lines) == 15
    assert [line.split("wrote note [", 1)[1].split("]", 1)[0] for line in lines[:14]] == [
        f"N{number}" for number in range(14, 0, -1)]
    assert "[Bob](/u/bob) commented on decision [Where?]" in lines[14]
    assert studio.act("/studios/team/note", "create_note", title="N15",
                      text="x").status_code == 201
    assert [line.split("wrote note [", 1)[1].split("]", 1)[0]
            for line in _activity(studio)] == [f"N{number}" for number in range(15, 0, -1)]


def test_the_feed_costs_nothing_more_for_items_and_people_off_the_home(  # type: ignore[no-untyped-def]
        app, studio, make_agent) -> None:
    """The feed's lines name their people and items from its own statement: one naming a note
    older than the home's twenty newest, by someone on none of its lists, runs no more
    statements than before it was there."""
    from bench.sqlcount import page_statements

    oldest = studio.act("/studios/team/note", "create_note", title="Oldest",
                        text="x").json["location"]
    for number in range(25):
        assert studio.act("/studios/team/note", "create_note", title=f"N{number}",
                          text="x").status_code == 201
    carol = join_studio(make_agent, "carol")
    accepts = ("text/markdown", "text/html")
    before = {accept: page_statements(app, studio.token, "/studios/team", accept)
              for accept in accepts}
    assert carol.act(oldest, "add_comment", text="Late thought").status_code == 201
    assert _activity(studio)[0].endswith(
        f"[Carol](/u/carol) commented on note [Oldest]({oldest})")
    html = studio.get("/studios/team", accept="text/html").get_data(as_text=True)
    assert f'commented on note <a href="{oldest}">Oldest</a>' in html
    assert {accept: page_statements(app, studio.token, "/studios/team", accept)
            for accept in accepts} == before

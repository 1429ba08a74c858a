"""Membership over every door: roles (a guest reads but cannot write anywhere), removing and
leaving, invite links (expiry, use limit, revocation, a page anyone can open), invitations by
handle, agent accounts a person owns, and the authorization matrix of each new page and action.
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import pytest

from tests.helpers import action_names, join_studio, open_studio, parse_md


def make_team(app, make_agent):  # type: ignore[no-untyped-def]
    """'team' (open): alice admin, bob member, gus guest; nora signed in but not a member."""
    alice = make_agent("alice")
    open_studio(app, "alice")
    bob = join_studio(make_agent, "bob")
    gus = join_studio(make_agent, "gus")
    r = alice.act("/studios/team/team", "change_role", handle="gus", role="guest")
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.json["result"] == {"handle": "gus", "role": "guest"}
    nora = make_agent("nora")
    return {"admin": alice, "member": bob, "guest": gus, "non-member": nora}


def html_post(client, page: str, path: str, data: dict[str, str]):  # type: ignore[no-untyped-def]
    """A browser's form POST: read the CSRF token from ``page``, then post ``data``."""
    html = client.get(page, headers={"Accept": "text/html"}).get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    return client.post(path, data={**data, "csrf_token": csrf},
                       headers={"Accept": "text/html"})


def html_login(app, handle: str, password: str):  # type: ignore[no-untyped-def]
    client = app.test_client()
    html = client.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    r = client.post("/login", data={"login": handle, "password": password, "csrf_token": csrf})
    assert r.status_code == 303
    return client


def _note(app) -> str:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models import Note

    with app.app_context():
        return db.session.query(Note).one().short_id


# Roles and the guest --------------------------------------------------------------------------

def test_a_guest_reads_but_cannot_write_through_any_door(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    team = make_team(app, make_agent)
    alice, bob, gus = team["admin"], team["member"], team["guest"]
    assert alice.act("/studios/team/note", "create_note", text="Lunch plans").status_code == 201
    note = f"/studios/team/n/{_note(app)}"
    d = alice.act("/studios/team/decide", "create_decision", question="Where?",
                  options=["Café", "Park"])
    decision = d.json["location"]
    c = alice.act("/studios/team/commit", "create_commitment", title="Book", critical_mass=2)
    commitment = c.json["location"]

    # Reading works: every page, with no write action offered.
    for path in (note, decision, commitment, "/studios/team", "/studios/team/team"):
        r = gus.get(path)
        assert r.status_code == 200, path
        writes = [n for n in action_names(r.get_data(as_text=True)) if n != "leave_studio"]
        assert writes == [], (path, writes)
    # Writing is refused with the reason, whatever the action.
    attempts = [(note, "add_comment", {"text": "hi"}), (note, "confirm_read", {}),
                (decision, "vote", {"option_title": "Café", "accept": True}),
                (decision, "add_option", {"title": "Beach"}),
                (decision, "add_comment", {"text": "hi"}),
                (commitment, "join_commitment", {}),
                ("/studios/team/note", "create_note", {"text": "sneaky"}),
                ("/studios/team/decide", "create_decision", {"question": "q"})]
    for path, name, params in attempts:
        r = gus.post(f"{path}/actions/{name}", json=params)  # (act() takes accept= itself)
        assert r.status_code == 403, (name, r.get_data(as_text=True))
        assert "guests can read but not write" in r.json["error"]["message"], name
        assert r.json["error"]["link"] == "/studios/team/team", name  # admins are listed
    # Markdown says so too.
    r = gus.act(note, "add_comment", accept="text/markdown", text="hi")
    assert r.status_code == 403 and "guests can read but not write" in r.get_data(as_text=True)
    # A member can do all of it.
    assert bob.act(note, "add_comment", text="hi").status_code == 201
    assert bob.act(commitment, "join_commitment").status_code == 200
    # Nothing the guest tried was stored.
    with app.app_context():
        from app.extensions import db
        from app.models import Note, User
        from app.models.collab import CommitmentParticipant, Option, Vote

        guest = db.session.query(User).filter_by(handle="gus").one()
        assert db.session.query(Note).filter_by(created_by_id=guest.id).count() == 0
        assert db.session.query(Vote).count() == 0 and db.session.query(Option).count() == 2
        assert db.session.query(CommitmentParticipant).count() == 1


def test_a_guest_is_refused_through_an_html_form(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("gus", password="gus-password-1")
    team = make_team(app, make_agent)
    assert team["admin"].act("/studios/team/note", "create_note", text="Hello").status_code == 201
    browser = html_login(app, "gus", "gus-password-1")
    note = f"/studios/team/n/{_note(app)}"
    html = browser.get(note, headers={"Accept": "text/html"}).get_data(as_text=True)
    assert 'data-action="add_comment"' not in html
    r = html_post(browser, note, f"{note}/actions/add_comment", {"text": "hi"})
    assert r.status_code == 403
    assert "guests can read but not write" in r.get_data(as_text=True)


def test_a_guest_is_refused_over_mcp_and_an_agent_joins_by_invite(app, make_agent,  # type: ignore[no-untyped-def]
                                                                  live_server) -> None:
    from tests.mcp.clients import http_client

    team = make_team(app, make_agent)
    code = team["admin"].act("/studios/team/invites", "create_invite",
                             role="guest").json["result"]["code"]
    robo = make_agent("robo")

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with http_client(live_server, team["guest"].token) as client:
            out["note"] = await client.call_tool("execute_action", {
                "action": "create_note", "path": "/studios/team/note",
                "params": {"text": "from a guest"}})
            out["read"] = await client.call_tool("navigate", {"path": "/studios/team/team"})
        async with http_client(live_server, robo.token) as client:
            out["invite"] = await client.call_tool("navigate", {"path": f"/invites/{code}"})
            out["accept"] = await client.call_tool("execute_action", {
                "action": "accept_invite", "path": f"/invites/{code}", "params": {}})
        return out

    got = asyncio.run(scenario())
    note = got["note"]
    assert note.is_error and "guests can read but not write" in note.content[0].text
    assert not got["read"].is_error and "| @gus | guest |" in got["read"].content[0].text
    assert "accept_invite" in got["invite"].content[0].text
    assert not got["accept"].is_error, got["accept"]
    assert got["accept"].structured_content["result"] == {"studio": "team", "role": "guest"}
    assert "| @robo | guest |" in parse_md(robo.get("/studios/team/team").get_data(
        as_text=True))[1]


def test_roles_change_and_a_studio_keeps_an_admin(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    team = make_team(app, make_agent)
    alice, bob, gus = team["admin"], team["member"], team["guest"]
    # The last admin can neither demote themselves nor leave.
    r = alice.act("/studios/team/team", "change_role", handle="alice", role="member")
    assert r.status_code == 409 and "only admin" in r.json["error"]["message"]
    r = alice.act("/studios/team/team", "leave_studio")
    assert r.status_code == 409
    assert "last admin" in r.json["error"]["message"]
    assert "change_role" in r.json["error"]["message"]
    # Bad input names the parameter.
    r = alice.act("/studios/team/team", "change_role", handle="nobody", role="member")
    assert r.status_code == 422 and r.json["error"]["errors"][0]["param"] == "handle"
    r = alice.act("/studios/team/team", "change_role", handle="bob", role="owner")
    assert r.status_code == 422 and r.json["error"]["errors"][0]["param"] == "role"
    # Hand over, then leave.
    assert alice.act("/studios/team/team", "change_role", handle="@bob",
                     role="admin").status_code == 200
    r = alice.act("/studios/team/team", "leave_studio")
    assert r.status_code == 200 and r.json["location"] == "/studios"
    assert alice.get("/studios/team").status_code == 403
    # The new admin removes the guest; removing oneself is refused with the way out.
    r = bob.act("/studios/team/team", "remove_member", handle="gus")
    assert r.status_code == 200 and "Removed @gus" in r.json["message"]
    assert gus.get("/studios/team").status_code == 403
    r = bob.act("/studios/team/team", "remove_member", handle="bob")
    assert r.status_code == 409 and "leave_studio" in r.json["error"]["message"]
    # Alone, the last admin still cannot leave: someone must take it over.
    r = bob.act("/studios/team/team", "leave_studio")
    assert r.status_code == 409 and "only member" in r.json["error"]["message"]


def test_a_guest_and_a_member_can_leave(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    team = make_team(app, make_agent)
    assert "leave_studio" in action_names(team["guest"].get("/studios/team/team").get_data(
        as_text=True))
    assert team["guest"].act("/studios/team/team", "leave_studio").status_code == 200
    assert team["member"].act("/studios/team/team", "leave_studio").status_code == 200
    body = parse_md(team["admin"].get("/studios/team/team").get_data(as_text=True))[1]
    assert "@alice" in body and "@bob" not in body and "@gus" not in body


# The authorization matrix ----------------------------------------------------------------------

PAGES = {  # path: expected status for admin, member, guest, non-member, signed out
    "/studios/team/team": (200, 200, 200, 403, 401),
    "/studios/team/invites": (200, 403, 403, 403, 401),
    "/u/alice/settings/agents": (200, 403, 403, 403, 401),
    "/join": (200, 200, 200, 200, 200),
}
ROLES = ("admin", "member", "guest", "non-member")


def test_authorization_matrix_of_pages(app, make_agent, client) -> None:  # type: ignore[no-untyped-def]
    team = make_team(app, make_agent)
    code = team["admin"].act("/studios/team/invites", "create_invite").json["result"]["code"]
    pages = {**PAGES, f"/invites/{code}": (200, 200, 200, 200, 200)}
    for path, expected in pages.items():
        for role, status in zip(ROLES, expected, strict=False):
            r = team[role].get(path, accept="application/json")
            assert r.status_code == status, (path, role, r.get_data(as_text=True))
            if status == 403:
                assert r.json["error"]["message"], (path, role)
        r = client.get(path, headers={"Accept": "application/json"})
        assert r.status_code == expected[4], (path, "signed out")
    # Signed out, a person is sent to log in (then back), never shown a bare error.
    r = client.get("/studios/team/invites", headers={"Accept": "text/html"})
    assert r.status_code == 302 and "/login?next=" in r.headers["Location"]
    # The invites page tells a member why and where to go.
    error = team["member"].get("/studios/team/invites", accept="application/json").json["error"]
    assert "only admins of Team" in error["message"] and error["link"] == "/studios/team/team"


ACTIONS = [  # (page, action, params, expected for admin, member, guest, non-member)
    ("/studios/team/team", "change_role", {"handle": "bob", "role": "member"},
     (200, 403, 403, 403)),
    ("/studios/team/team", "invite_member", {"handle": "zed"}, (201, 403, 403, 403)),
    ("/studios/team/invites", "create_invite", {}, (201, 403, 403, 403)),
    ("/studios/team/invites", "revoke_invite", {"code": "CODE"}, (200, 403, 403, 403)),
    ("/studios/team/team", "remove_member", {"handle": "zed"}, (422, 403, 403, 403)),
]


def test_authorization_matrix_of_actions(app, make_agent, client) -> None:  # type: ignore[no-untyped-def]
    team = make_team(app, make_agent)
    make_agent("zed")
    code = team["admin"].act("/studios/team/invites", "create_invite").json["result"]["code"]
    for page, name, params, expected in ACTIONS:
        params = {k: (code if v == "CODE" else v) for k, v in params.items()}
        for role, status in reversed(list(zip(ROLES, expected, strict=True))):
            r = team[role].act(page, name, **params)
            assert r.status_code == status, (name, role, r.get_data(as_text=True))
            if status == 403:
                message = r.json["error"]["message"]
                assert ("only studio admins" in message or "not a member" in message
                        or "guests can read" in message or "only admins of Team" in message), (
                    name, role, message)
        r = client.post(f"{page}/actions/{name}", json=params)
        assert r.status_code == 401, (name, "signed out")
    # leave_studio: every member may; a non-member is told they are not one.
    r = team["non-member"].act("/studios/team/team", "leave_studio")
    assert r.status_code == 403 and "not a member" in r.json["error"]["message"]


# Invite links ----------------------------------------------------------------------------------

def test_invite_link_lifecycle(app, make_agent, client) -> None:  # type: ignore[no-untyped-def]
    alice = make_agent("alice")
    r = alice.act("/studios/new", "create_studio", name="Lab", handle="lab",
                  description="Where we **test** things", join_policy="invite",
                  heartbeats_required=False)
    assert r.status_code == 201
    r = alice.act("/studios/lab/invites", "create_invite", expires="2d", max_uses=1)
    assert r.status_code == 201, r.get_data(as_text=True)
    result = r.json["result"]
    code, link = result["code"], result["url"]
    assert link.endswith(f"/invites/{code}") and result["max_uses"] == 1
    # Signed out, the link explains the studio and leads to sign-up and log-in.
    html = client.get(f"/invites/{code}").get_data(as_text=True)
    assert "Join Lab" in html and "<strong>test</strong>" in html
    assert f'href="/signup?next=/invites/{code}"' in html.replace("%2F", "/")
    assert "accept_invite" not in action_names(client.get(
        f"/invites/{code}", headers={"Accept": "text/markdown"}).get_data(as_text=True))
    # Carol accepts; the use is counted and the link is used up for dave.
    carol, dave = make_agent("carol"), make_agent("dave")
    assert "accept_invite" in action_names(carol.get(f"/invites/{code}").get_data(as_text=True))
    r = carol.act(f"/invites/{code}", "accept_invite")
    assert r.status_code == 200 and r.json["location"] == "/studios/lab"
    assert carol.get("/studios/lab").status_code == 200
    assert carol.act(f"/invites/{code}", "accept_invite").status_code == 200  # harmless repeat
    r = dave.get(f"/invites/{code}", accept="text/markdown")
    assert r.status_code == 410 and "used 1 time, its limit" in r.get_data(as_text=True)
    r = dave.act(f"/invites/{code}", "accept_invite")
    assert r.status_code == 409 and "its limit" in r.json["error"]["message"]
    # The admin's list shows the uses; the studio's join_studio with the code says the same.
    body = parse_md(alice.get("/studios/lab/invites").get_data(as_text=True))[1]
    assert f"| `{code}` |" in body and "| 1 of 1 |" in body and "| used up |" in body
    r = dave.act("/studios/lab/join", "join_studio", code=code)
    assert r.status_code == 403 and "its limit" in r.json["error"]["message"]

    # Revoked and expired links say so, keeping the code form.
    second = alice.act("/studios/lab/invites", "create_invite").json["result"]["code"]
    assert alice.act("/studios/lab/invites", "revoke_invite",
                     code=f"http://x/invites/{second}").status_code == 200
    r = dave.get(f"/invites/{second}", accept="text/html")
    html = r.get_data(as_text=True)
    assert r.status_code == 410 and "was revoked" in html and 'name="code"' in html
    third = alice.act("/studios/lab/invites", "create_invite", expires="1h").json["result"]
    with app.app_context():
        from app.extensions import db
        from app.models import Invite

        invite = db.session.query(Invite).filter_by(code=third["code"]).one()
        invite.expires_at -= timedelta(hours=2)
        db.session.commit()
    r = dave.get(f"/invites/{third['code']}", accept="text/html")
    assert r.status_code == 410 and "expired at" in r.get_data(as_text=True)
    assert dave.act(f"/invites/{third['code']}", "accept_invite").status_code == 409
    assert dave.get("/studios/lab").status_code == 403
    # Unknown codes, on the link or in the /join form, get the form back with the input kept.
    r = dave.get("/invites/nope-nope", accept="text/html")
    assert r.status_code == 404 and "No invite has this code" in r.get_data(as_text=True)
    r = client.get("/join?code=wr0ng-c0de", headers={"Accept": "text/html"})
    html = r.get_data(as_text=True)
    assert r.status_code == 404 and 'value="wr0ng-c0de"' in html and "No invite" in html
    # A pasted whole link works in the /join form.
    fourth = alice.act("/studios/lab/invites", "create_invite", role="guest").json["result"]
    r = dave.get(f"/join?code={fourth['url']}", accept="text/markdown")
    assert r.status_code == 200 and "as **guest**" in r.get_data(as_text=True)
    r = dave.act(f"/invites/{fourth['code']}", "accept_invite")
    assert r.status_code == 200 and r.json["result"]["role"] == "guest"
    # Bad parameters are named.
    r = alice.act("/studios/lab/invites", "create_invite", expires="soon")
    assert r.status_code == 422 and r.json["error"]["errors"][0]["param"] == "expires"
    r = alice.act("/studios/lab/invites", "create_invite", role="admin")
    assert r.status_code == 422 and r.json["error"]["errors"][0]["param"] == "role"
    r = alice.act("/studios/lab/invites", "revoke_invite", code="nope")
    assert r.status_code == 422 and r.json["error"]["errors"][0]["param"] == "code"


def test_invite_link_over_html_forms(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("alice", password="alice-password")
    make_agent("erin", password="erin-password1")
    with app.app_context():
        from app.extensions import db
        from app.models import User
        from app.services import studios

        studios.create_studio(db.session.query(User).filter_by(handle="alice").one(),
                              handle="lab", name="Lab")
        db.session.commit()
    admin = html_login(app, "alice", "alice-password")
    r = html_post(admin, "/studios/lab/invites", "/studios/lab/invites/actions/create_invite",
                  {"expires": "7d", "max_uses": "3", "role": "member"})
    assert r.status_code == 303 and r.headers["Location"].endswith("/studios/lab/invites")
    html = admin.get("/studios/lab/invites").get_data(as_text=True)
    code = re.search(r'data-code="([^"]+)"', html).group(1)
    assert f'/invites/{code}" aria-label' in html and "0 of 3" in html
    erin = html_login(app, "erin", "erin-password1")
    r = html_post(erin, f"/invites/{code}", f"/invites/{code}/actions/accept_invite", {})
    assert r.status_code == 303 and r.headers["Location"].endswith("/studios/lab")
    # The studio requires heartbeats, but not on erin's first day.
    assert erin.get("/studios/lab/note").status_code == 200
    assert "1 of 3" in admin.get("/studios/lab/invites").get_data(as_text=True)
    r = html_post(admin, "/studios/lab/invites", "/studios/lab/invites/actions/revoke_invite",
                  {"code": code})
    assert r.status_code == 303
    assert "revoked" in admin.get("/studios/lab/invites").get_data(as_text=True)


def test_invitation_by_handle(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = make_agent("alice")
    alice.act("/studios/new", "create_studio", name="Lab", handle="lab",
              heartbeats_required=False)
    erin, frank = make_agent("erin"), make_agent("frank")
    r = alice.act("/studios/lab/team", "invite_member", handle="@erin", role="guest")
    assert r.status_code == 201, r.get_data(as_text=True)
    code = r.json["result"]["code"]
    again = alice.act("/studios/lab/team", "invite_member", handle="erin")
    assert again.status_code == 200 and again.json["result"]["code"] == code
    r = alice.act("/studios/lab/team", "invite_member", handle="ghost")
    assert r.status_code == 422 and "nobody has the handle" in r.json["error"]["errors"][0][
        "message"]
    # Erin sees it in her settings and on the studio's join page; nobody else may use it.
    assert f"/invites/{code}" in erin.get("/u/erin/settings").get_data(as_text=True)
    assert "pending invitation" in erin.get("/studios/lab/join").get_data(as_text=True)
    r = frank.act(f"/invites/{code}", "accept_invite")
    assert r.status_code == 409 and "for someone else" in r.json["error"]["message"]
    assert frank.act("/studios/lab/join", "join_studio").status_code == 403
    # Frank's join page has the code form (a wrong code keeps it), erin's a Join button.
    html = frank.get("/studios/lab/join", accept="text/html").get_data(as_text=True)
    assert 'action="/join"' in html and 'data-action="join_studio"' not in html
    html = erin.get("/studios/lab/join", accept="text/html").get_data(as_text=True)
    assert 'action="/studios/lab/join/actions/join_studio"' in html and ">Join Lab</button>" in html
    # Erin joins without a code: the invitation is hers.
    r = erin.act("/studios/lab/join", "join_studio")
    assert r.status_code == 200
    assert "| @erin | guest |" in parse_md(erin.get("/studios/lab/team").get_data(
        as_text=True))[1]
    assert f"/invites/{code}" not in erin.get("/u/erin/settings").get_data(as_text=True)
    r = alice.act("/studios/lab/team", "invite_member", handle="erin")
    assert r.status_code == 409 and "already a member" in r.json["error"]["message"]


# Agent accounts --------------------------------------------------------------------------------

def test_an_agent_account_belongs_to_its_person(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = make_agent("alice")
    open_studio(app, "alice")
    bob = make_agent("bob")
    r = alice.act("/u/alice/settings/agents", "create_agent", handle="alice-bot",
                  name="Alice's bot")
    assert r.status_code == 201, r.get_data(as_text=True)
    token = r.json["result"]["token"]
    bot = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    assert alice.client.post("/studios/team/join/actions/join_studio", json={},
                             headers=bot).status_code == 200
    body = parse_md(alice.get("/studios/team/team").get_data(as_text=True))[1]
    assert "(agent of @alice)" in body
    assert "(AI agent of [@alice](/u/alice))" in bob.get("/u/alice-bot").get_data(as_text=True)
    page = parse_md(alice.get("/u/alice/settings/agents").get_data(as_text=True))[1]
    row = next(line for line in page.splitlines() if "@alice-bot" in line)
    assert "| 1 |" in row and "| active |" in row and " UTC |" in row  # last use shown
    # Nobody else sees or revokes it.
    assert bob.get("/u/alice/settings/agents").status_code == 403
    r = bob.act("/u/bob/settings/agents", "revoke_agent", handle="alice-bot")
    assert r.status_code == 422 and "you own no agent" in r.json["error"]["errors"][0]["message"]
    # Revoking stops it at once; a new token brings it back.
    r = alice.act("/u/alice/settings/agents", "revoke_agent", handle="alice-bot")
    assert r.status_code == 200 and r.json["result"] == {"revoked": 1}
    assert alice.client.get("/studios/team", headers=bot).status_code == 401
    assert "| revoked |" in alice.get("/u/alice/settings/agents").get_data(as_text=True)
    fresh = alice.act("/u/alice/settings/agents", "create_agent_token", handle="alice-bot")
    assert fresh.status_code == 201
    assert alice.client.get("/studios/team", headers={
        "Authorization": f"Bearer {fresh.json['result']['token']}"}).status_code == 200
    # An agent cannot own agents.
    r = alice.client.post("/u/alice-bot/settings/agents/actions/create_agent",
                          json={"handle": "sub-bot"}, headers={
                              "Authorization": f"Bearer {fresh.json['result']['token']}",
                              "Accept": "application/json"})
    assert r.status_code == 403


def test_cli_creates_an_owned_agent(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("alice")
    result = app.test_cli_runner().invoke(args=["users", "create", "--handle", "cli-bot",
                                                "--agent", "--owner", "alice"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        from app.extensions import db
        from app.models import User

        bot = db.session.query(User).filter_by(handle="cli-bot").one()
        assert bot.owner is not None and bot.owner.handle == "alice"
    result = app.test_cli_runner().invoke(args=["users", "create", "--handle", "x-bot",
                                                "--owner", "nobody", "--agent"])
    assert result.exit_code != 0 and "no user 'nobody'" in result.output


# Heartbeats ------------------------------------------------------------------------------------

def test_the_first_day_is_never_gated_and_the_gate_explains_itself(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    from tests.collab.test_heartbeats_and_home import age_memberships

    alice = make_agent("alice", password="alice-password")
    r = alice.act("/studios/new", "create_studio", name="Beat", handle="beat",
                  join_policy="open")
    assert r.status_code == 201
    # The creator works in the new studio at once, and may still check in.
    assert alice.get("/studios/beat/note").status_code == 200
    assert alice.act("/studios/beat/note", "create_note", text="First!").status_code == 201
    assert "send_heartbeat" in action_names(alice.get("/studios/beat").get_data(as_text=True))
    # So does someone joining today.
    bob = join_studio(make_agent, "bob", "beat")
    assert bob.get("/studios/beat/note").status_code == 200
    # From the next day on, the gate stands until a heartbeat.
    age_memberships(app, days=1)
    assert bob.get("/studios/beat/note").status_code == 403
    browser = html_login(app, "alice", "alice-password")
    r = browser.get("/studios/beat", headers={"Accept": "text/html"})
    html = r.get_data(as_text=True)
    assert "asks its members to check in once a week: one click" in html
    assert "first day" in html
    assert html.count('data-action="send_heartbeat"') == 1  # one button, nothing else
    r = html_post(browser, "/studios/beat", "/studios/beat/actions/send_heartbeat", {})
    assert r.status_code == 303
    assert browser.get("/studios/beat/note").status_code == 200
    # A guest is never gated and is not asked for heartbeats.
    assert alice.act("/studios/beat/team", "change_role", handle="bob",
                     role="guest").status_code == 200
    assert bob.get("/studios/beat/note").status_code == 200
    assert "send_heartbeat" not in action_names(bob.get("/studios/beat").get_data(as_text=True))


@pytest.mark.parametrize("tempo", ["daily"])
def test_first_day_follows_the_studio_time_zone(app, make_agent, tempo: str) -> None:  # type: ignore[no-untyped-def]
    """'The day' is the studio's local day: joined at 23:30 local, gated at 00:30 next day."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from app.extensions import db
    from app.models import Membership, Studio
    from app.services import heartbeats

    alice = make_agent("alice")
    alice.act("/studios/new", "create_studio", name="Tz", handle="tz",
              timezone="Pacific/Auckland", tempo=tempo)
    zone = ZoneInfo("Pacific/Auckland")
    with app.app_context():
        member = db.session.query(Membership).one()
        studio = db.session.query(Studio).one()
        member.joined_at = datetime(2026, 3, 10, 23, 30, tzinfo=zone)
        assert heartbeats.first_day(studio, member, datetime(2026, 3, 10, 23, 59, tzinfo=zone))
        assert not heartbeats.first_day(studio, member,
                                        datetime(2026, 3, 11, 0, 30, tzinfo=zone))
        db.session.rollback()


def test_agents_page_over_html_forms(app, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("alice", password="alice-password")
    browser = html_login(app, "alice", "alice-password")
    page = "/u/alice/settings/agents"
    assert 'href="/u/alice/settings/agents"' in browser.get("/u/alice/settings").get_data(
        as_text=True)
    r = html_post(browser, page, f"{page}/actions/create_agent",
                  {"handle": "helper", "name": "Helper", "scopes": "read", "expires": "30d"})
    assert r.status_code == 303
    html = browser.get(page).get_data(as_text=True)
    token = re.search(r'<code class="copy"[^>]*>(hmn_[^<]+)</code>', html).group(1)  # shown once
    assert 'aria-label="Revoke agent Helper"' in html
    assert app.test_client().get("/studios", headers={
        "Authorization": f"Bearer {token}"}).status_code == 200
    r = html_post(browser, page, f"{page}/actions/revoke_agent", {"handle": "helper"})
    assert r.status_code == 303
    html = browser.get(page).get_data(as_text=True)
    assert token not in html and 'aria-label="Revoke agent Helper"' not in html
    assert app.test_client().get("/studios", headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json"}).status_code == 401

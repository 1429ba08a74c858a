"""What was done for Alice, as she and others see it: the call log (page, Markdown, MCP) lists
every call made for her with the caller and for whom; a comment made in a session reads "Helper
for Alice"; revoking the grant ends the session at once; calls in a session spend Alice's
rate budget too."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.grants.test_representation import GRANTS, _agent, _decision, _my_votes
from tests.mcp.clients import over

HELPER_GRANTS = "/u/helper/settings/grants"


def test_alice_reads_what_her_agents_did_today_in_one_call(request: pytest.FixtureRequest,  # type: ignore[no-untyped-def]
                                                            app: Flask, studio) -> None:
    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)

    async def vote_for_alice(client: Any) -> None:
        for args in ({"action": "start_representation", "path": HELPER_GRANTS,
                      "params": {"principal": "alice"}},
                     {"action": "vote", "path": decision,
                      "params": {"votes": [{"option_title": "Park", "accept": True}]}}):
            assert not (await client.call_tool("execute_action", args)).is_error

    over("http", "auto", "2026-07-28", request, app, helper.token, vote_for_alice)

    async def read_today(client: Any) -> tuple[int, str]:
        page = await client.call_tool("navigate", {"path": "/u/alice/agent-activity?day=today"})
        assert not page.is_error, page
        return 1, "\n".join(b.text for b in page.content if b.type == "text")

    calls, text = over("http", "auto", "2026-07-28", request, app, alice.token, read_today)
    assert calls <= 2
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`execute_action`"
            in line]
    voted = [row for row in rows if "| vote |" in row]
    assert voted and voted[0].startswith("| ") and "| @helper | @alice |" in voted[0], rows
    assert any("start_representation" in row and "| @helper |  |" in row for row in rows), rows

    # Filtered by agent and day; another day has none of it.
    mine = alice.get("/u/alice/agent-activity?agent=helper&day=today").get_data(as_text=True)
    assert "| @helper | @alice |" in mine
    old = alice.get("/u/alice/agent-activity?day=2020-01-01").get_data(as_text=True)
    assert "@helper" not in old.split("| --- |", 1)[1]
    bad = alice.get("/u/alice/agent-activity?day=someday", accept="application/json")
    assert bad.status_code == 422
    # The people's page names both, in words.
    html = alice.get("/u/alice/agent-activity", accept="text/html").get_data(as_text=True)
    assert '<a href="/u/helper">Helper</a> for <a href="/u/alice">Alice</a>' in html
    # As an MCP resource too.
    async def read_resource(client: Any) -> str:
        found = await client.read_resource("harmonic://calls")
        return "\n".join(getattr(c, "text", "") for c in found.contents)

    listed = over("http", "auto", "2026-07-28", request, app, alice.token, read_resource)
    assert "| @helper | @alice |" in listed


def test_a_comment_made_in_a_session_names_both(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)
    assert helper.act(HELPER_GRANTS, "start_representation", principal="alice",
                      studio="team").status_code == 201
    made = helper.act(decision, "add_comment", text="Alice prefers the park.")
    assert made.status_code == 201, made.get_json()
    markdown = alice.get(decision).get_data(as_text=True)
    assert "### Helper for Alice, " in markdown
    html = alice.get(decision, accept="text/html").get_data(as_text=True)
    assert '<a href="/u/helper">Helper</a> for <a href="/u/alice">Alice</a>' in html
    # The principal ends the session: the agent's next comment is its own.
    assert alice.act(GRANTS, "end_representation", representative="helper").status_code == 200
    assert helper.act(decision, "add_comment", text="Mine.").status_code == 201
    assert "### Helper, " in alice.get(decision).get_data(as_text=True)


def test_revoking_the_grant_ends_the_session_at_once(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)
    grant_id = _grant_id(alice)
    assert helper.act(HELPER_GRANTS, "start_representation",
                      principal="alice").status_code == 201
    assert "**You are acting for @alice**" in helper.get(HELPER_GRANTS).get_data(as_text=True)
    assert "**@helper is acting for you**" in alice.get(GRANTS).get_data(as_text=True)
    assert alice.act(GRANTS, "revoke_grant", grant_id=grant_id).status_code == 200
    # At once: the very next call of the same token is the agent's own.
    voted = helper.act(decision, "vote", votes=[{"option_title": "Office", "accept": True}])
    assert voted.status_code == 200, voted.get_json()
    assert "* [ ] ✅ [ ] ⭐ Office" in _my_votes(alice, decision)
    assert "You are acting for" not in helper.get(HELPER_GRANTS).get_data(as_text=True)
    again = helper.act(HELPER_GRANTS, "start_representation", principal="alice")
    assert again.status_code == 403 and "no grant in force" in again.get_json()["error"][
        "message"]


def test_calls_in_a_session_spend_the_principal_s_budget(app: Flask, studio,  # type: ignore[no-untyped-def]
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    alice = studio
    helper = _agent(app, alice)
    assert helper.act(HELPER_GRANTS, "start_representation",
                      principal="alice").status_code == 201
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT_PERSON", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST_PERSON", 3)
    app.extensions.pop("harmonic.ratelimit", None)
    try:
        assert [helper.get("/studios/team").status_code for _ in range(3)] == [200] * 3
        refused = alice.get("/studios", accept="application/json")
        assert refused.status_code == 429, refused.get_json()
    finally:
        app.extensions.pop("harmonic.ratelimit", None)


def test_grants_are_checked_when_given(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    make_agent("carol")  # not a member of the studio
    refused = alice.act(GRANTS, "grant_actions", studio="team", member="carol",
                        actions="vote", until="1d")
    assert refused.status_code == 422 and "not a member" in refused.get_data(as_text=True)
    _agent(app, alice)
    for actions in ("create_api_token", "grant_actions", "vote,nonsense"):
        refused = alice.act(GRANTS, "grant_actions", studio="team", member="helper",
                            actions=actions, until="1d")
        assert refused.status_code == 422, actions
    # An agent never grants (only the person manages who acts for them).
    helper_token = alice.act("/u/alice/settings/agents", "create_agent_token", handle="helper")
    from tests.conftest import Agent

    helper = Agent(alice.client, "helper", helper_token.get_json()["result"]["token"])
    refused = helper.act(HELPER_GRANTS, "grant_actions", studio="team", member="alice",
                         actions="vote", until="1d")
    assert refused.status_code == 403


def _grant_id(alice: Any) -> str:
    page = alice.get(GRANTS).get_data(as_text=True)
    row = next(line for line in page.splitlines() if "| @helper |" in line)
    return row.split("`")[1]


def test_every_door_writes_the_call_log_row(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    """A Markdown or JSON POST with a token, and an HTML form in a session, write the row
    execute_action writes over MCP: caller, for whom, door, action, parameter names, the
    declared context and the outcome (a refusal included)."""
    from tests.grants.test_representation import _form, _signed_in

    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)
    assert helper.act(HELPER_GRANTS, "start_representation",
                      principal="alice").status_code == 201
    context = {"actor": "helper", "on_behalf_of": "alice", "visibility": "private",
               "intention": "Alice likes the park"}
    voted = helper.act(decision, "vote", accept="text/markdown",
                       votes=[{"option_title": "Park", "accept": True}], context=context)
    assert voted.status_code == 200, voted.get_data(as_text=True)
    refused = helper.act("/studios/team/note", "create_note", title="No", text="x")
    assert refused.status_code == 403
    # Bob, a person granted the same, through the HTML form in his session.
    bob = make_agent("bob", password="bob-password-1")
    assert bob.act("/studios/team/join", "join_studio").status_code == 200
    assert alice.act(GRANTS, "grant_actions", studio="team", member="bob",
                     actions="vote,add_comment", until="2h").status_code == 201
    browser = _signed_in(app, "bob", "bob-password-1")
    assert _form(browser, "/u/bob/settings/grants", "start_representation",
                 {"principal": "alice", "studio": "team"}).status_code == 303
    assert _form(browser, decision, "add_comment",
                 {"text": "For Alice: the park."}).status_code == 303

    log = alice.get("/u/alice/agent-activity").get_data(as_text=True)
    rows = [line for line in log.splitlines() if line.startswith("| ") and "`execute_action`"
            in line]
    (vote,) = [row for row in rows if "| vote |" in row]
    assert vote.startswith("| ") and "| @helper | @alice | md | `execute_action` |" in vote
    assert f"| {decision} | vote | votes |" in vote and "Alice likes the park" in vote
    assert "| ok |" in vote
    (note,) = [row for row in rows if "| create_note |" in row]
    assert "| @helper | @alice | json |" in note and "| tool_error: 'create_note' is outside" \
        in note and "title, text" not in note.split("| create_note |", 1)[0]
    (comment,) = [row for row in rows if "| add_comment |" in row]
    assert "| @bob | @alice | html |" in comment and "| text |" in comment, comment
    assert "csrf" not in comment
    # Starting a session is the representative's own call (made for nobody else).
    starts = [row for row in rows if "start_representation" in row]
    assert any("| @helper |  | json |" in row for row in starts), starts
    # Bob's call is in his own log too, not only in Alice's.
    with app.app_context():
        from app.extensions import db
        from app.mcp import audit
        from app.models import User

        bob_user = db.session.query(User).filter_by(handle="bob").one()
        mine = audit.calls_for(bob_user)
        assert [(r.call.action, r.principal.handle if r.principal else None)
                for r in mine if r.call.action == "add_comment"] == [("add_comment", "alice")]


def test_a_call_on_an_item_since_deleted_is_listed_without_a_link(studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    made = alice.act("/studios/team/note", "create_note", title="Short-lived", text="soon gone")
    path = made.get_json()["location"]
    assert alice.act(path, "delete_note").status_code == 200
    page = alice.get("/u/alice/agent-activity", accept="text/html")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert f"{path} <small>(no longer there)</small>" in html
    assert f'href="{path}"' not in html
    # The calls that created it were made on the studio's new-note page, which is there.
    assert '<a href="/studios/team/note">/studios/team/note</a>' in html

"""Grants and representation through the public doors: Alice grants her agent (and Bob) the
right to vote and comment for her in the studio; the agent starts a representation session
and votes for her over MCP (official SDK, both transports, both eras) in three calls or fewer;
anything outside the grant is refused with the grant's terms at every door (MCP, Markdown,
HTML form); the audit, the call log and the comment itself name both; revoking the grant ends
the session at once.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.mcp.clients import TRANSPORTS, over

GRANTS = "/u/alice/settings/grants"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def _decision(alice: Any) -> str:
    made = alice.act("/studios/team/decide", "create_decision", question="Where do we meet?",
                     options=["Café", "Office", "Park"])
    assert made.status_code == 201, made.get_json()
    return made.get_json()["location"]


def _agent(app: Flask, alice: Any) -> Any:
    """Alice's agent 'helper', a member of the studio, granted vote and add_comment."""
    from tests.conftest import Agent

    made = alice.act("/u/alice/settings/agents", "create_agent", handle="helper",
                     name="Helper")
    assert made.status_code == 201, made.get_json()
    helper = Agent(alice.client, "helper", made.get_json()["result"]["token"])
    assert helper.act("/studios/team/join", "join_studio").status_code == 200
    granted = alice.act(GRANTS, "grant_actions", studio="team", member="helper",
                        actions="vote,add_comment", until="1d")
    assert granted.status_code == 201, granted.get_json()
    return helper


def _my_votes(alice: Any, decision: str) -> list[str]:
    body = alice.get(decision).get_data(as_text=True)
    return [line for line in body.splitlines() if line.startswith("* [") and "✅" in line]


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_an_agent_votes_for_alice_in_three_calls(request: pytest.FixtureRequest, app: Flask,
                                                 studio, transport: str, mode: str,  # type: ignore[no-untyped-def]
                                                 version: str) -> None:
    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)

    async def story(client: Any) -> tuple[int, str]:
        calls = 0
        started = await client.call_tool("execute_action", {
            "action": "start_representation", "path": "/u/helper/settings/grants",
            "params": {"principal": "alice"}})
        calls += 1
        assert not started.is_error, started
        voted = await client.call_tool("execute_action", {
            "action": "vote", "path": decision,
            "params": {"votes": [{"option_title": "Café", "accept": True}]}})
        calls += 1
        assert not voted.is_error, voted
        outside = await client.call_tool("execute_action", {
            "action": "create_note", "path": "/studios/team/note",
            "params": {"title": "Not mine to write", "text": "x"}})
        assert outside.is_error
        said = "\n".join(b.text for b in outside.content if b.type == "text")
        return calls, said

    calls, said = over(transport, mode, version, request, app, helper.token, story)
    assert calls <= 3
    # The vote is Alice's: her page shows it as her own.
    assert "* [x] ✅ [ ] ⭐ Café" in _my_votes(alice, decision)
    # Outside the grant: refused with the grant's terms.
    assert "'create_note' is outside your grant" in said, said
    assert "'vote', 'add_comment' until" in said and "@alice" in said


def test_outside_the_grant_is_refused_at_every_door(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    helper = _agent(app, alice)
    assert helper.act("/u/helper/settings/grants", "start_representation",
                      principal="alice").status_code == 201
    # Markdown POST (Bearer): refused with the terms, nothing written.
    refused = helper.act("/studios/team/note", "create_note", accept="text/markdown",
                         title="No", text="x")
    assert refused.status_code == 403
    text = refused.get_data(as_text=True)
    assert "'create_note' is outside your grant" in text and "'vote', 'add_comment'" in text
    # JSON: the terms as data too.
    refused = helper.act("/studios/team/note", "create_note", title="No", text="x")
    error = refused.get_json()["error"]
    assert error["reason"] == "outside_grant" and error["actions"] == ["vote", "add_comment"]
    assert error["principal"] == "alice" and error["until"]
    # Credentials are never the representative's to manage for the principal.
    refused = helper.act("/u/helper/settings/tokens", "create_api_token", name="x")
    assert refused.status_code == 403

    # The HTML form door: Bob, a person, granted the same, signed in with a cookie.
    bob = make_agent("bob", password="bob-password-1")
    assert bob.act("/studios/team/join", "join_studio").status_code == 200
    assert alice.act(GRANTS, "grant_actions", studio="team", member="bob",
                     actions="vote,add_comment", until="2h").status_code == 201
    browser = _signed_in(app, "bob", "bob-password-1")
    started = _form(browser, "/u/bob/settings/grants", "start_representation",
                    {"principal": "alice", "studio": "team"})
    assert started.status_code == 303
    refused = _form(browser, "/studios/team/note", "create_note", {"title": "No", "text": "x"})
    assert refused.status_code == 403
    said = refused.get_data(as_text=True).split('role="alert">', 1)[1].split("</div>", 1)[0]
    # In people's words: the actions' titles, never their names.
    assert "Create note is outside your grant" in said and "create_note" not in said
    assert "“Add comment” until" in said, said


def _signed_in(app: Flask, handle: str, password: str) -> FlaskClient:
    browser = app.test_client()
    page = browser.get("/login").get_data(as_text=True)
    signed = browser.post("/login", data={"login": handle, "password": password,
                                          "csrf_token": CSRF.search(page).group(1)})  # type: ignore[union-attr]
    assert signed.status_code == 303
    return browser


def _form(browser: FlaskClient, path: str, action: str, data: dict[str, str]) -> Any:
    html = browser.get(path, headers={"Accept": "text/html"}).get_data(as_text=True)
    token = CSRF.search(html).group(1)  # type: ignore[union-attr]
    return browser.post(f"{path}/actions/{action}", data={"csrf_token": token, **data},
                        headers={"Accept": "text/html", "Origin": "http://localhost"})

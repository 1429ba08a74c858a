"""A declared context (actor, on_behalf_of, visibility, intention) on MCP execute_action and on
Markdown/JSON action POSTs: checked against the real caller and its representation session,
a mismatch refused with the reason, kept with the call, and required where a studio says so."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from tests.grants.test_representation import _agent, _decision, _my_votes
from tests.mcp.clients import over

HELPER_GRANTS = "/u/helper/settings/grants"


def _context(**fields: Any) -> dict[str, Any]:
    return {"actor": "helper", "on_behalf_of": "alice", "visibility": "shared",
            "intention": "Alice asked me to vote for the park", **fields}


def test_mcp_context_is_checked_and_kept(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                         studio) -> None:
    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)
    assert helper.act(HELPER_GRANTS, "start_representation",
                      principal="alice").status_code == 201
    vote = {"votes": [{"option_title": "Park", "accept": True}]}

    async def story(client: Any) -> list[str]:
        said = []
        for context in (_context(actor="alice"), _context(on_behalf_of=None),
                        _context(on_behalf_of="bob"), _context()):
            if context.get("on_behalf_of") is None:
                context.pop("on_behalf_of")
            result = await client.call_tool("execute_action", {
                "action": "vote", "path": decision, "params": vote, "context": context})
            said.append("ok" if not result.is_error else
                        "\n".join(b.text for b in result.content if b.type == "text"))
        return said

    said = over("http", "auto", "2026-07-28", request, app, helper.token, story)
    assert "names @alice as the actor, but this call is made by @helper" in said[0]
    assert "runs for @alice in your representation session: declare on_behalf_of" in said[1]
    assert "your representation session is for @alice" in said[2]
    assert said[3] == "ok"
    assert "* [x] ✅ [ ] ⭐ Park" in _my_votes(alice, decision)
    # Kept with the call: the call log shows what was declared.
    log = alice.get("/u/alice/agent-activity?agent=helper").get_data(as_text=True)
    (row,) = [line for line in log.splitlines() if "| vote |" in line and "| ok" in line]
    assert "Alice asked me to vote for the park" in row and "shared" in row
    html = alice.get("/u/alice/agent-activity", accept="text/html").get_data(as_text=True)
    assert "Alice asked me to vote for the park <small>(shared)</small>" in html


def test_markdown_posts_declare_context_in_the_body_or_a_header(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)
    vote = [{"option_title": "Café", "accept": True}]
    # As itself, no session: on_behalf_of names nobody it acts for.
    refused = helper.act(decision, "vote", votes=vote, context=_context())
    assert refused.status_code == 403
    assert "you are in no representation session for them" in refused.get_json()["error"][
        "message"]
    assert refused.get_json()["error"]["reason"] == "context_mismatch"
    # A bad context names every bad field.
    bad = helper.act(decision, "vote", votes=vote,
                     context={"actor": "helper", "visibility": "everyone", "bogus": 1})
    assert bad.status_code == 422
    paths = {e["path"] for e in bad.get_json()["error"]["errors"]}
    assert paths == {"context.visibility", "context.intention", "context.bogus"}
    ok = helper.act(decision, "vote", votes=vote, context=_context(on_behalf_of=None))
    assert ok.status_code == 200, ok.get_json()
    # The header, for a client that cannot add to the body.
    header = json.dumps(_context(actor="somebody"))
    refused = helper.client.post(f"{decision}/actions/vote", json={"votes": vote},
                                 headers={**helper.headers("application/json"),
                                          "Harmonic-Context": header})
    assert refused.status_code == 403 and "@somebody" in refused.get_json()["error"]["message"]


def test_a_studio_may_require_a_context(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    decision = _decision(alice)
    helper = _agent(app, alice)
    assert alice.act("/studios/team/settings", "update_studio_settings",
                     context_required=True).status_code == 200
    vote = [{"option_title": "Office", "accept": True}]
    refused = helper.act(decision, "vote", votes=vote)
    assert refused.status_code == 403
    error = refused.get_json()["error"]
    assert error["reason"] == "context_required" and "declare its context" in error["message"]
    # The person's own token declares none.
    assert alice.act(decision, "vote", votes=vote).status_code == 200
    header = json.dumps(_context(on_behalf_of=None, visibility="public"))
    ok = helper.client.post(f"{decision}/actions/vote", json={"votes": vote},
                            headers={**helper.headers("application/json"),
                                     "Harmonic-Context": header})
    assert ok.status_code == 200, ok.get_json()

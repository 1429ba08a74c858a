"""One authorization question for every door, and tokens that know what they are.

- A read-only token writes nothing through MCP: ``upstream_call`` of a method that writes,
  ``replay`` that executes and ``teach_start`` are refused, as ``POST /rpc`` and
  ``start_teach`` refuse them (the official SDK over a real ``bin/mcp-server`` and over HTTP,
  in both protocol eras).
- An app's token (an OAuth grant's) and an agent's token manage no credentials: no token,
  agent or connected app is made or revoked by them, at the Markdown door or through MCP.
- Revoking a grant (disconnecting the app) or an agent ends what it made: its MCP sessions,
  teach sessions, webhooks and queued runs.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from app.extensions import db
from tests.helpers import open_studio, parse_md
from tests.mcp.clients import TRANSPORTS, opener, run, text_of
from tests.mcp.conftest import Http
from tests.mcp.test_era_2026 import _dry_run
from tests.mcp.test_http import _FlaskClient
from tests.playbooks.test_rebar_story import _rebar_count, _teach_rebar
from tests.security.grants import agent_token, oauth_token

PASSWORD = "kinds-password-1"


def _count(app: Flask, model: Any, *where: Any) -> int:
    with app.app_context():
        return int(db.session.query(model).filter(*where).count())


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_a_read_token_writes_nothing_through_mcp(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                                  studio, make_agent, demo, transport: str,
                                                  mode: str, version: str) -> None:
    from app.models.playbooks import Playbook, PlaybookRun

    session, short = _teach_rebar(studio)
    assert studio.act(f"/playbooks/{short}", "generate_recipe").status_code == 200
    _dry_run(studio, session, 3)  # what governance asks before a replay runs for real
    reader = make_agent("alice", scopes="read")
    bars, books, runs = _rebar_count(studio), _count(app, Playbook), _count(app, PlaybookRun)
    open_client = opener(transport, mode, request, app)

    async def scenario() -> dict[str, Any]:
        async with open_client(reader.token) as client:
            assert client.protocol_version == version
            return {
                "upstream_call": await client.call_tool("upstream_call", {
                    "method": "update_wall_parameter",
                    "params": {"elementId": 3001, "param": "Comments", "value": "read-only"}}),
                "replay": await client.call_tool("replay", {
                    "session_id": session, "args": {"bar_count": 3}, "dry_run": False}),
                "teach_start": await client.call_tool("teach_start", {"name": "reader"}),
                "read": await client.call_tool("upstream_call", {
                    "method": "get_element_info", "params": {"elementId": 3001}}),
                "dry run": await client.call_tool("replay", {
                    "session_id": session, "args": {"bar_count": 3}}),
            }

    out = run(scenario)
    for name in ("upstream_call", "replay", "teach_start"):
        result = out[name]
        assert result.is_error, (name, text_of(result))
        assert "this token lacks the 'write' scope" in text_of(result), text_of(result)
    # What reads still runs for a read token: the method that reads, and a dry run.
    assert not out["read"].is_error, text_of(out["read"])
    wall = out["read"].structured_content["element"]["parameters"]["Comments"]
    assert wall["value"] == ""
    assert not out["dry run"].is_error, text_of(out["dry run"])
    assert _rebar_count(studio) == bars
    assert _count(app, Playbook) == books
    assert _count(app, PlaybookRun) == runs + 1  # the dry run's record, nothing more
    # The JSON endpoints give the same answers from the same question.
    assert reader.post("/teach/start?name=x").status_code == 403
    answer = reader.post("/rpc", json={"jsonrpc": "2.0", "id": 1,
                                      "method": "update_wall_parameter",
                                      "params": {"elementId": 3001, "param": "Comments",
                                                 "value": "read-only"}}).get_json()
    assert answer["error"]["data"]["reason"] == "insufficient_scope", answer
    assert "result" in reader.post("/rpc", json={"jsonrpc": "2.0", "id": 2,
                                                 "method": "get_walls", "params": {}}).get_json()


def _pat(app: Flask, make_agent: Any) -> Any:
    pat = make_agent("pat", password=PASSWORD)
    open_studio(app, "pat")
    return pat


CREDENTIALS = (("tokens", "create_api_token", {"name": "forever", "expires": "never"}),
               ("agents", "create_agent", {"handle": "minted-agent"}),
               ("agents", "create_agent_token", {"handle": "patbot"}),
               ("agents", "revoke_agent", {"handle": "patbot"}),
               ("apps", "disconnect_app", {"client_id": "CLIENT"}),
               ("tokens", "revoke_api_token", {"token_id": "PREFIX"}),
               # A confirmed address lets replies by email comment as the person.
               ("notifications", "set_email", {"email": "mallory@example.org"}))


def test_only_the_person_manages_credentials(app: Flask, client: Any, make_agent: Any) -> None:
    from app.models import ApiToken, User

    pat = _pat(app, make_agent)
    bot = agent_token(pat, "patbot")
    granted, client_id = oauth_token(app, "pat", PASSWORD)
    prefix = pat.token[:12]
    tokens, users = _count(app, ApiToken, ApiToken.revoked_at.is_(None)), _count(app, User)
    callers = {"an app": (granted, "pat"), "an agent": (bot, "patbot")}
    for holder, (token, handle) in callers.items():
        mcp = Http("http://localhost", token, _FlaskClient(client))
        mcp.initialize()
        for page, action, params in CREDENTIALS:
            params = {k: {"CLIENT": client_id, "PREFIX": prefix}.get(v, v)
                      for k, v in params.items()}
            path = f"/u/{handle}/settings/{page}"
            markdown = client.post(f"{path}/actions/{action}", json=params,
                                   headers={"Authorization": f"Bearer {token}",
                                            "Accept": "text/markdown"})
            text = markdown.get_data(as_text=True)
            assert markdown.status_code == 403, (holder, action, text[:300])
            assert "only the person may run it" in text, (holder, action, text[:300])
            result = mcp.tool("execute_action", action=action, path=path, params=params)
            said = result["content"][0]["text"]
            assert result["isError"] and "manages the account's credentials" in said, said
            assert result["structuredContent"]["error"]["reason"] == "person_only"
    assert _count(app, ApiToken, ApiToken.revoked_at.is_(None)) == tokens
    assert _count(app, User) == users
    # The app's token still works for what it was granted, and the person may do all of it.
    assert client.get("/studios/team", headers={"Authorization": f"Bearer {granted}",
                                                "Accept": "text/markdown"}).status_code == 200
    made = pat.act("/u/pat/settings/tokens", "create_api_token", name="mine", expires="never")
    assert made.status_code == 201, made.get_data(as_text=True)


def _markdown(client: Any, token: str, path: str) -> dict[str, Any]:
    page = client.get(path, headers={"Authorization": f"Bearer {token}",
                                     "Accept": "text/markdown"})
    assert page.status_code == 200, page.get_data(as_text=True)[:300]
    return parse_md(page.get_data(as_text=True))[0]


def _made_by(client: Any, token: str, handle: str, monkeypatch: pytest.MonkeyPatch
             ) -> dict[str, Any]:
    """An MCP session, a teach session, a webhook and a queued workflow run, made with
    ``token``: the MCP session's id, the playbook's, the webhook's and the run's."""
    app = client.application
    for key, value in {"WEBHOOKS_ALLOW": "loopback", "WORKFLOWS_WORKER": "off"}.items():
        monkeypatch.setitem(app.config, key, value)
    mcp = Http("http://localhost", token, _FlaskClient(client))
    mcp.initialize()
    taught = mcp.call("tools/call", {"name": "teach_start",
                                     "arguments": {"name": "made"}})["result"]
    assert not taught.get("isError"), taught
    hook = client.post(f"/u/{handle}/settings/webhooks/actions/create_webhook",
                       json={"url": "http://127.0.0.1:9/hook"},
                       headers={"Authorization": f"Bearer {token}",
                                "Accept": "application/json"})
    assert hook.status_code == 201, hook.get_data(as_text=True)
    from app.workflows import catalog

    with app.app_context():
        workflow = catalog.entries()[0].name
    started = mcp.tool("run_workflow", workflow=workflow)
    assert not started.get("isError"), started
    return {"session": mcp.session_id, "playbook": taught["structuredContent"]["id"],
            "hook": hook.get_json()["result"]["id"], "run": started["structuredContent"]["run"]}


def _ended(app: Flask, client: Any, made: dict[str, Any], own: str | None) -> None:
    """Everything in ``made`` has ended (``own``: another token of the same person, which
    could go on with the MCP session while it lived)."""
    from app.models.mcp import McpSession
    from app.models.notifications import Webhook
    from app.models.playbooks import Playbook
    from app.workflows import runs

    if own is not None:
        same_session = Http("http://localhost", own, _FlaskClient(client))
        same_session.session_id = made["session"]
        assert same_session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
                                 ).status_code == 404
    with app.app_context():
        assert db.session.get(McpSession, made["session"]).ended_at is not None
        playbook = db.session.query(Playbook).filter(
            Playbook.short_id == made["playbook"]).one()
        assert playbook.teaching is False and playbook.stopped_at is not None
        hook = db.session.query(Webhook).filter(Webhook.short_id == made["hook"]).one()
        assert hook.active is False
        assert runs.find(made["run"])["status"] == "cancelled"


def test_disconnecting_an_app_ends_what_it_made(app: Flask, client: Any, make_agent: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    pat = _pat(app, make_agent)
    granted, client_id = oauth_token(app, "pat", PASSWORD)
    made = _made_by(client, granted, "pat", monkeypatch)
    gone = pat.act("/u/pat/settings/apps", "disconnect_app", client_id=client_id)
    assert gone.status_code == 200, gone.get_data(as_text=True)
    assert client.get("/studios/team", headers={"Authorization": f"Bearer {granted}",
                                                "Accept": "text/markdown"}).status_code == 401
    _ended(app, client, made, pat.token)
    # The person's own things are untouched.
    assert _markdown(client, pat.token, "/studios/team")["path"] == "/studios/team"


def test_revoking_an_agent_ends_what_it_made(app: Flask, client: Any, make_agent: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pat = _pat(app, make_agent)
    bot = agent_token(pat, "patbot")
    joined = client.post("/studios/team/join/actions/join_studio", json={},
                         headers={"Authorization": f"Bearer {bot}",
                                  "Accept": "application/json"})
    assert joined.status_code == 200, joined.get_data(as_text=True)
    made = _made_by(client, bot, "patbot", monkeypatch)
    gone = pat.act("/u/pat/settings/agents", "revoke_agent", handle="patbot")
    assert gone.status_code == 200, gone.get_data(as_text=True)
    _ended(app, client, made, None)

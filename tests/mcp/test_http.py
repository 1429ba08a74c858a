"""Streamable HTTP /mcp through the app: sessions, headers, auth, hostile input, navigation."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from flask import Flask

from app.core import kept
from app.mcp import store
from tests.helpers import join_studio, parse_md
from tests.mcp.conftest import INIT, Http, gunicorn, messages_of


class _Response:
    """httpx-like view of a Flask test response, so one raw client serves both."""

    def __init__(self, response: Any) -> None:
        self.status_code = response.status_code
        self.headers = httpx.Headers(list(response.headers.items()))
        self.text = response.get_data(as_text=True)

    def json(self) -> Any:
        return json.loads(self.text)


class _FlaskClient:
    def __init__(self, client: Any) -> None:
        self.client = client

    def post(self, url: str, content: bytes, headers: dict[str, str]) -> _Response:
        return _Response(self.client.post("/mcp", data=content, headers=headers))


@pytest.fixture
def mcp(client, make_agent):  # type: ignore[no-untyped-def]
    """A raw MCP client for alice, with an initialized session."""
    alice = make_agent("alice")
    http = Http("http://localhost", alice.token, _FlaskClient(client))
    http.initialize()
    return http


def test_initialize_issues_a_session_and_negotiates(client, make_agent) -> None:
    agent = make_agent("bob")
    http = Http("http://localhost", agent.token, _FlaskClient(client))
    result = http.initialize()
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "harmonic" and result["serverInfo"]["title"]
    assert {"tools", "resources", "prompts", "logging", "completions"} <= set(
        result["capabilities"])
    assert result["instructions"]
    for version, expected in (("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"),
                              ("1999-01-01", "2025-11-25")):
        fresh = Http("http://localhost", agent.token, _FlaskClient(client))
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": dict(INIT, protocolVersion=version)}
        assert fresh.post(body).json()["result"]["protocolVersion"] == expected


def test_session_header_rules(client, mcp: Http) -> None:
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    assert mcp.call("ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    missing = Http("http://localhost", mcp.headers["Authorization"][7:], mcp.client)
    assert missing.post(ping).status_code == 400
    assert mcp.post(ping, **{"Mcp-Session-Id": "no-such-session"}).status_code == 404
    assert mcp.post(ping, **{"MCP-Protocol-Version": "1999-01-01"}).status_code == 400
    # Ending the session: DELETE, then the id is unknown (404) and must re-initialize.
    response = client.delete("/mcp", headers={**mcp.headers, "Mcp-Session-Id": mcp.session_id})
    assert response.status_code == 204
    assert mcp.post(ping).status_code == 404


def test_idle_sessions_end_and_old_ones_are_pruned(app: Flask, client, make_agent) -> None:
    from datetime import timedelta

    from sqlalchemy import update

    from app.extensions import db
    from app.models.base import utcnow
    from app.models.mcp import McpSession

    agent = make_agent("ida")
    idle, old = (Http("http://localhost", agent.token, _FlaskClient(client)) for _ in "ab")
    idle.initialize()
    old.initialize()
    with app.app_context():
        for http, age in ((idle, timedelta(hours=25)), (old, timedelta(days=8))):
            db.session.execute(update(McpSession).where(McpSession.id == http.session_id)
                               .values(last_seen_at=utcnow() - age))
        db.session.commit()
    # Changed by hand, not through the app: no process was told, so its copies of the rows
    # are dropped as HARMONIC_CACHE_SECONDS would drop them.
    kept.forget(store.TOPIC)
    assert idle.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 404
    Http("http://localhost", agent.token, _FlaskClient(client)).initialize()  # prunes
    with app.app_context():
        assert db.session.get(McpSession, old.session_id) is None
        assert db.session.get(McpSession, idle.session_id) is not None


def test_another_users_token_cannot_use_a_session(mcp: Http, make_agent) -> None:
    mallory = make_agent("mallory")
    response = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                        Authorization=f"Bearer {mallory.token}")
    assert response.status_code == 404


def test_notifications_and_responses_get_202(mcp: Http) -> None:
    response = mcp.post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 12345}})
    assert response.status_code == 202 and response.text == ""
    unknown = mcp.post({"jsonrpc": "2.0", "id": "srv-unknown", "result": {}})
    assert unknown.status_code == 400


def test_origin_host_and_token_checks(client, make_agent) -> None:
    agent = make_agent("carol")
    http = Http("http://localhost", agent.token, _FlaskClient(client))
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    assert http.post(body, Origin="http://evil.example.com").status_code == 403
    assert http.post(body, Host="evil.example.com").status_code == 403
    assert http.post(body, Origin="http://localhost:6274").status_code == 200
    anonymous = Http("http://localhost", None, _FlaskClient(client))
    refused = anonymous.post(body)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    wrong = Http("http://localhost", "hmn_not-a-token", _FlaskClient(client)).post(body)
    assert wrong.status_code == 401


def test_allow_lists_come_from_config(app: Flask, make_agent) -> None:
    agent = make_agent("dave")
    app.config["HARMONIC_ALLOWED_ORIGINS"] = ["https://agents.example.org"]
    app.config["HARMONIC_ALLOWED_HOSTS"] = ["harmonic.example.org"]
    try:
        http = Http("http://localhost", agent.token, _FlaskClient(app.test_client()))
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        assert http.post(body, Origin="https://agents.example.org",
                         Host="harmonic.example.org").status_code == 200
        assert http.post(body, Origin="https://other.example.org").status_code == 403
    finally:
        app.config["HARMONIC_ALLOWED_ORIGINS"] = []
        app.config["HARMONIC_ALLOWED_HOSTS"] = []


def test_auth_off_only_counts_on_loopback(app: Flask) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    http = Http("http://localhost", None, _FlaskClient(app.test_client()))
    before = app.config["HARMONIC_MCP_AUTH"], app.config["HARMONIC_HOST"]
    try:
        app.config["HARMONIC_MCP_AUTH"] = False
        app.config["HARMONIC_HOST"] = "0.0.0.0"
        assert http.post(body).status_code == 401
        app.config["HARMONIC_HOST"] = "127.0.0.1"
        assert http.post(body).status_code == 200
    finally:
        app.config["HARMONIC_MCP_AUTH"], app.config["HARMONIC_HOST"] = before


def test_a_probe_without_a_session_gets_a_json_rpc_error(client) -> None:
    http = Http("http://localhost", None, _FlaskClient(client))
    probe = http.post({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
                      **{"MCP-Protocol-Version": "2026-07-28"})
    assert probe.status_code in (400, 401) and "error" in probe.json()


def test_progress_and_debug_logs_stream_as_sse(studio, client) -> None:
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    assert http.call("logging/setLevel", {"level": "debug"})["result"] == {}
    response = http.post({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                          "params": {"name": "execute_action", "_meta": {"progressToken": "p1"},
                                     "arguments": {"action": "create_note",
                                                   "path": "/studios/team/note",
                                                   "params": {"text": "streamed"}}}})
    assert response.headers["content-type"].startswith("text/event-stream")
    messages = messages_of(response)
    methods = [m.get("method") for m in messages[:-1]]
    assert methods.count("notifications/progress") == 2
    assert "notifications/message" in methods
    progress = [m["params"]["progress"] for m in messages if
                m.get("method") == "notifications/progress"]
    assert progress == sorted(progress) and progress[-1] == 2
    assert messages[-1]["id"] == 77 and not messages[-1]["result"].get("isError")


def test_hostile_messages(mcp: Http) -> None:
    parse = mcp.post(None, raw=b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert parse.status_code == 400 and parse.json()["error"]["code"] == -32700
    not_utf8 = mcp.post(None, raw=b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}')
    assert not_utf8.json()["error"]["code"] == -32700
    batch = mcp.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert batch.json()["error"]["code"] == -32600
    for body, code in (({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600),
                       ({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600),
                       ({"jsonrpc": "2.0", "id": 1, "method": 7}, -32600),
                       ({"jsonrpc": "2.0", "id": 1, "method": "no/such"}, -32601),
                       ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": []}, -32602),
                       ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "no_such_tool"}}, -32602),
                       ({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
                         "params": {"level": "loud"}}, -32602),
                       ({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                         "params": {"cursor": "garbage"}}, -32602),
                       ({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                         "params": {"uri": "harmonic://nothing-here"}}, -32002),
                       ({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                         "params": {"name": "studio_standup"}}, -32602),
                       ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": INIT}, -32600)):  # a second initialize on a session
        response = mcp.post(body)
        assert response.status_code in (200, 400), (body, response.text)
        assert response.json()["error"]["code"] == code, (body, response.text)


def test_oversized_body_is_413(app: Flask, mcp: Http) -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (
        app.config["MAX_CONTENT_LENGTH"] + 10) + b'"}}'
    assert mcp.post(None, raw=big).status_code == 413


def test_a_body_is_read_whole_with_its_length_or_in_chunks(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    # Through gunicorn, as served: a declared length is read straight from the server's input;
    # without one (chunked), the body ends with the last chunk, and the size limit holds.
    alice = make_agent("alice")
    with gunicorn(app) as base:
        http = Http(base, alice.token)
        http.initialize()
        headers = dict(http.headers, **{"Mcp-Session-Id": http.session_id or "",
                                        "MCP-Protocol-Version": "2025-11-25"})
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "navigate", "arguments": {"path": "/studios"}}})
        half = len(body) // 2
        for content in (body.encode(), iter([body[:half].encode(), body[half:].encode()])):
            answer = http.client.post(http.url, headers=headers, content=content)
            assert answer.status_code == 200, answer.text
            assert answer.json()["id"] == 7 and "Studios" in json.dumps(answer.json())
        assert answer.request.headers.get("Transfer-Encoding") == "chunked"
        chunk = b"a" * 65536
        big = [b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"'] + [chunk] * (
            app.config["MAX_CONTENT_LENGTH"] // len(chunk) + 2) + [b'"}}']
        # (Sent with its length, it is refused before it is read: test_oversized_body_is_413.)
        assert http.client.post(http.url, headers=headers, content=iter(big)).status_code == 413


def test_invalid_arguments_are_tool_errors(mcp: Http) -> None:
    result = mcp.tool("navigate")
    assert result["isError"] is True and "path" in result["content"][0]["text"]
    result = mcp.tool("navigate", path="/studios", extra=1)
    assert result["isError"] is True


def test_lists_have_no_conformance_fixtures_in_normal_operation(mcp: Http) -> None:
    tools = {t["name"]: t for t in mcp.call("tools/list")["result"]["tools"]}
    assert {"navigate", "execute_action"} <= set(tools)
    assert not any(name.startswith("test_") for name in tools)
    assert tools["navigate"]["annotations"]["readOnlyHint"] is True
    assert tools["execute_action"]["annotations"]["destructiveHint"] is True
    assert tools["navigate"]["outputSchema"]["type"] == "object"
    resources = [r["uri"] for r in mcp.call("resources/list")["result"]["resources"]]
    assert "harmonic://context" in resources
    assert not any(uri.startswith("test://") for uri in resources)
    templates = mcp.call("resources/templates/list")["result"]["resourceTemplates"]
    assert "harmonic://page/{+path}" in [t["uriTemplate"] for t in templates]
    assert not any(t["uriTemplate"].startswith("test://") for t in templates)
    prompts = mcp.call("prompts/list")["result"]["prompts"]
    assert "studio_standup" in [p["name"] for p in prompts]


def test_navigate_and_execute_action_over_http(studio, client, make_agent) -> None:
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    result = http.tool("navigate", path="/studios/team")
    assert not result.get("isError"), result
    assert result["structuredContent"]["path"] == "/studios/team"
    page = "/studios/team"
    if "create_note" not in [a["name"] for a in result["structuredContent"]["actions"]]:
        page = "/studios/team/note"  # the studio links to its new-note page
        assert not http.tool("navigate", path=page).get("isError")
    navigated = http.tool("navigate", path=page)["structuredContent"]
    create = next(a for a in navigated["actions"] if a["name"] == "create_note")
    assert create["annotations"] == {"readOnlyHint": False, "destructiveHint": False,
                                     "idempotentHint": False, "openWorldHint": False}
    # Not offered here: an isError result naming what is.
    wrong = http.tool("execute_action", action="no_such_action")
    assert wrong["isError"] is True and "create_note" in wrong["content"][0]["text"]
    # A pasted /actions/<name> suffix is stripped.
    done = http.tool("execute_action", action="create_note",
                     path=f"{page}/actions/create_note",
                     params={"title": "From MCP", "text": "Written through /mcp"})
    assert not done.get("isError"), done
    location = done["structuredContent"]["location"]
    assert location.startswith("/studios/team/n/")
    assert any(b["type"] == "resource_link" for b in done["content"])
    # The note is there for an HTTP agent (Markdown) and in the HTML people see.
    markdown = studio.get(location)
    assert markdown.status_code == 200
    front, body = parse_md(markdown.get_data(as_text=True))
    assert front["title"] == "From MCP" and "Written through /mcp" in body
    html = client.get(location, headers={"Authorization": f"Bearer {studio.token}",
                                         "Accept": "text/html"})
    assert html.status_code == 200 and "Written through /mcp" in html.get_data(as_text=True)
    # Validation errors come back as isError with the parameter named.
    bad = http.tool("execute_action", action="create_note", path=page, params={})
    assert bad["isError"] is True and "text" in bad["content"][0]["text"]


def test_navigation_obeys_the_same_authorization(studio, client, make_agent) -> None:
    outsider = make_agent("eve")
    http = Http("http://localhost", outsider.token, _FlaskClient(client))
    http.initialize()
    result = http.tool("navigate", path="/studios/team/note")
    assert result["isError"] is True and "403" in result["content"][0]["text"]
    foreign = http.tool("navigate", path="https://elsewhere.example.com/studios")
    assert foreign["isError"] is True and "not a URL of this app" in foreign["content"][0]["text"]
    assert http.tool("navigate", path="/mcp")["isError"] is True


def test_agent_activity_is_the_owners_only(studio, client, make_agent) -> None:
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    http.tool("navigate", path="/studios/team")
    http.tool("execute_action", action="nope", params={"secret_value": "xyz"})
    page = studio.get("/u/alice/agent-activity")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    front, body = parse_md(text)
    assert front["path"] == "/u/alice/agent-activity"
    assert "navigate" in body and "execute_action" in body and "tool_error" in body
    assert "secret" in body and "xyz" not in body  # parameter names only, never values
    html = client.get("/u/alice/agent-activity",
                      headers={"Authorization": f"Bearer {studio.token}", "Accept": "text/html"})
    html_text = html.get_data(as_text=True)
    # The page for people says it in words: what the agent did, which fields it filled in.
    assert html.status_code == 200 and "Did something" in html_text and "Read a page" in html_text
    assert "Secret value" in html_text and "xyz" not in html_text
    other = make_agent("bob")
    assert other.get("/u/alice/agent-activity").status_code == 403


def test_context_resource_page_template_and_prompt(studio, client) -> None:
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    context = http.call("resources/read", {"uri": "harmonic://context"})["result"]
    text = context["contents"][0]["text"]
    assert "`/studios/{handle}/n/{note_id}`" in text and "`create_note`" in text
    assert "alice" in text and "/studios/team" in text
    page = http.call("resources/read", {"uri": "harmonic://page/studios/team"})["result"]
    assert parse_md(page["contents"][0]["text"])[0]["path"] == "/studios/team"
    missing = http.call("resources/read", {"uri": "harmonic://page/no/such/page"})
    assert missing["error"]["code"] == -32002
    prompt = http.call("prompts/get", {"name": "studio_standup",
                                       "arguments": {"studio": "team"}})["result"]
    assert prompt["messages"][0]["content"]["type"] == "text"
    embedded = [m["content"]["resource"]["uri"] for m in prompt["messages"][1:]]
    assert embedded == ["harmonic://page/studios/team/cycles/today",
                        "harmonic://page/studios/team"]
    completion = http.call("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "studio_standup"},
        "argument": {"name": "studio", "value": "te"}})["result"]
    assert completion["completion"]["values"] == ["team"]


def test_subscribers_hear_of_changes_on_their_next_response(studio, client,
                                                            make_agent) -> None:
    watcher = Http("http://localhost", join_studio(make_agent, "bob").token,
                   _FlaskClient(client))
    watcher.initialize()
    uri = "harmonic://page/studios/team/note"
    assert watcher.call("resources/subscribe", {"uri": uri})["result"] == {}
    assert watcher.call("resources/subscribe", {"uri": "harmonic://page/elsewhere"})
    actor = Http("http://localhost", studio.token, _FlaskClient(client))
    actor.initialize()
    done = actor.tool("execute_action", action="create_note", path="/studios/team/note",
                      params={"text": "news"})
    assert not done.get("isError"), done
    response = watcher.post({"jsonrpc": "2.0", "id": 50, "method": "ping"})
    assert response.headers["content-type"].startswith("text/event-stream")
    messages = messages_of(response)
    assert messages[0] == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                           "params": {"uri": uri}}
    assert messages[-1] == {"jsonrpc": "2.0", "id": 50, "result": {}}
    # Delivered once; after unsubscribing, no more.
    assert watcher.post({"jsonrpc": "2.0", "id": 51, "method": "ping"}).json()["id"] == 51
    watcher.call("resources/unsubscribe", {"uri": uri})
    actor.tool("execute_action", action="create_note", path="/studios/team/note",
               params={"text": "more news"})
    assert watcher.post({"jsonrpc": "2.0", "id": 52, "method": "ping"}).json()["id"] == 52


def test_pagination_walks_every_tool(app: Flask, mcp: Http) -> None:
    server = app.extensions["mcp"]
    before, server.page_size = server.page_size, 1
    try:
        names, cursor = [], None
        while True:
            params = {"cursor": cursor} if cursor else {}
            page = mcp.call("tools/list", params)["result"]
            names += [t["name"] for t in page["tools"]]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        assert len(names) == len(set(names)) >= 2 and "navigate" in names
    finally:
        server.page_size = before

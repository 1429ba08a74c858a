"""MCP 2026-07-28 beside 2025-11-25 on the same /mcp and bin/mcp-server: stateless requests
(no session row), the 2026 errors and HTTP statuses, navigation without sessions, the
replay's confirmation as an input-required result, subscriptions/listen, and the official SDK
client in auto mode (2026-07-28) and legacy mode (2025-11-25) over HTTP and stdio.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.helpers import parse_md
from tests.mcp.conftest import ACCEPT, INIT, MCP_SERVER, ROOT, Http, app_env, messages_of
from tests.mcp.test_http import _FlaskClient
from tests.mcp.test_stdio import StdioProcess
from tests.playbooks.test_rebar_story import _rebar_count, _teach_rebar

VERSION = "2026-07-28"
ELICIT = {"elicitation": {}}


def meta(capabilities: dict[str, Any] | None = None, version: str = VERSION,
         **extra: Any) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": capabilities or {},
            "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "1"}, **extra}


class Stateless:
    """A raw 2026-07-28 HTTP client: the body's _meta plus the mirrored headers."""

    def __init__(self, client: Any, token: str | None) -> None:
        self.client, self.token, self.ids = client, token, 0

    def post(self, method: str, params: dict[str, Any] | None = None,
             capabilities: dict[str, Any] | None = None, bare: bool = False,
             **headers: str) -> Any:
        """POST one request; its params get a _meta unless they have one or ``bare``."""
        self.ids += 1
        params = dict(params or {})
        if not bare:
            params.setdefault("_meta", meta(capabilities))
        sent = {"Accept": ACCEPT, "Content-Type": "application/json",
                "MCP-Protocol-Version": VERSION, "Mcp-Method": method}
        name = params.get("uri") if method == "resources/read" else params.get("name")
        if method in ("tools/call", "prompts/get", "resources/read"):
            sent["Mcp-Name"] = str(name)
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        sent.update(headers)
        body = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        return self.client.post("/mcp", data=json.dumps(body), headers=sent)

    def call(self, method: str, params: dict[str, Any] | None = None,
             capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.post(method, params, capabilities)
        assert response.status_code == 200, response.get_data(as_text=True)
        return json.loads(response.get_data(as_text=True))

    def tool(self, name: str, capabilities: dict[str, Any] | None = None,
             **params: Any) -> dict[str, Any]:
        return self.call("tools/call", {"name": name, **params}, capabilities)["result"]


def _sessions(app: Flask) -> int:
    from app.extensions import db
    from app.models.mcp import McpSession

    with app.app_context():
        return db.session.query(McpSession).count()


def _audited(app: Flask) -> list[tuple[str, str, str | None, str | None]]:
    """The tool-call audit: (tool, transport, session id, path), oldest first."""
    from app.extensions import db
    from app.models.mcp import McpToolCall

    with app.app_context():
        rows = db.session.query(McpToolCall).order_by(McpToolCall.created_at,
                                                      McpToolCall.id).all()
        return [(r.tool, r.transport, r.session_id, r.path) for r in rows]


def _runs(app: Flask) -> int:
    from app.extensions import db
    from app.models.playbooks import PlaybookRun

    with app.app_context():
        return db.session.query(PlaybookRun).count()


def test_stateless_requests_navigate_and_act_without_a_session(app, client, studio) -> None:  # type: ignore[no-untyped-def]
    modern = Stateless(client, studio.token)
    found = modern.call("server/discover")["result"]
    assert found["supportedVersions"][:2] == [VERSION, "2025-11-25"]
    assert found["resultType"] == "complete" and found["ttlMs"] >= 0
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "harmonic"
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        listed = modern.call(method)["result"]
        assert listed["resultType"] == "complete" and listed["cacheScope"] == "private"
    read = modern.call("resources/read", {"uri": "harmonic://context"})["result"]
    assert read["ttlMs"] == 0 and "alice" in read["contents"][0]["text"]

    page = modern.tool("navigate", arguments={"path": "/studios/team/note"})
    assert page["resultType"] == "complete" and not page.get("isError"), page
    assert page["structuredContent"]["path"] == "/studios/team/note"
    offered = {a["name"]: a for a in page["structuredContent"]["actions"]}
    assert "create_note" in offered and offered["create_note"]["params"]
    assert 'path="/studios/team/note"' in page["content"][0]["text"]

    bare = modern.tool("execute_action", arguments={
        "action": "create_note", "params": {"title": "Stateless", "text": "no session"}})
    assert bare["isError"] and "path is required" in bare["content"][0]["text"]
    done = modern.tool("execute_action", arguments={
        "action": "create_note", "path": "/studios/team/note",
        "params": {"title": "Stateless", "text": "no session"}})
    assert not done.get("isError"), done
    front, _body = parse_md(studio.get(done["structuredContent"]["location"])
                            .get_data(as_text=True))
    assert front["title"] == "Stateless"
    assert _sessions(app) == 0  # nothing of the above read or wrote a session
    assert ("execute_action", "http", None, "/studios/team/note") in _audited(app)

    # The 2025 era on the same endpoint, at the same time.
    legacy = Http("http://localhost", studio.token, _FlaskClient(client))
    assert legacy.initialize()["protocolVersion"] == "2025-11-25"
    legacy.tool("navigate", path="/studios/team/note")
    kept = legacy.tool("execute_action", action="create_note",
                       params={"title": "In a session", "text": "remembered page"})
    assert not kept.get("isError") and "resultType" not in kept, kept
    assert _sessions(app) == 1


def test_errors_carry_the_2026_codes_and_statuses(client, studio) -> None:  # type: ignore[no-untyped-def]
    modern = Stateless(client, studio.token)

    def error(response: Any, status: int, code: int) -> dict[str, Any]:
        assert response.status_code == status, response.get_data(as_text=True)
        body = json.loads(response.get_data(as_text=True))
        assert body["error"]["code"] == code and body["id"] == modern.ids, body
        return body["error"]

    error(modern.post("tools/list", bare=True), 400, -32602)  # no _meta, modern header
    error(modern.post("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion":
                                               VERSION}}), 400, -32602)
    old = error(modern.post("tools/list", {"_meta": meta(version="2030-01-01")},
                            **{"MCP-Protocol-Version": "2030-01-01"}), 400, -32022)
    assert old["data"]["requested"] == "2030-01-01" and VERSION in old["data"]["supported"]
    error(modern.post("tools/list", {"_meta": meta(version="2030-01-01")}), 400, -32020)
    error(modern.post("tools/list", **{"Mcp-Method": "prompts/list"}), 400, -32020)
    error(modern.post("tools/call", {"name": "navigate", "arguments": {"path": "/"}},
                      **{"Mcp-Name": "execute_action"}), 400, -32020)
    encoded = modern.post("resources/read", {"uri": "harmonic://context"},
                          **{"Mcp-Name": "=?base64?aGFybW9uaWM6Ly9jb250ZXh0?="})
    assert encoded.status_code == 200
    for removed in ("initialize", "ping", "logging/setLevel", "resources/subscribe",
                    "no/such"):
        error(modern.post(removed), 404, -32601)
    missing = error(modern.post("resources/read", {"uri": "harmonic://nothing-here"}),
                    200, -32602)
    assert missing["data"] == {"uri": "harmonic://nothing-here"}
    assert modern.post("tools/list").status_code == 200
    # initialize opens the 2025 era even under a 2026 version header.
    opened = client.post("/mcp", data=json.dumps({"jsonrpc": "2.0", "id": 1,
                                                  "method": "initialize", "params": INIT}),
                         headers={"Accept": ACCEPT, "Content-Type": "application/json",
                                  "MCP-Protocol-Version": VERSION,
                                  "Authorization": f"Bearer {studio.token}"})
    assert opened.status_code == 200 and opened.headers["Mcp-Session-Id"]
    # The same unknown resource in a 2025 session keeps that era's code.
    legacy = Http("http://localhost", studio.token, _FlaskClient(client))
    legacy.initialize()
    assert legacy.call("resources/read", {"uri": "harmonic://nothing-here"})[
        "error"]["code"] == -32002
    # GET stays 405 and a token is still required.
    assert client.get("/mcp", headers={"Authorization": f"Bearer {studio.token}"}
                      ).status_code == 405
    assert Stateless(client, None).post("tools/list").status_code == 401


def test_replay_confirmation_is_an_input_required_result(app, client, studio, demo) -> None:  # type: ignore[no-untyped-def]
    """Nothing is written before the answer, the state is signed, the retry completes."""
    session, _short = _teach_rebar(studio)
    assert studio.act(f"/playbooks/{_short}", "generate_recipe").status_code == 200
    _dry_run(studio, session, 5)  # first run is always a dry run (recipe governance)
    modern = Stateless(client, studio.token)
    before, runs = _rebar_count(studio), _runs(app)
    call = {"name": "replay", "arguments": {"session": session, "args": {"bar_count": 5},
                                             "dry_run": False}}

    asked = modern.tool(capabilities=ELICIT, **call)
    assert asked["resultType"] == "input_required"
    question = asked["inputRequests"]["confirm_writes"]
    assert question["method"] == "elicitation/create"
    assert "create_rebar_linear" in question["params"]["message"]
    assert _rebar_count(studio) == before and _runs(app) == runs  # idempotent round

    accept = {"confirm_writes": {"action": "accept", "content": {"confirm": True}}}
    tampered = modern.call("tools/call", {**call, "inputResponses": accept,
                                          "requestState": asked["requestState"][:-2] + "xx",
                                          "_meta": meta(ELICIT)})
    assert tampered["error"]["code"] == -32602
    other = {**call, "arguments": {**call["arguments"], "args": {"bar_count": 7}}}
    moved = modern.call("tools/call", {**other, "inputResponses": accept,
                                       "requestState": asked["requestState"],
                                       "_meta": meta(ELICIT)})
    assert moved["error"]["code"] == -32602 and "another request" in moved["error"]["message"]
    assert _rebar_count(studio) == before and _runs(app) == runs

    declined = modern.tool(capabilities=ELICIT, inputResponses={
        "confirm_writes": {"action": "decline"}}, requestState=asked["requestState"], **call)
    assert declined["structuredContent"]["status"] == "declined"
    assert _rebar_count(studio) == before

    done = modern.tool(capabilities=ELICIT, inputResponses=accept,
                       requestState=asked["requestState"], **call)
    assert done["resultType"] == "complete" and done["structuredContent"]["ok"], done
    assert _rebar_count(studio) == before + 5
    # A client that cannot be asked is not asked, as in the 2025 era.
    assert modern.tool(**call)["structuredContent"]["ok"]
    assert _rebar_count(studio) == before + 10


def _dry_run(agent: Any, session: str, bars: int) -> None:
    dry = agent.post("/replay", json={"SessionId": session, "DryRun": True,
                                      "Args": {"bar_count": bars}})
    assert dry.status_code == 200 and dry.get_json()["ok"], dry.get_json()


async def _sdk_replay(client: Any, session: str) -> dict[str, Any]:
    replayed = await client.call_tool("replay", {
        "session": session, "args": {"bar_count": 3}, "dry_run": False})
    assert not replayed.is_error, replayed
    return replayed.structured_content


def _elicitation(asked: list[str]) -> Any:
    from mcp import types

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    return answer


@pytest.mark.parametrize(("mode", "version"), [("auto", VERSION), ("legacy", "2025-11-25")])
def test_sdk_client_over_http_in_both_eras(app, studio, demo, live_server, mode: str,  # type: ignore[no-untyped-def]
                                           version: str) -> None:
    """The official client, as shipped: auto probes and speaks 2026-07-28 statelessly,
    legacy initializes a session; both navigate, act, and confirm a replay's writes."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    session, short = _teach_rebar(studio)
    assert studio.act(f"/playbooks/{short}", "generate_recipe").status_code == 200
    _dry_run(studio, session, 3)  # first run is always a dry run (recipe governance)
    before = _rebar_count(studio)
    asked: list[str] = []

    async def scenario() -> dict[str, Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {studio.token}"},
                                      timeout=httpx2.Timeout(60.0)) as http_client:
            async with Client(streamable_http_client(live_server + "/mcp",
                                                     http_client=http_client),
                              mode=mode, elicitation_callback=_elicitation(asked)) as client:
                assert client.protocol_version == version
                page = await client.call_tool("navigate", {"path": "/studios/team/note"})
                assert not page.is_error, page
                done = await client.call_tool("execute_action", {
                    "action": "create_note", "path": page.structured_content["path"],
                    "params": {"title": f"SDK {mode}", "text": "over HTTP"}})
                assert not done.is_error, done
                return await _sdk_replay(client, session)

    report = asyncio.run(scenario())
    assert report["ok"] and report["status"] == "ok", report
    assert len(asked) == 1 and "create_rebar_linear" in asked[0]
    assert _rebar_count(studio) == before + 3
    assert (_sessions(app) == 0) is (mode == "auto")


def test_sdk_client_over_stdio_confirms_a_replay_statelessly(app, studio, demo) -> None:  # type: ignore[no-untyped-def]
    from mcp import Client, StdioServerParameters

    session, short = _teach_rebar(studio)
    assert studio.act(f"/playbooks/{short}", "generate_recipe").status_code == 200
    _dry_run(studio, session, 3)  # first run is always a dry run (recipe governance)
    before = _rebar_count(studio)
    asked: list[str] = []
    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=studio.token),
                                   cwd=str(ROOT))

    async def scenario() -> dict[str, Any]:
        async with Client(params, elicitation_callback=_elicitation(asked)) as client:
            assert client.protocol_version == VERSION
            return await _sdk_replay(client, session)

    report = asyncio.run(scenario())
    assert report["ok"], report
    assert len(asked) == 1 and _rebar_count(studio) == before + 3


def test_listen_streams_resource_updates(app, studio, live_server) -> None:  # type: ignore[no-untyped-def]
    """subscriptions/listen over HTTP: the acknowledgement first, then the update of a
    watched page when an action changes it; every message names the subscription."""
    uri = "harmonic://page/studios/team/note"
    headers = {"Accept": ACCEPT, "Content-Type": "application/json",
               "Authorization": f"Bearer {studio.token}", "MCP-Protocol-Version": VERSION,
               "Mcp-Method": "subscriptions/listen"}
    body = {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": {"resourceSubscriptions": [uri],
                                                          "toolsListChanged": True}}}
    with httpx.Client(timeout=30) as http, http.stream(
            "POST", live_server + "/mcp", json=body, headers=headers) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = (line for line in stream.iter_lines() if line.startswith("data:"))
        ack = json.loads(next(lines)[5:])
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"resourceSubscriptions": [uri]}
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
        modern = Stateless(_Live(http, live_server), studio.token)
        done = modern.tool("execute_action", arguments={
            "action": "create_note", "path": "/studios/team/note",
            "params": {"title": "Heard", "text": "by the listener"}})
        assert not done.get("isError"), done
        update = json.loads(next(lines)[5:])
        assert update["method"] == "notifications/resources/updated"
        assert update["params"]["uri"] == uri
        assert update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"


def test_listen_over_stdio_until_cancelled(app, studio) -> None:  # type: ignore[no-untyped-def]
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=studio.token))
    try:
        found = server.request(1, "server/discover", {"_meta": meta()})["result"]
        assert found["supportedVersions"][0] == VERSION
        uri = "harmonic://page/studios/team/note"
        server.send({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {
            "_meta": meta(), "notifications": {"resourceSubscriptions": [uri]}}})
        ack = server.read()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        act = {"name": "execute_action", "arguments": {
            "action": "create_note", "path": "/studios/team/note",
            "params": {"title": "Over stdio", "text": "heard"}}, "_meta": meta()}
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": act})
        first, second = server.read(), server.read()
        update = first if "method" in first else second
        assert update["params"] == {"uri": uri, "_meta": {
            "io.modelcontextprotocol/subscriptionId": 2}}
        # Whatever call 3 queued for the stream is told before the answer of the next call the
        # app runs (server/discover is answered without it): read up to that answer, so that
        # what follows the cancel is the cancel's doing.
        server.send({"jsonrpc": "2.0", "id": 30, "method": "tools/list",
                     "params": {"_meta": meta()}})
        told = server.read()
        while told.get("id") != 30:
            assert told.get("params") == update["params"], told  # call 3's, told once more
            told = server.read()
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 2}})
        server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": act})
        assert server.read()["id"] == 4  # the cancelled stream hears nothing more
        # The same process still serves a 2025 session.
        assert server.request(5, "initialize", INIT)["result"]["protocolVersion"] == \
            "2025-11-25"
    finally:
        server.close()


class _Live:
    """Stateless's client interface over a real HTTP connection."""

    def __init__(self, http: httpx.Client, base: str) -> None:
        self.http, self.base = http, base

    def post(self, path: str, data: str, headers: dict[str, str]) -> Any:
        response = self.http.post(self.base + path, content=data, headers=headers)
        return _Flaskish(response)


class _Flaskish:
    def __init__(self, response: httpx.Response) -> None:
        self.status_code, self.response = response.status_code, response

    def get_data(self, as_text: bool = True) -> str:
        return messages_of(self.response) and json.dumps(messages_of(self.response)[-1])


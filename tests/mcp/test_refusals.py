"""Refusals say why, and what matters is in the text: through the official MCP SDK, over HTTP
(a real server) and stdio (bin/mcp-server), in both protocol eras: a closed decision, a page
that does not exist, a floorplan that does not parse, a token created over MCP."""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from flask import Flask

from tests.mcp.clients import TRANSPORTS, over
from tests.mcp.conftest import MCP_SERVER, ROOT, app_env
from tests.playbooks.conftest import run_async

MODES = [pytest.param("auto", id="2026"), pytest.param("legacy", id="2025")]
BROKEN_DSL = "floorplan\n  floor f1 {\n    room Office at (0,0\n"


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def _mcp_error(exc: BaseException) -> Any:
    """The MCPError the SDK raised, out of the exception groups its task groups wrap it in."""
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _mcp_error(inner)
        if found is not None:
            return found
    return _mcp_error(exc.__cause__) if exc.__cause__ is not None else None


def _refusal(run: Callable[[], Any]) -> Any:
    try:
        run()
    except BaseException as exc:  # noqa: BLE001 - looking for the SDK's error inside groups
        found = _mcp_error(exc)
        assert found is not None, repr(exc)
        return found
    raise AssertionError("the call was not refused")


def _over_http(base: str, token: str, mode: str,
               scenario: Callable[[Any], Awaitable[Any]]) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                      timeout=httpx2.Timeout(60.0)) as http_client:
            async with Client(streamable_http_client(base + "/mcp", http_client=http_client),
                              mode=mode) as client:
                return await scenario(client)

    return run_async(run)


def _revoked_token(studio: Any, make_agent: Any) -> str:
    doomed = make_agent("alice")
    refused = studio.act("/u/alice/settings/tokens", "revoke_api_token",
                         token_id=doomed.token[:12])
    assert refused.status_code == 200, refused.get_json()
    return str(doomed.token)


@pytest.mark.parametrize("mode", MODES)
def test_a_revoked_token_over_http_says_revoked(studio, make_agent, live_server,  # type: ignore[no-untyped-def]
                                                mode: str) -> None:
    token = _revoked_token(studio, make_agent)

    async def scenario(client: Any) -> Any:
        return await client.list_tools()

    error = _refusal(lambda: _over_http(live_server, token, mode, scenario))
    assert "the token was revoked at " in error.message, error.message
    assert error.code == -32001 and error.data == {"reason": "revoked"}


def test_http_refusals_are_json_rpc_with_a_reason(studio, client) -> None:  # type: ignore[no-untyped-def]
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    unknown = client.post("/mcp", json=body, headers={"Authorization": "Bearer hmn_nope",
                                                      "Accept": "application/json"})
    assert unknown.status_code == 401 and unknown.headers["WWW-Authenticate"].startswith("Bearer")
    assert unknown.get_json()["id"] == 7
    assert unknown.get_json()["error"]["data"] == {"reason": "unknown"}
    missing = client.post("/mcp", json=body)
    assert missing.status_code == 401 and missing.get_json()["error"]["data"]["reason"] == "missing"
    foreign = client.post("/mcp", json=body, headers={"Origin": "http://evil.example",
                                                      "Authorization": f"Bearer {studio.token}"})
    assert foreign.status_code == 403
    assert foreign.get_json()["error"]["data"]["reason"] == "origin_not_allowed"


@pytest.mark.parametrize("mode", MODES)
def test_a_bad_token_on_stdio_fails_the_handshake(app: Flask, studio, make_agent,  # type: ignore[no-untyped-def]
                                                  mode: str) -> None:
    from mcp import Client, StdioServerParameters

    token = _revoked_token(studio, make_agent)
    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=token), cwd=str(ROOT))

    async def scenario() -> None:
        async with Client(params, mode=mode) as client:
            await client.list_tools()

    error = _refusal(lambda: run_async(scenario))
    assert "HARMONIC_API_TOKEN is not usable: the token was revoked" in error.message
    assert error.code == -32001 and error.data == {"reason": "revoked"}


def _closed_decision(app: Flask, studio: Any) -> tuple[str, str]:
    """A decision with two options, closed by its creator: (path, when it closed)."""
    from app.extensions import db
    from app.models.collab import Decision
    from app.services import cycles

    made = studio.act("/studios/team/decide", "create_decision", question="Lunch?",
                      options=["Soup", "Salad"])
    assert made.status_code == 201, made.get_json()
    path = made.get_json()["location"]
    assert studio.act(path, "close_decision").status_code == 200
    with app.app_context():
        decision = db.session.query(Decision).one()
        when = decision.deadline.astimezone(cycles.zone_of(decision_studio(decision)))
    return path, when.isoformat(timespec="minutes")


def decision_studio(decision: Any) -> Any:
    from app.extensions import db
    from app.models import Studio

    return db.session.get(Studio, decision.studio_id)


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_agents_get_reasons_and_values_in_text(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                               studio, transport: str, mode: str,
                                               version: str) -> None:
    from mcp.shared.exceptions import MCPError

    decision, closed_at = _closed_decision(app, studio)

    async def scenario(client: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        tools = (await client.list_tools()).tools
        out["untitled"] = [t.name for t in tools if not t.title]
        out["vote"] = await client.call_tool("execute_action", {
            "action": "vote", "path": decision,
            "params": {"option_title": "Soup", "accept": True}})
        try:
            await client.read_resource("harmonic://page/studios/team/n/deadbeef")
        except MCPError as exc:
            out["missing"] = exc.message
        out["render"] = await client.call_tool("render_floorplan", {"dsl": BROKEN_DSL})
        out["token"] = await client.call_tool("execute_action", {
            "action": "create_api_token", "path": "/u/alice/settings/tokens",
            "params": {"name": "from mcp"}})
        out["floorplan"] = await client.call_tool("execute_action", {
            "action": "create_floorplan", "path": "/studios/team/floorplans",
            "params": {"name": "broken", "dsl": BROKEN_DSL}})
        return out

    got = over(transport, mode, version, request, app, studio.token, scenario)
    assert got["untitled"] == []

    vote = got["vote"]
    assert vote.is_error
    assert f"the decision closed at {closed_at}; its outcome is on the page" in _text(vote)
    assert vote.structured_content["result"]["reason"].startswith("the decision closed at")

    assert "missing" in got, "reading a page that does not exist must fail"
    assert "harmonic://page/studios/team/n/deadbeef" in got["missing"]
    assert "no page at /studios/team/n/deadbeef" in got["missing"]
    assert "resources/templates/list" in got["missing"]

    render = got["render"]
    assert render.is_error and render.structured_content["success"] is False
    assert render.structured_content["errors"][0]["line"] >= 3

    token = got["token"]
    assert not token.is_error
    secret = token.structured_content["result"]["token"]
    assert secret.startswith("hmn_") and secret in _text(token)
    assert studio.client.get("/studios/team", headers={
        "Authorization": f"Bearer {secret}", "Accept": "text/markdown"}).status_code == 200

    floorplan = got["floorplan"]
    assert floorplan.is_error and "Created" not in _text(floorplan)
    assert "(422)" in _text(floorplan) and re.search(r"- dsl: line \d+, column \d+: ",
                                                    _text(floorplan))
    assert studio.get("/studios/team/f/broken").status_code == 404


def test_unavailable_actions_say_why_over_http(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import join_studio

    decision, closed_at = _closed_decision(app, studio)
    # (post, not act: "accept" is also act's keyword for the Accept header)
    refused = studio.post(f"{decision}/actions/vote", json={"option_title": "Soup",
                                                           "accept": True})
    assert refused.status_code == 409
    error = refused.get_json()["error"]
    assert error["reason"] == (f"the decision closed at {closed_at}; its outcome is on the "
                               f"page ({decision})")
    assert "vote" not in error["actions"]

    made = studio.act("/studios/team/commit", "create_commitment", title="Paint", critical_mass=1,
                      limit=1, join=True)
    assert made.status_code == 201, made.get_json()
    bob = join_studio(make_agent, "bob")
    full = bob.act(made.get_json()["location"], "join_commitment")
    assert full.status_code == 409
    message = full.get_json()["error"]["message"]
    assert "the commitment is full: its limit of 1 participants" in message


@pytest.mark.parametrize("mode", MODES)
def test_the_rate_limit_over_http_says_rate_limited(app: Flask, studio, live_server,  # type: ignore[no-untyped-def]
                                                    monkeypatch, mode: str) -> None:
    # One request a minute after a burst of 3: the client runs dry within a few calls.
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST", 3)
    app.extensions.pop("harmonic.ratelimit", None)

    async def scenario(client: Any) -> Any:
        for _ in range(5):  # not list_tools: the SDK may answer a repeat from its cache
            await client.call_tool("navigate", {"path": "/studios"})

    try:
        error = _refusal(lambda: _over_http(live_server, studio.token, mode, scenario))
    finally:
        app.extensions.pop("harmonic.ratelimit", None)
    assert "too many requests for this token (1 per minute)" in error.message, error.message
    assert error.code == -32029
    assert error.data["reason"] == "rate_limited" and error.data["retryAfter"] >= 1

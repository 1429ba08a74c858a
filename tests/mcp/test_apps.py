"""MCP Apps (SEP-1865) over the official SDK client in both eras, HTTP and stdio: the ui://
views are served as text/html;profile=mcp-app with their content-security metadata, the tools
that use them say so in ``_meta.ui.resourceUri``, and show_decision (the decision view's tool)
gives text for any client and the data the view draws, hostile option titles included."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from flask import Flask

from tests.floorplans.test_fp_pages import PLAN
from tests.mcp.clients import TRANSPORTS, over, text_of

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
VIEWS = {"ui://harmonic/floorplan-viewer": "render_floorplan",
         "ui://harmonic/decision-view": "show_decision"}
HOSTILE = '<img src=x onerror="parent.pwned=1">'


class _Document(HTMLParser):
    """The parts of a view's HTML that its security rests on."""

    def __init__(self) -> None:
        super().__init__()
        self.policy = ""
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.outside: list[str] = []  # attributes that would load something
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "meta" and (values.get("http-equiv") or "").lower() == \
                "content-security-policy":
            self.policy = values.get("content") or ""
        for name in ("src", "href", "action", "srcset"):
            if values.get(name):
                self.outside.append(f"{tag} {name}={values[name]}")
        if any(name.startswith("on") for name in values):
            self.outside.append(f"{tag} has an inline event handler")
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def check_view(html: str) -> None:
    """Self-contained: one inline script and one style, allowed by hash and nothing else."""
    assert html.startswith("<!DOCTYPE html>")
    doc = _Document()
    doc.feed(html)
    assert doc.outside == []
    (script,), (style,) = doc.scripts, doc.styles
    rules = dict(part.strip().split(" ", 1) for part in doc.policy.split(";"))
    assert rules["default-src"] == "'none'" and rules["connect-src"] == "'none'"
    assert rules["script-src"] == _sha(script) and rules["style-src"] == _sha(style)
    assert rules["img-src"] == "data:" and rules["frame-src"] == "'none'"
    # Server strings are set as text: no markup sink in the script.
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(",
                         script)


async def _surface(client: Any) -> dict[str, Any]:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    listed = {str(r.uri): r for r in (await client.list_resources()).resources}
    read = {uri: (await client.read_resource(uri)).contents for uri in VIEWS}
    return {"capabilities": client.server_capabilities, "tools": tools, "listed": listed,
            "read": read}


def apps_host() -> Any:
    """What an MCP Apps host declares: the extension, with the view type it renders."""
    from mcp.client.extension import advertise

    return advertise(EXTENSION, {"mimeTypes": [MIME]})


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_views_are_served_with_their_csp_and_linked_from_tools(  # type: ignore[no-untyped-def]
        request: pytest.FixtureRequest, app: Flask, studio, transport: str, mode: str,
        version: str) -> None:
    got = over(transport, mode, version, request, app, studio.token, _surface, (apps_host(),))
    extensions = got["capabilities"].extensions or {}
    assert extensions[EXTENSION] == {"mimeTypes": [MIME]}
    for uri, tool in VIEWS.items():
        assert got["tools"][tool].meta == {"ui": {"resourceUri": uri}}
        listed = got["listed"][uri]
        assert listed.mime_type == MIME
        (item,) = got["read"][uri]
        assert str(item.uri) == uri and item.mime_type == MIME
        csp = item.meta["ui"]["csp"]
        # No outside origin of any kind: the view talks only to its host.
        assert csp == {"connectDomains": [], "resourceDomains": [], "frameDomains": [],
                       "baseUriDomains": []}
        assert listed.meta["ui"]["csp"] == csp and item.meta["ui"]["prefersBorder"] is True
        check_view(item.text)
    # Tools without a view carry no ui metadata.
    assert got["tools"]["navigate"].meta is None


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_a_client_without_apps_sees_no_view_links(  # type: ignore[no-untyped-def]
        request: pytest.FixtureRequest, app: Flask, studio, transport: str, mode: str,
        version: str) -> None:
    """No io.modelcontextprotocol/ui declared, or declared without our view type: the same
    tools, with no _meta.ui (the extension's negotiation), and text and an image as before."""
    from mcp.client.extension import advertise

    async def listed_and_drawn(client: Any) -> dict[str, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        drawn = await client.call_tool("render_floorplan", {"dsl": PLAN})
        return {"tools": tools, "drawn": drawn}

    other_host = advertise(EXTENSION, {"mimeTypes": ["text/html;profile=other"]})
    for extensions in ((), (other_host,)):
        got = over(transport, mode, version, request, app, studio.token, listed_and_drawn,
                   extensions)
        for tool in VIEWS.values():
            assert got["tools"][tool].meta is None or "ui" not in got["tools"][tool].meta
        drawn = got["drawn"]
        assert not drawn.is_error, text_of(drawn)
        assert {block.type for block in drawn.content} >= {"text", "image"}


async def _decide(client: Any, path: str) -> dict[str, Any]:
    first = await client.call_tool("show_decision", {"path": path})
    voted = await client.call_tool("execute_action", {
        "action": "vote", "path": path,
        "params": {"votes": [{"option_title": HOSTILE, "accept": True, "prefer": True}]}})
    again = await client.call_tool("show_decision", {"path": path})
    wrong = await client.call_tool("show_decision", {"path": "/studios/team"})
    return {"first": first, "voted": voted, "again": again, "wrong": wrong}


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS[:2])
def test_show_decision_gives_text_and_the_views_data(  # type: ignore[no-untyped-def]
        request: pytest.FixtureRequest, app: Flask, studio, transport: str, mode: str,
        version: str) -> None:
    made = studio.act("/studios/team/decide", "create_decision", question="Lunch <b>where</b>?",
                      options=[HOSTILE, "Canteen"])
    path = made.get_json()["location"]
    got = over(transport, mode, version, request, app, studio.token,
               lambda client: _decide(client, path))
    first = got["first"].structured_content
    assert first["question"] == "Lunch <b>where</b>?" and first["canVote"] is True
    assert [o["title"] for o in first["options"]] == [HOSTILE, "Canteen"]
    assert all(o["mine"] == {"accept": False, "prefer": False} for o in first["options"])
    # A client without Apps reads the page's Markdown, with how to vote.
    text = text_of(got["first"])
    assert f'execute_action with action "vote", path "{path}"' in text and "Canteen" in text
    assert not got["voted"].is_error
    hostile = got["again"].structured_content["options"][0]
    assert hostile["title"] == HOSTILE and hostile["mine"] == {"accept": True, "prefer": True}
    assert (hostile["accepted"], hostile["preferred"], hostile["votes"]) == (1, 1, 1)
    assert got["wrong"].is_error and "not a decision" in text_of(got["wrong"])


def test_show_decision_keeps_the_pages_rules(client, make_agent, studio) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.test_era_2026 import Stateless

    path = studio.act("/studios/team/decide", "create_decision", question="Members only?",
                      options=["Yes"]).get_json()["location"]
    outsider = Stateless(client, make_agent("mallory").token)
    refused = outsider.tool("show_decision", arguments={"path": path})
    assert refused["isError"] is True
    assert "403" in refused["content"][0]["text"] and "not a member" in \
        refused["content"][0]["text"]
    missing = Stateless(client, studio.token).tool(
        "show_decision", arguments={"path": "/studios/team/d/nope"})
    assert missing["isError"] is True and "404" in missing["content"][0]["text"]


def test_show_decision_of_another_kind_names_its_ballot(client, studio) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.test_era_2026 import Stateless

    path = studio.act("/studios/team/decide", "create_decision", question="Rank them",
                      kind="ranked_choice", options=["Yes", "No"]).get_json()["location"]
    shown = Stateless(client, studio.token).tool("show_decision", arguments={"path": path})
    said = shown["content"][0]["text"]
    assert f'vote with execute_action "rank_options" on path "{path}"' in said, said
    assert shown["structuredContent"]["canVote"] is False  # the view draws acceptance votes


def test_app_only_tools_are_offered_to_apps_hosts_only(app: Flask) -> None:
    """A tool only a view calls (``_meta.ui.visibility: ["app"]``; none is registered today):
    an Apps host lists and calls it, any other client neither sees nor reaches it."""
    from app.actions.effects import READ
    from app.mcp.context import SessionState
    from app.mcp.registry import REGISTRY, Registry
    from app.mcp.server import McpServer

    extra = Registry()

    @extra.tool("view_only_ping", "Answer pong (for a view)", effect=READ,
                meta={"ui": {"resourceUri": "ui://harmonic/decision-view",
                             "visibility": ["app"]}})
    def _ping(ctx: Any, args: dict[str, Any]) -> str:
        return "pong"

    server = McpServer(REGISTRY.merged(extra))

    class Quiet:
        def notify(self, message: Any) -> None: ...

    def ask(capabilities: dict[str, Any], method: str, params: dict[str, Any]) -> Any:
        session = SessionState("apps-test")
        session.initialized = True
        session.client_capabilities = capabilities
        with app.app_context():
            return server.handle({"jsonrpc": "2.0", "id": 1, "method": method,
                                  "params": params}, session, Quiet(), stateless=False)

    host = {"extensions": {EXTENSION: {"mimeTypes": [MIME]}}}
    for caps, offered in ((host, True), ({}, False),
                          ({"extensions": {EXTENSION: {"mimeTypes": ["text/html"]}}}, False)):
        listed = {t["name"]: t for t in ask(caps, "tools/list", {})["result"]["tools"]}
        called = ask(caps, "tools/call", {"name": "view_only_ping", "arguments": {}})
        assert ("view_only_ping" in listed) is offered, caps
        assert ("ui" in listed["render_floorplan"].get("_meta", {})) is offered, caps
        if offered:
            assert called["result"]["content"][0]["text"] == "pong"
        else:
            assert called["error"]["code"] == -32602 and "Unknown tool" in \
                called["error"]["message"]

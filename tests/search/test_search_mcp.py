"""The MCP ``search`` tool through the official SDK (stdio and Streamable HTTP, both protocol
eras): links that resolve, an index current after ``execute_action``, the search pages through
``navigate``, and nothing of a studio for a non-member."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.helpers import age_memberships
from tests.mcp.clients import MODES, http_client, run, stdio_client
from tests.search.conftest import note


async def _write_and_find(client: Any) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    search = tools["search"]
    assert search.title == "Search" and search.annotations.read_only_hint is True
    made = await client.call_tool("execute_action", {
        "action": "create_note", "path": "/studios/team/note",
        "params": {"title": "Kayak trip", "text": "paddles and a map of the fjord"}})
    assert not made.is_error, made
    location = made.structured_content["location"].split("://", 1)[-1]
    location = location[location.index("/studios"):]
    found = await client.call_tool("search", {"query": "fjord"})
    assert not found.is_error, found
    results = found.structured_content["results"]
    assert [r["path"] for r in results] == [location]
    assert results[0]["uri"] == "harmonic://page" + location
    assert "**fjord**" in results[0]["snippet"]
    link_blocks = [b for b in found.content if b.type == "resource_link"]
    assert [str(b.uri) for b in link_blocks] == ["harmonic://page" + location]
    assert f"]({location})" in found.content[0].text
    read = await client.read_resource(str(link_blocks[0].uri))
    assert "paddles" in read.contents[0].text
    # An edit through execute_action re-indexes in the same transaction.
    edited = await client.call_tool("execute_action", {
        "action": "update_note", "path": location + "/edit",
        "params": {"title": "Kayak trip", "text": "paddles and a map of the lake"}})
    assert not edited.is_error, edited
    assert (await client.call_tool("search", {"query": "fjord"})
            ).structured_content["results"] == []
    lake = await client.call_tool("search", {"query": "lake", "studio": "team"})
    assert [r["path"] for r in lake.structured_content["results"]] == [location]
    # The search pages through navigate, with a next link.
    for i in range(3):
        await client.call_tool("execute_action", {
            "action": "create_note", "path": "/studios/team/note",
            "params": {"title": f"Lake note {i}", "text": "lake"}})
    page = await client.call_tool("navigate", {"path": "/search?q=lake&limit=2"})
    assert not page.is_error, page
    assert "next: [Next page](/search?q=lake&page=2&limit=2)" in page.content[0].text
    more = await client.call_tool("search", {"query": "lake", "limit": 2, "page": 2})
    assert len(more.structured_content["results"]) == 2
    assert "next_page" not in more.structured_content
    bad = await client.call_tool("search", {"query": "lake colour:blue"})
    assert bad.is_error and "unknown filter 'colour:'" in bad.content[0].text
    assert "author:" in bad.content[0].text


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_search_tool_over_http(studio, live_server: str, mode: str,  # type: ignore[no-untyped-def]
                               version: str) -> None:
    async def scenario() -> None:
        async with http_client(live_server, studio.token, mode) as client:
            assert client.protocol_version == version
            await _write_and_find(client)

    run(scenario)


def test_search_tool_over_stdio(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    async def scenario() -> None:
        async with stdio_client(app, studio.token, mode="legacy") as client:
            await _write_and_find(client)

    run(scenario)


def test_non_member_finds_nothing_over_mcp(app: Flask, team: dict[str, Any]) -> None:
    alice, mallory = team["alice"], team["mallory"]
    note(alice, "Secret recipe", "the team's secret sauce")
    mine = note(mallory, "My sauce", "a sauce of my own", studio="other")

    async def scenario() -> None:
        async with stdio_client(app, mallory.token) as client:
            found = await client.call_tool("search", {"query": "sauce"})
            assert [r["path"] for r in found.structured_content["results"]] == [mine]
            scoped = await client.call_tool("search", {"query": "sauce", "studio": "team"})
            assert scoped.is_error and "not a member" in scoped.content[0].text
            filtered = await client.call_tool("search", {"query": "sauce studio:team"})
            assert filtered.structured_content["results"] == []
            page = await client.call_tool("navigate", {"path": "/studios/team/search?q=sauce"})
            assert page.is_error and "403" in page.content[0].text
            listed = await client.call_tool("navigate", {"path": "/search?q=secret"})
            assert "Secret recipe" not in listed.content[0].text

    run(scenario)


def test_a_studio_waiting_for_a_heartbeat_shows_nothing(app: Flask, team: dict[str, Any]
                                                        ) -> None:
    """Search follows the studio gates: until bob sends this cycle's heartbeat, the studio's
    items are not his to find, on the pages and through the tool over stdio."""
    from app.extensions import db
    from app.models import Studio

    alice, bob = team["alice"], team["bob"]
    path = note(alice, "Gated news", "heartbeat first")
    with app.app_context():
        db.session.query(Studio).filter(Studio.handle == "team").update(
            {"heartbeats_required": True})
        db.session.commit()
    age_memberships(app)  # a member's first day is never gated
    assert "Gated news" not in bob.get("/search?q=heartbeat").get_data(as_text=True)
    assert bob.get("/studios/team/search?q=heartbeat").status_code == 403

    async def scenario(expect_found: bool) -> None:
        async with stdio_client(app, bob.token) as client:
            found = await client.call_tool("search", {"query": "heartbeat"})
            assert not found.is_error, found
            paths = [r["path"] for r in found.structured_content["results"]]
            assert paths == ([path] if expect_found else [])
            scoped = await client.call_tool("search", {"query": "heartbeat", "studio": "team"})
            assert scoped.is_error is not expect_found, scoped
            if not expect_found:
                assert "heartbeat" in scoped.content[0].text

    run(lambda: scenario(False))
    assert bob.act("/studios/team", "send_heartbeat").status_code in (200, 201)
    run(lambda: scenario(True))

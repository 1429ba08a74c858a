"""Agents work without guessing, through the official MCP SDK over stdio and HTTP, in both eras:
images come back as images, every link the server emits resolves, seed 003's navigate(url)
works, MCP_DEBUG logs every message with secrets redacted, and a decision with its options and
votes, a commitment made and joined, the studio's overview, or a floorplan created, given a room
and drawn takes a counted handful of tool calls.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask

from tests.floorplans.test_fp_pages import PLAN, png_size
from tests.helpers import join_studio, parse_md, stop, wait_until_healthy
from tests.mcp.clients import MODES, TRANSPORTS, http_client, over, run, stdio_client
from tests.mcp.conftest import ROOT, app_env, free_port

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _store_plan(studio: Any) -> None:
    created = studio.act("/studios/team/floorplans", "create_floorplan", name="office", dsl=PLAN)
    assert created.status_code == 201, created.get_data(as_text=True)


def _blocks(result: Any, kind: str) -> list[Any]:
    return [block for block in result.content if block.type == kind]


# 1. Images are images ------------------------------------------------------------------------

async def _images(client: Any) -> None:
    from mcp import types

    page = await client.call_tool("navigate", {"path": "/studios/team/f/office"})
    assert not page.is_error, page
    text = page.content[0].text
    png_link = "/studios/team/f/office.png"
    assert f"[PNG]({png_link})" in text  # the page's own link, as an agent reads it

    image = await client.call_tool("navigate", {"path": png_link})
    assert not image.is_error, image
    pictures = _blocks(image, "image")
    assert len(pictures) == 1 and pictures[0].mime_type == "image/png"
    assert png_size(base64.b64decode(pictures[0].data))[0] > 0
    assert image.structured_content["mimeType"] == "image/png"
    assert image.structured_content["actions"] == []
    assert all(len(b.text) < 1000 for b in _blocks(image, "text"))  # no bytes as text

    svg = await client.call_tool("navigate", {"path": "/studios/team/f/office.svg"})
    assert not svg.is_error, svg
    embedded = _blocks(svg, "resource")
    assert len(embedded) == 1 and embedded[0].resource.mime_type == "image/svg+xml"
    assert embedded[0].resource.text.lstrip().startswith("<svg")

    read = await client.read_resource("harmonic://page/studios/team/f/office.png")
    (blob,) = read.contents
    assert isinstance(blob, types.BlobResourceContents) and blob.mime_type == "image/png"
    assert base64.b64decode(blob.blob)[:8] == PNG_MAGIC
    read_svg = await client.read_resource("harmonic://page/studios/team/f/office.svg")
    (svg_text,) = read_svg.contents
    assert isinstance(svg_text, types.TextResourceContents)
    assert svg_text.mime_type == "image/svg+xml" and "<svg" in svg_text.text
    # A page is still Markdown.
    md = await client.read_resource("harmonic://page/studios/team/f/office")
    assert md.contents[0].mime_type == "text/markdown" and md.contents[0].text.startswith("---")


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_images_are_images_over_http(studio, live_server: str, mode: str,  # type: ignore[no-untyped-def]
                                     version: str) -> None:
    _store_plan(studio)

    async def scenario() -> None:
        async with http_client(live_server, studio.token, mode) as client:
            assert client.protocol_version == version
            await _images(client)

    run(scenario)


def test_images_are_images_over_stdio(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    _store_plan(studio)

    async def scenario() -> None:
        async with stdio_client(app, studio.token) as client:
            await _images(client)

    run(scenario)


def test_render_floorplan_draws_a_stored_plan(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    _store_plan(studio)
    resized = studio.act("/studios/team/f/office", "resize_room", target="Office", width=20,
                         height=12)
    assert resized.status_code == 200, resized.get_data(as_text=True)
    outsider = make_agent("carol")

    async def scenario() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with stdio_client(app, studio.token) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            props = listed["render_floorplan"].input_schema["properties"]
            assert props["plan"]["type"] == "string" and props["plan"]["description"]
            assert props["version"]["type"] == "integer" and props["version"]["minimum"] == 1
            for version in (None, 1):
                args = {"plan": "team/office", **({"version": version} if version else {})}
                drawn = await client.call_tool("render_floorplan", args)
                assert not drawn.is_error and drawn.structured_content["success"], drawn
                (picture,) = _blocks(drawn, "image")
                assert picture.mime_type == "image/png"
                found[str(version)] = (png_size(base64.b64decode(picture.data)),
                                       drawn.structured_content)
            both = await client.call_tool("render_floorplan", {"plan": "team/office",
                                                               "dsl": PLAN})
            assert both.structured_content["success"] is False
            missing = await client.call_tool("render_floorplan", {"plan": "team/office",
                                                                  "version": 9})
            found["missing"] = missing.structured_content
            bad = await client.call_tool("render_floorplan", {"plan": "no slash"})
            assert bad.is_error  # the schema's pattern, checked before the tool runs
        async with stdio_client(app, outsider.token) as client:
            refused = await client.call_tool("render_floorplan", {"plan": "team/office"})
            found["outsider"] = refused.structured_content
        return found

    found = run(scenario)
    (now_size, now), (first_size, first) = found["None"], found["1"]
    assert now["plan"] == "team/office" and now["version"] == 2 and first["version"] == 1
    office = {r["name"]: r for r in now["rooms"]}["Office"]
    assert office["size"]["width"] == 20
    assert {r["name"]: r for r in first["rooms"]}["Office"]["size"]["width"] == 10
    assert now_size != first_size  # a wider plan, a different drawing
    assert found["missing"]["success"] is False
    assert "no version 9" in found["missing"]["errors"][0]["message"]
    assert found["outsider"]["success"] is False
    assert "member" in found["outsider"]["errors"][0]["message"]


# 2. Links resolve, and this app's own URLs are accepted ----------------------------------------

async def _links(client: Any, ours: list[str], foreign: str) -> None:
    done = await client.call_tool("execute_action", {
        "action": "create_note", "path": "/studios/team/note",
        "params": {"title": "Linked", "text": "follow me"}})
    assert not done.is_error, done
    (link,) = _blocks(done, "resource_link")
    assert link.name == done.structured_content["location"]
    read = await client.read_resource(str(link.uri))
    assert "follow me" in read.contents[0].text
    for origin in ours:
        page = await client.call_tool("navigate", {"url": f"{origin}/studios/team"})
        assert not page.is_error, (origin, page)
        assert page.structured_content["path"] == "/studios/team"
        by_url = await client.read_resource(f"{origin}{link.name}")
        assert "follow me" in by_url.contents[0].text
    refused = await client.call_tool("navigate", {"url": f"{foreign}/studios/team"})
    assert refused.is_error and "not a URL of this app" in refused.content[0].text
    with pytest.raises(Exception, match="not a URL of this app"):
        await client.read_resource(f"{foreign}/studios/team")


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_links_resolve_over_http(app: Flask, studio, live_server: str, mode: str,  # type: ignore[no-untyped-def]
                                 version: str) -> None:
    base = app.config["HARMONIC_BASE_URL"]
    assert base and urlsplit(base).netloc != urlsplit(live_server).netloc

    async def scenario() -> None:
        async with http_client(live_server, studio.token, mode) as client:
            # The request's own host and HARMONIC_BASE_URL's origin are both this app.
            await _links(client, [live_server, base], "https://elsewhere.example")

    run(scenario)


def test_links_resolve_over_stdio(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    async def scenario() -> None:
        async with stdio_client(app, studio.token,
                                HARMONIC_BASE_URL="https://harmonic.example") as client:
            # stdio has no request host: only HARMONIC_BASE_URL's origin is ours.
            await _links(client, ["https://harmonic.example"], "http://127.0.0.1:5000")

    run(scenario)


# 3. Seed 003: navigate {url} -------------------------------------------------------------------

def test_navigate_takes_url_as_seed_003_describes(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    async def scenario() -> None:
        async with stdio_client(app, studio.token) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["navigate"].input_schema
            assert {"path", "url"} <= set(schema["properties"])
            assert "url" not in schema.get("required", [])
            page = await client.call_tool("navigate", {"url": "/studios/team"})
            assert not page.is_error and page.structured_content["path"] == "/studios/team"
            assert page.structured_content["title"]
            for wrong in ({}, {"path": "/studios", "url": "/studios"}):
                answer = await client.call_tool("navigate", wrong)
                assert answer.is_error and "exactly one of path or url" in answer.content[0].text

    run(scenario)


# MCP_DEBUG: every message in and out, redacted ---------------------------------------------------

async def _leak_a_token(client: Any) -> str:
    """Run create_api_token, whose result carries a new token; return that token."""
    page = await client.call_tool("navigate", {"path": "/u/alice/settings/tokens"})
    assert not page.is_error, page
    made = await client.call_tool("execute_action", {
        "action": "create_api_token", "path": "/u/alice/settings/tokens",
        "params": {"name": "debug-test", "scopes": "read"}})
    assert not made.is_error, made
    token = made.structured_content["result"]["token"]
    assert token.startswith("hmn_")
    return str(token)


def _check_log(log: str, transport: str, secrets: list[str]) -> None:
    assert f"{transport} in " in log and f"{transport} out " in log, log[-2000:]
    assert '"method": "tools/call"' in log and '"name": "navigate"' in log
    assert "hmn_[REDACTED]" in log  # the new token, in the action's result
    for secret in secrets:
        assert secret not in log
        assert secret[4:] not in log


@pytest.mark.parametrize("switch", [{"MCP_DEBUG": "1"}, {"HARMONIC_MCP_LOG": "DEBUG"}])
def test_debug_log_over_stdio_redacts_tokens(app: Flask, studio, switch: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryFile("w+") as errlog:
        async def scenario() -> str:
            async with stdio_client(app, studio.token, errlog=errlog, **switch) as client:
                return await _leak_a_token(client)

        leaked = run(scenario)
        errlog.seek(0)
        log = errlog.read()
    _check_log(log, "stdio", [leaked, studio.token])


def test_no_message_log_without_the_switch(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryFile("w+") as errlog:
        async def scenario() -> None:
            async with stdio_client(app, studio.token, errlog=errlog) as client:
                assert not (await client.call_tool("navigate", {"path": "/studios"})).is_error

        run(scenario)
        errlog.seek(0)
        assert "stdio in " not in errlog.read()


def test_debug_log_over_http_goes_to_the_server_log(app: Flask, studio, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    log_path = tmp_path / "server.log"
    cmd = [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-k", "gthread",
           "--threads", "4", "-w", "1", "wsgi:app"]
    with log_path.open("w") as log_file:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=app_env(app, MCP_DEBUG="1"),
                                stdout=subprocess.DEVNULL, stderr=log_file)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url + "/healthz", proc, "gunicorn")

            async def scenario() -> str:
                async with http_client(url, studio.token, "legacy") as client:
                    return await _leak_a_token(client)

            leaked = run(scenario)
        finally:
            stop(proc)
    log = log_path.read_text()
    _check_log(log, "http", [leaked, studio.token])
    assert '"Authorization": "[REDACTED]"' in log  # the request's header, logged redacted


# 4. Fewer calls ------------------------------------------------------------------------------

class Counting:
    """Counts the tool calls an agent makes."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, 0

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        self.calls += 1
        result = await self.client.call_tool(name, args)
        assert not result.is_error, result
        return result


async def _decide_and_vote(client: Any) -> tuple[int, str]:
    """navigate /studios/team (links the decide page); execute_action create_decision with its
    options; execute_action vote on two options at once."""
    agent = Counting(client)
    studio = await agent.call("navigate", {"path": "/studios/team"})
    decide = "/studios/team/decide"
    assert f"]({decide})" in studio.content[0].text  # the studio page links its decide page
    made = await agent.call("execute_action", {
        "action": "create_decision", "path": decide,
        "params": {"question": "Where do we meet?", "options": ["Café", "Office", "Park"]}})
    decision = made.structured_content["location"]
    await agent.call("execute_action", {
        "action": "vote", "path": decision,
        "params": {"votes": [{"option_title": "Café", "accept": True, "prefer": True},
                             {"option_title": "Park", "accept": True}]}})
    return agent.calls, decision


async def _commit_and_join(client: Any) -> tuple[int, str]:
    """navigate /studios/team (links the commit page); execute_action create_commitment with
    join: true."""
    agent = Counting(client)
    studio = await agent.call("navigate", {"path": "/studios/team"})
    commit = "/studios/team/commit"
    assert f"]({commit})" in studio.content[0].text
    made = await agent.call("execute_action", {
        "action": "create_commitment", "path": commit,
        "params": {"title": "Bring snacks", "critical_mass": 2, "join": True}})
    assert made.structured_content["result"]["joined"] == 1
    return agent.calls, made.structured_content["location"]


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_budget_decision_and_commitment(request: pytest.FixtureRequest, app: Flask, studio,  # type: ignore[no-untyped-def]
                                        transport: str, mode: str, version: str) -> None:
    async def both(client: Any) -> tuple[tuple[int, str], tuple[int, str]]:
        return await _decide_and_vote(client), await _commit_and_join(client)

    (decision_calls, decision), (commitment_calls, commitment) = over(
        transport, mode, version, request, app, studio.token, both)
    assert decision_calls <= 3 and decision_calls == 3  # navigate, create with options, vote
    assert commitment_calls <= 2 and commitment_calls == 2  # navigate, create with join
    _front, body = parse_md(studio.get(decision).get_data(as_text=True))
    mine = [line for line in body.splitlines() if line.startswith("* [") and "✅" in line]
    assert mine == ["* [x] ✅ [x] ⭐ Café", "* [ ] ✅ [ ] ⭐ Office", "* [x] ✅ [ ] ⭐ Park"]
    _front, body = parse_md(studio.get(commitment).get_data(as_text=True))
    assert "You have joined." in body and "## Participants (1)" in body
    assert "[Alice](/u/alice)" in body.split("## Participants", 1)[1]


async def _overview(client: Any) -> tuple[int, str]:
    """navigate /studios/team: its Markdown lists the recent notes and this cycle's decisions
    and commitments, each linked, so nothing more is needed to see what is there."""
    agent = Counting(client)
    home = await agent.call("navigate", {"path": "/studios/team"})
    return agent.calls, home.content[0].text


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_budget_studio_overview(request: pytest.FixtureRequest, app: Flask, studio,  # type: ignore[no-untyped-def]
                                transport: str, mode: str, version: str) -> None:
    made = {kind: studio.act(f"/studios/team/{page}", action, **params).get_json()["location"]
            for kind, page, action, params in (
                ("note", "note", "create_note", {"text": "Lunch is at noon"}),
                ("decision", "decide", "create_decision",
                 {"question": "Which venue?", "options": ["Hall", "Garden"]}),
                ("commitment", "commit", "create_commitment",
                 {"title": "Book the hall", "critical_mass": 2, "deadline": "7d"}))}
    older = _older_open_and_closed(app, studio)
    calls, page = over(transport, mode, version, request, app, studio.token, _overview)
    assert calls <= 2 and calls == 1
    notes = page.split("## Recent notes", 1)[1]
    assert f"[Lunch is at noon]({made['note']})" in notes
    lines = {line.split("](", 1)[1].split(")", 1)[0]: line for line in page.splitlines()
             if line.startswith(("* decision: [", "* commitment: ["))}
    assert lines[made["decision"]].startswith("* decision: [Which venue?]")
    assert " · open, no deadline (closes when its creator closes it)" in lines[made["decision"]]
    assert lines[made["commitment"]].startswith("* commitment: [Book the hall]")
    assert re.search(r" · open, closes \S+ \S+ \S+ \(6 days 23 hours left\)$",
                     lines[made["commitment"]]), lines[made["commitment"]]
    # A decision from weeks ago that is still open is listed, marked open; a closed one, closed.
    assert " · open, " in lines[older["open"]], page
    assert " · closed " in lines[older["closed"]], page


def _older_open_and_closed(app: Flask, studio: Any) -> dict[str, str]:
    """Two decisions made three weeks ago: one still open, one closed by its creator."""
    from datetime import timedelta

    from app.extensions import db
    from app.models.base import utcnow
    from app.models.collab import Decision

    paths = {}
    for state in ("open", "closed"):
        made = studio.act("/studios/team/decide", "create_decision",
                          question=f"Old and {state}?", options=["Yes", "No"])
        paths[state] = made.get_json()["location"]
    assert studio.act(paths["closed"], "close_decision").status_code == 200
    with app.app_context():
        for decision in db.session.query(Decision).filter(Decision.question.like("Old and %")):
            decision.created_at = utcnow() - timedelta(weeks=3)
        db.session.commit()
    return paths


async def _floorplan(client: Any) -> tuple[int, Any]:
    """execute_action create_floorplan (its result names the plan as render_floorplan takes
    it); execute_action add_room at the location it returned; render_floorplan that plan."""
    agent = Counting(client)
    made = await agent.call("execute_action", {
        "action": "create_floorplan", "path": "/studios/team/floorplans",
        "params": {"name": "annex"}})
    plan, location = made.structured_content["result"]["plan"], made.structured_content["location"]
    await agent.call("execute_action", {
        "action": "add_room", "path": location,
        "params": {"name": "Kitchen", "size": {"width": 6, "height": 4},
                   "position": {"x": 40, "y": 0}}})
    drawn = await agent.call("render_floorplan", {"plan": plan})
    return agent.calls, drawn


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_budget_floorplan_created_edited_and_drawn(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                                   studio, transport: str, mode: str,
                                                   version: str) -> None:
    calls, drawn = over(transport, mode, version, request, app, studio.token, _floorplan)
    assert calls <= 3 and calls == 3
    (picture,) = _blocks(drawn, "image")
    assert picture.mime_type == "image/png" and png_size(base64.b64decode(picture.data))[0] > 0
    assert drawn.structured_content["plan"] == "team/annex"
    assert drawn.structured_content["version"] == 2  # created, then the room added
    assert "Kitchen" in [room["name"] for room in drawn.structured_content["rooms"]]
    stored = studio.get("/studios/team/f/annex").get_data(as_text=True)
    assert "Kitchen" in stored


def test_options_are_checked_like_add_option(studio) -> None:  # type: ignore[no-untyped-def]
    decide = "/studios/team/decide"
    for options, expected in ((["A", "A"], "repeated: A"), (["A", "  "], "[1] is blank"),
                              (["A", ""], "[1]")):
        refused = studio.act(decide, "create_decision", question="Q?", options=options)
        assert refused.status_code == 422, refused.get_data(as_text=True)
        errors = refused.get_json()["error"]["errors"]
        assert errors[0]["param"] == "options" and expected in errors[0]["message"], errors
    # A person's form takes one title per line.
    form = studio.client.post(f"{decide}/actions/create_decision",
                              data={"question": "Lunch?", "options": "Soup\n\nSalad\n"},
                              headers=studio.headers("application/json"))
    assert form.status_code == 201, form.get_data(as_text=True)
    assert form.get_json()["result"]["options"] == ["Soup", "Salad"]


def test_a_joined_commitment_counts_its_creator_once(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/commit", "create_commitment", title="Run", critical_mass=2,
                      join=True)
    assert made.status_code == 201 and made.get_json()["result"]["joined"] == 1
    path = made.get_json()["location"]
    again = studio.act(path, "join_commitment")
    assert again.status_code == 200 and again.get_json()["result"]["joined"] == 1
    bob = join_studio(make_agent, "bob")
    assert bob.act(path, "join_commitment").get_json()["result"]["joined"] == 2


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_decision_page_example_is_one_vote_call(studio, live_server: str, mode: str,  # type: ignore[no-untyped-def]
                                                version: str) -> None:
    """The decision page read over MCP shows a batch vote; sent as it is, one call votes on two."""
    async def scenario() -> tuple[int, str]:
        async with http_client(live_server, studio.token, mode) as client:
            agent = Counting(client)
            made = await agent.call("execute_action", {
                "action": "create_decision", "path": "/studios/team/decide",
                "params": {"question": "Lunch?", "options": ["Soup", "Salad", "Pie"]}})
            decision = made.structured_content["location"]
            page = (await agent.call("navigate", {"path": decision})).content[0].text
            section = page.split("\n## Voting\n", 1)[1].split("\n## ", 1)[0]
            found = re.search(r"^```json\n(.*?)\n```$", section, re.S | re.M)
            assert found, section
            example = json.loads(found.group(1))
            assert example["path"] == decision
            await agent.call("execute_action", example)
            return agent.calls, decision

    calls, decision = run(scenario)
    assert calls == 3  # create, read the page, one vote
    _front, body = parse_md(studio.get(decision).get_data(as_text=True))
    mine = [line for line in body.splitlines() if line.startswith("* [") and "✅" in line]
    assert mine == ["* [x] ✅ [x] ⭐ Soup", "* [x] ✅ [ ] ⭐ Salad", "* [ ] ✅ [ ] ⭐ Pie"]

"""Fewer calls: an agent that reads only tool descriptions and results, through the official
MCP SDK over both transports in both eras, makes a decision with three options and votes on
two in three calls, and creates a floorplan, adds a room and gets its PNG in three, because
each action's result names the obvious next step with the schema it takes; it teaches a recipe
with three calls, stops and dry-runs it in six (teach_stop names the required variables with
the values seen), and searches then reads its inbox in two. (The studio overview in one call
and a commitment created and joined in two are held in tests/mcp/test_agent_surface.py.)
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from flask import Flask

from tests.floorplans.test_fp_pages import png_size
from tests.helpers import parse_md
from tests.mcp.clients import TRANSPORTS, over, text_of


class Agent:
    """Counts the tool calls it makes; every call must succeed."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, 0

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        self.calls += 1
        result = await self.client.call_tool(name, args)
        assert not result.is_error, result
        return result


def _step(result: Any, name: str) -> dict[str, Any]:
    """The next step ``name`` a result names, with its path and inputSchema."""
    steps = {step["name"]: step for step in result.structured_content.get("next") or []}
    assert name in steps, result.structured_content
    step = steps[name]
    assert step["path"] and step["inputSchema"]["type"] == "object", step
    # Said in the text too, for clients that read only text.
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert f"- {name} at {step['path']}" in text, text
    return step


async def _decide_and_vote(client: Any) -> tuple[int, str]:
    """navigate to the studio's decide page (harmonic://context's URL map names it), which
    gives create_decision's schema; create_decision with three options, whose result gives
    vote's; one vote on two of them."""
    agent = Agent(client)
    page = await agent.call("navigate", {"path": "/studios/team/decide"})
    offered = {a["name"]: a for a in page.structured_content["actions"]}
    schema = offered["create_decision"]["inputSchema"]
    assert {"question", "options"} <= set(schema["properties"])
    made = await agent.call("execute_action", {
        "action": "create_decision", "path": page.structured_content["path"],
        "params": {"question": "Where do we meet?", "options": ["Café", "Office", "Park"]}})
    vote = _step(made, "vote")
    options = made.structured_content["result"]["options"]
    # What the schema says a vote on several options is: votes, each an option_title and
    # whether it is accepted.
    item = vote["inputSchema"]["properties"]["votes"]["items"]
    assert item["required"] == ["option_title"] and "accept" in item["properties"]
    await agent.call("execute_action", {
        "action": "vote", "path": vote["path"],
        "params": {"votes": [{"option_title": options[0], "accept": True},
                             {"option_title": options[2], "accept": True}]}})
    return agent.calls, vote["path"]


def _fill(schema: dict[str, Any], name: str) -> Any:
    """A value for a required property, read from its schema alone."""
    if schema.get("type") == "string":
        return name
    if schema.get("type") == "object":
        return {key: 4 for key in schema.get("required") or []}
    raise AssertionError(f"no value for {schema}")


async def _floorplan(client: Any) -> tuple[int, Any]:
    agent = Agent(client)
    made = await agent.call("execute_action", {
        "action": "create_floorplan", "path": "/studios/team/floorplans",
        "params": {"name": "annex"}})
    rooms = made.structured_content["result"]["rooms"]
    assert rooms and all({"name", "position", "size"} <= set(room) for room in rooms)
    add = _step(made, "add_room")
    schema = add["inputSchema"]
    params = {key: _fill(schema["properties"][key], "Kitchen") for key in schema["required"]}
    # Beside the rooms it already has, as the result lists them.
    right = max(room["position"]["x"] + room["size"]["width"] for room in rooms)
    params["position"] = {"x": right, "y": 0}
    await agent.call("execute_action", {"action": "add_room", "path": add["path"],
                                        "params": params})
    drawn = await agent.call("render_floorplan", {"plan": made.structured_content["result"]
                                                  ["plan"]})
    return agent.calls, drawn


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_budgets_with_next_steps(request: pytest.FixtureRequest, app: Flask, studio,  # type: ignore[no-untyped-def]
                                 transport: str, mode: str, version: str) -> None:
    async def both(client: Any) -> tuple[tuple[int, str], tuple[int, Any]]:
        return await _decide_and_vote(client), await _floorplan(client)

    (decision_calls, decision), (plan_calls, drawn) = over(
        transport, mode, version, request, app, studio.token, both)
    assert decision_calls <= 3
    _front, body = parse_md(studio.get(decision).get_data(as_text=True))
    mine = [line for line in body.splitlines() if line.startswith("* [") and "✅" in line]
    assert mine == ["* [x] ✅ [ ] ⭐ Café", "* [ ] ✅ [ ] ⭐ Office", "* [x] ✅ [ ] ⭐ Park"]
    assert plan_calls <= 3
    (picture,) = [block for block in drawn.content if block.type == "image"]
    assert picture.mime_type == "image/png" and png_size(base64.b64decode(picture.data))[0] > 0
    assert "Kitchen" in [room["name"] for room in drawn.structured_content["rooms"]]


def test_a_result_without_options_leads_to_add_option(studio) -> None:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/decide", "create_decision", question="Lunch?")
    assert made.status_code == 201
    (step,) = made.get_json()["next"]
    assert step["name"] == "add_option" and step["path"] == made.get_json()["location"]
    assert step["input_schema"]["required"] == ["title"]
    page = studio.act("/studios/team/decide", "create_decision", question="Tea?",
                      accept="text/markdown").get_data(as_text=True)
    assert "## Next" in page and "`add_option` at [" in page


# An unknown tool names the tools; skills/get takes a name -------------------------------------

@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_an_unknown_tool_names_the_tools(request: pytest.FixtureRequest, app: Flask, studio,  # type: ignore[no-untyped-def]
                                         transport: str, mode: str, version: str) -> None:
    async def story(client: Any) -> str:
        try:
            await client.call_tool("navigte", {"path": "/studios"})
        except Exception as exc:  # the SDK raises the JSON-RPC error
            return str(exc)
        raise AssertionError("an unknown tool was called")

    said = over(transport, mode, version, request, app, studio.token, story)
    assert "Unknown tool: navigte" in said
    assert "navigate" in said.split("Tools:", 1)[1] and "execute_action" in said


def test_skills_get_by_name(live_server: str, studio) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.conftest import Http

    http = Http(live_server, studio.token)
    http.initialize()
    listing = http.call("skills/list")["result"]["skills"]
    first = listing[0]
    got = http.call("skills/get", {"name": first["frontmatter"]["name"]})["result"]
    assert got["skill"] == first
    unknown = http.call("skills/get", {"name": "nope"})["error"]
    assert unknown["code"] == -32602 and "no skill named 'nope'" in unknown["message"]
    assert first["frontmatter"]["name"] in unknown["message"]
    neither = http.call("skills/get", {})["error"]
    assert "give the skill's uri or its name" in neither["message"]


# The Markdown navigation lists what the HTML header lists ---------------------------------------

def test_markdown_nav_lists_the_html_header(studio) -> None:  # type: ignore[no-untyped-def]
    for path in ("/studios/team", "/studios", "/u/alice"):
        html = studio.get(path, accept="text/html").get_data(as_text=True)
        header = html.split('<header class="top">', 1)[1].split("</header>", 1)[0]
        offered = set(re.findall(r'<a [^>]*href="(/[^"#]*)"', header)) - {"/"}
        assert {"/inbox", "/playbooks", "/workflows"} <= offered, offered
        markdown = studio.get(path).get_data(as_text=True)
        (nav,) = [line for line in markdown.splitlines() if line.startswith("nav: |")]
        listed = set(re.findall(r"\]\((/[^)]*)\)", nav))
        assert offered <= listed, (path, offered - listed)


# Every bad parameter in one refusal, each by its path ------------------------------------------

def test_every_bad_parameter_in_one_refusal(studio) -> None:  # type: ignore[no-untyped-def]
    refused = studio.act("/studios/team/commit", "create_commitment", title="Run",
                         critical_mass=0, deadline="whenever")
    assert refused.status_code == 422
    errors = refused.get_json()["error"]["errors"]
    assert [e["param"] for e in errors] == ["critical_mass", "deadline"], errors
    assert "not a date-time" in errors[1]["message"]

    decision = studio.act("/studios/team/decide", "create_decision", question="Where?",
                          options=["Café", "Park"]).get_json()["location"]
    refused = studio.act(decision, "vote", votes=[
        {"option_title": "Café", "accept": True}, {"accept": True},
        {"option_title": "Park", "accept": "yes", "bogus": 1}])
    assert refused.status_code == 422
    errors = refused.get_json()["error"]["errors"]
    assert {e["path"]: e["param"] for e in errors} == {
        "votes[1].option_title": "votes", "votes[2].accept": "votes",
        "votes[2].bogus": "votes"}, errors
    # Titles the decision does not have: each named where it is in votes.
    refused = studio.act(decision, "vote", votes=[
        {"option_title": "Zed", "accept": True}, {"option_title": "Park", "accept": True},
        {"option_title": "Moon"}])
    errors = refused.get_json()["error"]["errors"]
    assert [e["path"] for e in errors] == ["votes[0].option_title", "votes[2].option_title"]
    assert "'Zed'" in errors[0]["message"] and "options: 'Café', 'Park'" in errors[0]["message"]


def test_a_refusal_over_mcp_names_each_path_once(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                                 studio, demo: None) -> None:
    decision = studio.act("/studios/team/decide", "create_decision", question="Where?",
                          options=["Café", "Park"]).get_json()["location"]

    async def story(client: Any) -> tuple[str, str]:
        voted = await client.call_tool("execute_action", {
            "action": "vote", "path": decision,
            "params": {"votes": [{"accept": True}, {"option_title": "Park", "bogus": 1}]}})
        assert voted.is_error
        bad = await client.call_tool("upstream_call", {
            "method": "preview_rebar_linear", "params": {"count": "many", "host": 5}})
        assert bad.is_error
        return voted.content[0].text, bad.content[0].text

    voted, upstream = over(*TRANSPORTS[0], request, app, studio.token, story)
    assert "- votes[0].option_title: is required" in voted, voted
    assert "- votes[1].bogus: unknown property (expected: option_title, accept, prefer)" \
        in voted, voted
    for param in ("barType", "count", "host"):  # each problem said once
        assert upstream.count(f"{param}:") == 1, upstream


# Workflow and task results are objects ------------------------------------------------------------

def test_a_workflow_task_result_is_an_object(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    import json

    from tests.mcp.test_tasks import EXTENSION, finished

    client = app.test_client()
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "Authorization": f"Bearer {studio.token}"}

    def post(method: str, params: dict[str, Any], ident: int | None = 1) -> Any:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if ident is not None:
            body["id"] = ident
        return json.loads(client.post("/mcp", data=json.dumps(body),
                                      headers=headers).get_data(as_text=True) or "{}")

    opened = client.post("/mcp", data=json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "pytest", "version": "1"},
            "capabilities": {"extensions": {EXTENSION: {}}}}}), headers=headers)
    headers.update({"Mcp-Session-Id": opened.headers["Mcp-Session-Id"],
                    "MCP-Protocol-Version": "2025-11-25"})
    post("notifications/initialized", {}, None)
    tools = {t["name"]: t for t in post("tools/list", {}, 2)["result"]["tools"]}
    assert tools["run_workflow"]["outputSchema"]["properties"]["result"]["type"] == "object"
    created = post("tools/call", {"name": "run_workflow", "arguments": {
        "workflow": "studio-check", "inputs": {"studio": "team"}}}, 3)["result"]
    got = finished(app, lambda: post("tasks/get", {"taskId": created["taskId"]}, 4)["result"])
    assert got["status"] == "completed", got
    structured = got["result"]["structuredContent"]
    assert structured["status"] == "succeeded" and isinstance(structured["result"], dict)
    shown = got["result"]["content"][0]["text"].split("Result: ", 1)[1]
    assert json.loads(shown) == structured["result"]  # JSON once, not a string of JSON


# teach_stop marks the required variables with the values seen ------------------------------------

def test_teach_stop_marks_required_variables(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                             studio, demo: None) -> None:
    bar = {"barType": "D16", "coverTop": "25mm", "coverSide": "25mm"}

    async def story(client: Any) -> tuple[Any, Any]:
        agent = Agent(client)
        await agent.call("teach_start", {"name": "rebar"})
        beams = await agent.call("upstream_call", {
            "method": "get_elements_by_category_and_level",
            "params": {"category": "OST_StructuralFraming", "levelSelector": {"levelName": "2FL"}}})
        beam = beams.structured_content["items"][0]["elementId"]
        await agent.call("upstream_call", {"method": "preview_rebar_linear", "params": {
            "host": {"elementId": beam}, "count": 8, **bar}})
        stopped = await agent.call("teach_stop", {})
        recipe = stopped.structured_content["recipe"]
        # Replayed at once with what teach_stop said is required: no refusal to learn it from.
        args = {name: 6 for name in recipe["required"]}
        dry = await agent.call("replay", {"session_id": stopped.structured_content["id"],
                                          "args": args})
        return stopped.structured_content, dry.structured_content

    stopped, dry = over(*TRANSPORTS[0], request, app, studio.token, story)
    recipe = stopped["recipe"]
    inputs = {entry["name"]: entry for entry in recipe["inputs"]}
    assert recipe["required"] == ["bar_count"]
    assert inputs["bar_count"] == {"name": "bar_count", "required": True, "seen": 8,
                                   "type": "integer"}
    optional = [entry for entry in inputs.values() if not entry["required"]]
    assert optional and all("seen" in entry for entry in optional)
    assert "Give bar_count in args" in stopped["message"]
    assert dry["ok"], dry


# Teach, three calls, stop, dry-run replay: six calls ------------------------------------------

async def _teach_to_dry_run(client: Any) -> tuple[int, Any]:
    """teach_start; three upstream calls; teach_stop, whose result names the required
    variables; a dry-run replay with them, which is not refused."""
    agent = Agent(client)
    await agent.call("teach_start", {"name": "beams"})
    beams = await agent.call("upstream_call", {
        "method": "get_elements_by_category_and_level",
        "params": {"category": "OST_StructuralFraming", "levelSelector": {"levelName": "2FL"}}})
    beam = beams.structured_content["items"][0]["elementId"]
    await agent.call("upstream_call", {"method": "preview_rebar_linear", "params": {
        "host": {"elementId": beam}, "count": 8, "barType": "D16", "coverTop": "25mm",
        "coverSide": "25mm"}})
    await agent.call("upstream_call", {"method": "get_walls", "params": {"level": "2FL"}})
    stopped = await agent.call("teach_stop", {})
    recipe = stopped.structured_content["recipe"]
    seen = {entry["name"]: entry.get("seen") for entry in recipe["inputs"]}
    dry = await agent.call("replay", {"session_id": stopped.structured_content["id"],
                                      "args": {name: seen[name] for name in recipe["required"]}})
    return agent.calls, dry.structured_content


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_budget_teach_three_calls_stop_and_dry_run(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                                   studio, demo: None, transport: str,
                                                   mode: str, version: str) -> None:
    calls, dry = over(transport, mode, version, request, app, studio.token, _teach_to_dry_run)
    assert calls <= 6
    assert dry["ok"] and dry["dry_run"], dry


# Search, then read the inbox: two calls ---------------------------------------------------------

async def _search_and_inbox(client: Any) -> tuple[int, str, str]:
    """navigate /search?q=... (the Markdown navigation names /search and /inbox); navigate
    /inbox."""
    agent = Agent(client)
    found = await agent.call("navigate", {"path": "/search?q=zeppelin"})
    inbox = await agent.call("navigate", {"path": "/inbox"})
    return agent.calls, text_of(found), text_of(inbox)


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_budget_search_and_read_the_inbox(request: pytest.FixtureRequest, app: Flask, studio,  # type: ignore[no-untyped-def]
                                          make_agent, transport: str, mode: str,
                                          version: str) -> None:
    from tests.helpers import join_studio

    bob = join_studio(make_agent, "bob")
    made = bob.act("/studios/team/note", "create_note", title="Zeppelin hangar",
                   text="@alice the zeppelin lands on Friday")
    assert made.status_code == 201, made.get_json()
    note = made.get_json()["location"]
    calls, found, inbox = over(transport, mode, version, request, app, studio.token,
                               _search_and_inbox)
    assert calls <= 2
    assert f"[**Zeppelin** hangar]({note})" in found, found  # the matched word marked
    rows = [line for line in inbox.splitlines() if line.startswith("| ") and note in line]
    assert rows and "| unread |" in rows[0], inbox


# Completion answers for every resource template ---------------------------------------------------

@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS[:2])
def test_completion_for_every_resource_template(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                                studio, transport: str, mode: str,
                                                version: str) -> None:
    from tests.mcp.test_agent_surface import _store_plan

    _store_plan(studio)  # team/office
    playbook = studio.act("/playbooks", "start_teach", name="walls").get_json()["result"]["id"]
    run = studio.act("/workflows/studio-check", "run_workflow", inputs={"studio": "team"})
    assert run.status_code in (200, 201, 202), run.get_data(as_text=True)
    run_id = run.get_json()["location"].rsplit("/", 1)[1]

    async def story(client: Any) -> dict[str, dict[str, list[str]]]:
        from mcp.types import ResourceTemplateReference

        found: dict[str, dict[str, list[str]]] = {}
        for template in (await client.list_resource_templates()).resource_templates:
            uri = template.uri_template
            ref = ResourceTemplateReference(type="ref/resource", uri=uri)
            found[uri] = {}
            for variable in re.findall(r"\{\+?(\w+)\}", uri):
                answer = await client.complete(ref, {"name": variable, "value": ""},
                                               {"handle": "team"})
                found[uri][variable] = answer.completion.values
        return found

    found = over(transport, mode, version, request, app, studio.token, story)
    assert found["floorplan://studios/{handle}/{name}"] == {"handle": ["team"], "name": ["office"]}
    assert playbook in found["playbook://{playbook_id}/recipe"]["playbook_id"]
    assert playbook in found["playbook://{playbook_id}/capture"]["playbook_id"]
    assert run_id in found["harmonic://runs/{id}/events"]["id"]
    assert "studios/team" in found["harmonic://page/{+path}"]["path"]
    urls = found["http://{+url}"]["url"] + found["https://{+url}"]["url"]
    assert urls and all(u.endswith(("/studios", "/studios/team")) for u in urls), urls
    empty = [f"{uri} {var}" for uri, variables in found.items()
             for var, values in variables.items() if not values and not uri.startswith("http")]
    assert not empty, empty


def test_other_results_that_lead_somewhere(studio) -> None:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/commit", "create_commitment", title="Run", critical_mass=2)
    (step,) = made.get_json()["next"]
    assert step["name"] == "join_commitment" and step["path"] == made.get_json()["location"]
    joined = studio.act("/studios/team/commit", "create_commitment", title="Swim",
                        critical_mass=2, join=True)
    assert "next" not in joined.get_json()  # nothing obvious left to do
    decision = studio.act("/studios/team/decide", "create_decision",
                          question="Lunch?").get_json()["location"]
    added = studio.act(decision, "add_option", title="Soup").get_json()
    assert [s["name"] for s in added["next"]] == ["vote"] and added["next"][0]["path"] == decision

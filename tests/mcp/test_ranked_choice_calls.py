"""An agent that reads only tool descriptions and results, through the official MCP SDK over
both transports in both eras, creates a ranked-choice poll and ranks its options in three
calls: create_decision's result names rank_options with the schema it takes."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.helpers import parse_md
from tests.mcp.clients import TRANSPORTS, over
from tests.mcp.test_fewer_calls import Agent, _step


async def _poll_and_rank(client: Any) -> tuple[int, str]:
    agent = Agent(client)
    page = await agent.call("navigate", {"path": "/studios/team/decide"})
    offered = {a["name"]: a for a in page.structured_content["actions"]}
    kinds = offered["create_decision"]["inputSchema"]["properties"]["kind"]["enum"]
    assert "ranked_choice" in kinds
    made = await agent.call("execute_action", {
        "action": "create_decision", "path": page.structured_content["path"],
        "params": {"question": "Where do we meet?", "kind": "ranked_choice",
                   "options": ["Café", "Office", "Park"]}})
    rank = _step(made, "rank_options")
    options = made.structured_content["result"]["options"]
    # What the schema says a ranking is: titles, most wanted first.
    ranking = rank["inputSchema"]["properties"]["ranking"]
    assert ranking["type"] == "array" and ranking["items"]["type"] == "string"
    await agent.call("execute_action", {
        "action": "rank_options", "path": rank["path"],
        "params": {"ranking": [options[2], options[0]]}})
    return agent.calls, rank["path"]


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_a_ranked_choice_poll_in_three_calls(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                             studio, transport: str, mode: str,
                                             version: str) -> None:
    calls, path = over(transport, mode, version, request, app, studio.token, _poll_and_rank)
    assert calls <= 3
    _front, body = parse_md(studio.get(path).get_data(as_text=True))
    assert "Your ballot: `{\"ranking\": [\"Park\", \"Café\"]}`" in body, body
    assert "Park wins" in body or "Park" in body.split("## Current results", 1)[1]

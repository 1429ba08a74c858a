"""The inbox through the official MCP SDK client over Streamable HTTP: navigate shows the unread
count and the notifications with their actions; execute_action marks one read and then all."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask

from tests.helpers import join_studio
from tests.mcp.clients import http_client, run


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_inbox_over_mcp(app: Flask, studio, make_agent, live_server: str) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    studio.act("/studios/team/note", "create_note", text="hello @bob")
    studio.act("/studios/team/decide", "create_decision", question="Lunch?")

    async def scenario() -> None:
        async with http_client(live_server, bob.token) as client:
            page = await client.call_tool("navigate", {"path": "/inbox"})
            assert not page.is_error, page
            text = _text(page)
            assert "Unread: 2" in text and "| mention |" in text and "| new_decision |" in text
            assert "mark_all_read" in text
            first = re.search(r"^\| ([0-9a-f]{8}) \| unread \| mention \|", text, re.M)
            assert first is not None, text
            done = await client.call_tool("execute_action", {
                "action": "mark_read", "path": "/inbox", "params": {"id": first.group(1)}})
            assert not done.is_error, done
            assert done.structured_content["result"]["unread"] == 1
            done = await client.call_tool("execute_action", {
                "action": "mark_all_read", "path": "/inbox", "params": {}})
            assert not done.is_error and done.structured_content["result"]["marked"] == 1
            again = _text(await client.call_tool("navigate", {"path": "/inbox"}))
            assert "Unread: 0" in again and "| unread |" not in again
            wrong = await client.call_tool("execute_action", {
                "action": "mark_read", "path": "/inbox", "params": {"id": "00000000"}})
            assert wrong.is_error and "no notification" in _text(wrong)

    run(scenario)

"""navigate hands the agent the page's actions without parsing the page back: what it returns
as structured content must be exactly what the Markdown door's frontmatter says (its text
leaves that list out: the page's Actions list names each action once), and execute_action must
answer as the page does for actions it does not offer."""

from __future__ import annotations

from typing import Any

from tests.helpers import parse_md
from tests.mcp.conftest import Http
from tests.mcp.test_http import _FlaskClient

PAGES = ["/studios", "/studios/team", "/studios/team/note", "/studios/team/cycles/today",
         "/u/alice"]


def _markdown(result: dict[str, Any]) -> str:
    text = result["content"][0]["text"]
    return text[text.index("---\n"):]  # after the "Current URL" hint


def _as_frontmatter(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """navigate's structured actions as the frontmatter spells them (no MCP hints, the schema
    under its frontmatter name)."""
    out = []
    for act in actions:
        entry = {k: v for k, v in act.items() if k not in ("annotations", "inputSchema")}
        out.append({**entry, "input_schema": act["inputSchema"]})
    return out


def test_structured_actions_are_the_frontmatter_of_the_page(studio, client) -> None:  # type: ignore[no-untyped-def]
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    for path in PAGES:
        result = http.tool("navigate", path=path)
        assert not result.get("isError"), (path, result)
        front, _body = parse_md(_markdown(result))
        door, _ = parse_md(studio.get(path).get_data(as_text=True))
        structured = result["structuredContent"]
        assert structured["title"] == front["title"] == door["title"], path
        assert structured["path"] == path
        assert "actions" not in front, path
        assert _as_frontmatter(structured["actions"]) == door["actions"], path


def test_unoffered_actions_are_named_with_what_the_page_offers(studio, client,  # type: ignore[no-untyped-def]
                                                             make_agent) -> None:
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    page = http.tool("navigate", path="/studios/team/note")["structuredContent"]
    offered = [a["name"] for a in page["actions"]]
    # An action of another page, and a name no page has: both list this page's actions.
    for name in ("vote", "no_such_action"):
        refused = http.tool("execute_action", action=name, path="/studios/team/note")
        text = refused["content"][0]["text"]
        assert refused["isError"] is True
        assert f"'{name}' is not offered at /studios/team/note" in text
        assert f"Actions here: {', '.join(offered)}" in text
        assert refused["structuredContent"]["result"]["actions"] == _as_frontmatter(
            page["actions"])
    # A page that does not exist answers as its GET does.
    missing = http.tool("execute_action", action="create_note", path="/studios/nowhere/note")
    assert missing["isError"] is True and "answered 404" in missing["content"][0]["text"]
    # Someone who cannot see the page is refused without reaching validation.
    outsider = Http("http://localhost", make_agent("eve").token, _FlaskClient(client))
    outsider.initialize()
    refused = outsider.tool("execute_action", action="create_note", path="/studios/team/note",
                            params={})
    text = refused["content"][0]["text"]
    assert refused["isError"] is True and "(422)" not in text and "403" in text

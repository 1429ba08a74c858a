"""navigate hands the agent the page's actions without parsing the page back: what it returns
as structured content must be exactly what the frontmatter in the Markdown it shows says, and
execute_action must answer as the page does for actions it does not offer."""

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


def test_structured_actions_are_the_frontmatter_of_the_text(studio, client) -> None:  # type: ignore[no-untyped-def]
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    for path in PAGES:
        result = http.tool("navigate", path=path)
        assert not result.get("isError"), (path, result)
        front, _body = parse_md(_markdown(result))
        structured = result["structuredContent"]
        assert structured["title"] == front["title"], path
        assert structured["path"] == path
        shown = [{k: v for k, v in a.items() if k != "annotations"}
                 for a in structured["actions"]]
        assert shown == front["actions"], path


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
        assert refused["structuredContent"]["result"]["actions"] == [
            {k: v for k, v in a.items() if k != "annotations"} for a in page["actions"]]
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

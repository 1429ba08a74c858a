"""Text no database can store (a NUL character, a lone surrogate) at every door: a 422 naming
the field on HTTP (query strings, forms, JSON bodies, nested too), an MCP tool error naming the
argument, -32602 naming the param on the JSON-RPC doors; never a 500 or "internal error", on
either database, and nothing stored. ``tests/fuzz/test_fuzz_doors.py`` tries every route and
tool; these are the cases that were found broken, each through its own door."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask

from tests.fuzz.conftest import digest
from tests.mcp.conftest import INIT, Http
from tests.mcp.test_http import _FlaskClient
from tests.mcp.test_stdio import _answers_to, _tool_call

NUL = "must not contain NUL characters"
SURROGATE = "must be valid Unicode text (it holds a lone surrogate, U+D800 to U+DFFF)"


def _named(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 422, (response.status_code, response.get_data(as_text=True))
    return list(response.json["error"]["errors"])


def test_a_nul_in_a_query_string_is_a_422_naming_the_parameter(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    # /search?q=%00 was a 500 on PostgreSQL (503 "database unavailable" once mapped); list
    # filters and cursors such as ?before=%00 were a 500 or a silent empty page.
    before = digest(app)
    for url, field in (("/search?q=%00", "q"), ("/studios/team/search?q=a%00b", "q"),
                       ("/inbox?before=%00", "before"),
                       ("/studios/team/notes?before=%00", "before"),
                       ("/studios/team/history?before=x%00", "before"),
                       ("/studios?sort=new&tag=a&tag=%00", "tag[1]"),
                       ("/studios?%00=1", "\\u0000")):
        for accept in ("application/json", "text/markdown", "text/html"):
            response = studio.client.get(url, headers=studio.headers(accept))
            assert response.status_code == 422, (url, accept, response.status_code)
            if accept == "application/json":
                assert _named(response) == [{"param": field, "message": NUL}], url
            elif field.isidentifier():  # (the pages escape other names in their own way)
                shown = response.get_data(as_text=True)
                assert NUL in shown and field in shown, (url, accept)
    assert digest(app) == before


def test_a_nul_in_a_form_field_is_a_422_naming_it(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    response = studio.client.post("/studios/team/note/actions/create_note",
                                  data={"title": "ok", "text": "a\x00b"},
                                  headers=studio.headers("application/json"))
    assert _named(response) == [{"param": "text", "message": NUL}]


def test_json_bodies_name_the_path_of_the_bad_string(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/decide", "create_decision", question="Lunch?",
                      options=["Soup", "Salad"])
    assert made.status_code == 201, made.get_data(as_text=True)
    before = digest(app)
    vote = f"{made.json['location']}/actions/vote"
    response = studio.post(vote, json={"votes": [{"option_title": "Soup", "accept": True},
                                                 {"option_title": "Sal\x00ad"}]})
    assert _named(response) == [{"param": "votes[1].option_title", "message": NUL}]
    # A lone surrogate ("\ud800" in JSON) has no UTF-8 form: it was a 500 on both databases.
    headers = {**studio.headers("application/json"), "Content-Type": "application/json"}
    for body, field, why in (
            (b'{"text": "x\\ud800"}', "text", SURROGATE),
            (b'{"title": "t", "text": "\\u0000", "x\\u0000": 1}', "text", NUL),
            (b'{"text": "ok", "\\udfff": "key"}', "\\udfff", SURROGATE),
            ('{"text": "\\u0000"}'.encode("utf-16"), "text", NUL)):
        response = studio.client.post("/studios/team/note/actions/create_note", data=body,
                                      headers=headers)
        assert _named(response)[0] == {"param": field, "message": why}, body
    response = studio.client.post("/studios/team/note/actions/create_note",
                                  data=b'{"title": "t", "text": "\\u0000", "x\\u0000": 1}',
                                  headers=headers)
    assert [e["param"] for e in _named(response)] == ["text", "x\\u0000"]
    assert digest(app) == before


def test_mcp_tool_arguments_are_refused_by_the_tool_naming_them(app: Flask, studio,  # type: ignore[no-untyped-def]
                                                               client) -> None:
    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    before = digest(app)
    # The search tool answered "search failed with an internal error" on PostgreSQL.
    for arguments, field, why in (
            ({"query": "a\x00"}, "query", NUL),
            ({"query": "\ud800"}, "query", SURROGATE),
            ({"path": "/studios/\ud800"}, "path", SURROGATE),
            ({"action": "create_note", "path": "/studios/team/note",
              "params": {"text": "hi", "tags": ["ok", "\x00"]}}, "params.tags[1]", NUL)):
        name = "search" if "query" in arguments else (
            "navigate" if "action" not in arguments else "execute_action")
        result = http.call("tools/call", {"name": name, "arguments": arguments})["result"]
        assert result["isError"], result
        assert result["content"][0]["text"] == f"Invalid arguments for {name}: {field}: {why}"
    # A URL naming a NUL reaches the page door: its 422, named, is the tool's error.
    result = http.tool("navigate", path="/search?q=%00")
    assert result["isError"] and f"q: {NUL}" in result["content"][0]["text"], result
    # Other methods' params: -32602 naming the param (a lone surrogate in a URI was -32603).
    refused = http.call("resources/read", {"uri": "harmonic://page/studios/\ud800"})
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"]["errors"] == [{"param": "uri", "message": SURROGATE}]
    # An id is echoed, not stored: one with a lone surrogate is answered in JSON escapes
    # (it was a 500: the answer could not be encoded as UTF-8).
    pong = http.post(None, raw=b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}')
    assert pong.status_code == 200 and pong.json() == {"jsonrpc": "2.0", "id": "\ud800",
                                                       "result": {}}
    assert digest(app) == before


def test_mcp_over_stdio_refuses_the_same_way(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    answers, code = _answers_to(app, studio.token, [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
        _tool_call(2, "search", query="a\x00b"),
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/get",
         "params": {"name": "studio_standup", "arguments": {"studio": "te\x00am"}}},
    ])
    assert code == 0
    assert answers[2]["result"]["isError"]
    assert answers[2]["result"]["content"][0]["text"] == \
        f"Invalid arguments for search: query: {NUL}"
    assert answers[3]["error"]["code"] == -32602
    assert answers[3]["error"]["data"]["errors"] == [{"param": "arguments.studio",
                                                      "message": NUL}]


def test_json_rpc_doors_answer_invalid_params_naming_the_param(app: Flask, studio, demo) -> None:  # type: ignore[no-untyped-def]
    # get_element_info with a NUL uniqueId was NOT_FOUND on SQLite and "The database refused
    # the change" (-32000) on PostgreSQL; /rpc forwarded it and recorded it.
    headers = {**studio.headers("application/json"), "Content-Type": "application/json"}
    assert studio.client.post("/teach/start?name=nul", headers=headers).status_code == 200
    before = digest(app)
    for url in ("/design-model/rpc", "/rpc"):
        for params, field, why in (({"uniqueId": "\x00"}, "uniqueId", NUL),
                                   ({"uniqueId": "w", "x": ["\ud800"]}, "x[0]", SURROGATE)):
            body = {"jsonrpc": "2.0", "id": 7, "method": "get_element_info", "params": params}
            response = studio.client.post(url, data=json.dumps(body), headers=headers)
            assert response.status_code == 200, (url, response.status_code)
            answer = response.json
            assert answer["id"] == 7 and answer["error"]["code"] == -32602, (url, answer)
            assert answer["error"]["data"]["errors"] == [{"param": field, "message": why}]
    assert digest(app) == before
    # A JSON-RPC body labelled as a form (seed 000's `curl -d`) is the door's to read: a
    # "%00" inside its JSON is text, not an escaped NUL.
    plain = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "get_element_info",
                        "params": {"uniqueId": "%00"}})
    response = studio.client.post("/rpc", data=plain, headers={
        **studio.headers("application/json"),
        "Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 200 and response.json["error"]["data"]["code"] == "NOT_FOUND"

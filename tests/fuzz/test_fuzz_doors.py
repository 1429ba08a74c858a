"""Every route of the URL map and every MCP tool, with text no database can store (a NUL
character, a lone surrogate) and other hostile strings in query strings, form fields, JSON
bodies and tool arguments.

The routes and tools are read from the app (``app.url_map``: every rule and method, its
converters filled with the seeded studio's sample values) and from the MCP registry, so a new
route or tool is covered without editing this file. Such text is refused where it enters —
422 naming the field on HTTP, an ``isError`` result naming the argument for a tool, -32602
naming the param on the JSON-RPC doors — never a 500 or an internal error, on both databases,
and no row changes."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from flask import Flask
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.routing import Rule

from app.core import jsonrpc
from app.mcp.info import APP_MIME, UI_EXTENSION
from tests.core.test_registry import from_schema
from tests.fuzz.conftest import budget, digest
from tests.fuzz.test_fuzz_actions import HOSTILE_TEXT, in_a_form
from tests.mcp.conftest import Http, messages_of
from tests.mcp.test_http import _FlaskClient
from tests.security import matrix

NUL = "must not contain NUL characters"
SURROGATE = "must be valid Unicode text (it holds a lone surrogate, U+D800 to U+DFFF)"
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")
# Names pages read from their query strings, and some they do not: the rule is the door's.
QUERY_NAMES = ("q", "before", "after", "sort", "status", "cursor", "next", "name", "x")
# Converters no seeded page names (pages that need a finished run, static files).
DEFAULTS = {"run_id": "r0", "filename": "harmonic.css", "action_name": "zz"}


def routes(app: Flask, seeded: matrix.Studio) -> list[tuple[str, str, str]]:
    """(url, method, endpoint) for every rule and method of the URL map, its converters filled
    from the seeded page whose rule is its longest prefix (an action route: one of the actions
    offered on that page)."""
    adapter = app.url_map.bind("localhost")
    pages: list[tuple[str, str, dict[str, Any]]] = []  # (rule, sample path, its values)
    for path in seeded.paths.values():
        rule, values = adapter.match(path, return_rule=True)
        pages.append((rule.rule, path, values))
    actions = {path: act.name for path, _spec, act in reversed(seeded.cells())}
    found = []
    rule: Rule
    for rule in app.url_map.iter_rules():
        prefix = max((p for p in pages if rule.rule.startswith(p[0])),
                     key=lambda p: len(p[0]), default=None)
        values = dict(DEFAULTS)
        if prefix is not None:
            values.update({k: str(v) for k, v in prefix[2].items()})
            values["action_name"] = actions.get(prefix[1], "zz")
        url = rule.rule
        for name in rule.arguments:
            url = url.replace(f"<{name}>", quote(values.get(name, "x"))).replace(
                f"<int:{name}>", values.get(name, "1")).replace(
                f"<path:{name}>", values.get(name, "x"))
        assert "<" not in url, (rule.rule, url)
        found += [(url, method, rule.endpoint) for method in sorted(rule.methods or ())
                  if method not in ("HEAD", "OPTIONS")]
    return found


def _is_door(app: Flask, endpoint: str) -> bool:
    return jsonrpc.is_door(app.view_functions.get(endpoint))


def _refused_by_name(response: Any, field: str, why: str) -> None:
    """422 with ``errors`` naming ``field`` (as a JSON-RPC error's data on /mcp)."""
    assert response.status_code == 422, (response.status_code, response.get_data(as_text=True))
    body = response.json
    errors = body["error"]["data"]["errors"] if "jsonrpc" in body else body["error"]["errors"]
    assert {"param": field, "message": why} in errors, errors


def test_every_route_refuses_unstorable_text_by_name(app: Flask, client, make_agent,  # type: ignore[no-untyped-def]
                                                     tried) -> None:
    seeded = matrix.seed(app, make_agent)
    headers = {"Authorization": f"Bearer {seeded.tokens['creator']}",
               "Accept": "application/json"}
    found = routes(app, seeded)
    assert len(found) >= 200  # the whole map, not a sample of it
    before = digest(app)
    for n, (url, method, endpoint) in enumerate(found):
        name = QUERY_NAMES[n % len(QUERY_NAMES)]
        response = client.open(url, method=method, headers=headers,
                               query_string={name: "a\x00b", "ok": "fine"})
        _refused_by_name(response, name, NUL)
        tried(("query", method))
        if method not in BODY_METHODS:
            continue
        if _is_door(app, endpoint):  # its body is JSON-RPC: the door's own check, below
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call" if url == "/mcp" else
                    "get_element_info", "params": {"arguments": {"uniqueId": "\x00"}}}
            response = client.open(url, method=method, headers=headers, json=body)
            assert response.status_code < 500, (url, response.status_code)
            if url != "/mcp":  # (/mcp first wants a session: the tool test below has one)
                assert response.json["error"]["code"] == -32602, (url, response.json)
                assert response.json["error"]["data"]["param"] == "arguments.uniqueId"
            tried(("door", method))
            continue
        response = client.open(url, method=method, headers=headers,
                               data={"title": "fine", "text": "a\x00b"})
        _refused_by_name(response, "text", NUL)
        response = client.open(url, method=method, headers=headers,
                               json={"title": "fine", "votes": [{"x": 1}, {"title": "\x00"}]})
        _refused_by_name(response, "votes[1].title", NUL)
        response = client.open(url, method=method, data=b'{"text": {"a": ["\\udc00"]}}',
                               headers={**headers, "Content-Type": "application/json"})
        _refused_by_name(response, "text.a[0]", SURROGATE)
        tried(("body", method))
    assert digest(app) == before


@st.composite
def hostile_requests(draw: Any, found: list[tuple[str, str, str]], doors: set[str]
                     ) -> tuple[str, str, str, Any]:
    """(url, method, where, value): one hostile string in a query string, a form or JSON."""
    url, method, endpoint = draw(st.sampled_from(found))
    value = draw(HOSTILE_TEXT | st.sampled_from(["x\x00", "a\udfffb"]))
    places = ["query"] if method not in BODY_METHODS or endpoint in doors \
        else ["query", "form", "json"]
    where = draw(st.sampled_from(places))
    return url, method, where, value if where == "json" else in_a_form(value)


def _why(value: str) -> str | None:
    """What the door must say of ``value``, or None when a database can hold it."""
    if "\x00" in value:
        return NUL
    return SURROGATE if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None


def test_every_route_survives_hostile_text(app: Flask, client, make_agent, tried) -> None:  # type: ignore[no-untyped-def]
    seeded = matrix.seed(app, make_agent)
    headers = {"Authorization": f"Bearer {seeded.tokens['creator']}",
               "Accept": "application/json"}
    found = [r for r in routes(app, seeded) if r[2] != "session.logout"]  # (ends the session)
    doors = {endpoint for _u, _m, endpoint in found if _is_door(app, endpoint)}

    @budget(150)
    @given(hostile_requests(found, doors))
    def one(request: tuple[str, str, str, Any]) -> None:
        url, method, where, value = request
        before = digest(app)
        if where == "query":
            response = client.open(url, method=method, headers=headers,
                                   query_string={"q": value})
        elif where == "form":
            response = client.open(url, method=method, headers=headers,
                                   data={"text": value, "title": value})
        else:
            response = client.open(url, method=method, headers=headers,
                                   data=json.dumps({"text": value, "title": value}),
                                   content_type="application/json")
        tried(response.status_code)
        assert response.status_code < 500, (url, method, where, value,
                                            response.get_data(as_text=True)[:300])
        why = _why(value)
        if why is not None:
            _refused_by_name(response, "q" if where == "query" else "text", why)
        if response.status_code >= 400:
            assert digest(app) == before, (url, method, where, value, response.status_code)

    one()
    assert tried.outcomes[422] and len(tried.outcomes) > 3, tried.outcomes


def tool_arguments(schema: dict[str, Any]) -> list[tuple[dict[str, Any], str, str]]:
    """(arguments, the path of the bad string, why) for one tool: valid samples of its required
    arguments, with one argument at a time made NUL text, or a nested list holding a lone
    surrogate; a tool with no arguments gets an extra one."""
    properties = schema.get("properties") or {}
    valid = {k: from_schema(v) for k, v in properties.items()
             if k in (schema.get("required") or [])}
    out = []
    for name in properties or ["x"]:
        out.append(({**valid, name: "v\x00"}, name, NUL))
        out.append(({**valid, name: {"k": ["ok", "\ud800"]}}, f"{name}.k[1]", SURROGATE))
    return out


def test_every_tool_refuses_unstorable_arguments_by_name(app: Flask, client, make_agent,  # type: ignore[no-untyped-def]
                                                        tried) -> None:
    from app.mcp.registry import REGISTRY

    seeded = matrix.seed(app, make_agent)
    http = Http("http://localhost", seeded.tokens["creator"], _FlaskClient(client))
    # As an MCP Apps host: the tools only such a host is offered are tools too.
    http.initialize({"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}})
    assert len(REGISTRY.tools) >= 10
    before = digest(app)
    for name, tool in REGISTRY.tools.items():
        for arguments, field, why in tool_arguments(tool.input_schema):
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}
            answer = messages_of(http.post(None, raw=json.dumps(message).encode()))[-1]
            result = answer.get("result") or {}
            assert result.get("isError"), (name, arguments, answer)
            assert result["content"][0]["text"] == f"Invalid arguments for {name}: " \
                                                   f"{field}: {why}", (name, answer)
            tried(name)
    assert digest(app) == before

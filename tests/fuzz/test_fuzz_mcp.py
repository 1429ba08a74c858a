"""MCP doors under generated input: ``POST /mcp`` (every tool, random JSON-RPC, raw bytes) and
``bin/mcp-server``'s stdin (raw byte lines, not only JSON). Never a 500 or a crash, every
answer is JSON-RPC, and a refused call changes no row."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import budget, digest
from tests.fuzz.test_fuzz_actions import JSON_VALUES
from tests.mcp.conftest import Http, app_env, messages_of
from tests.mcp.test_http import _FlaskClient
from tests.mcp.test_stdio import StdioProcess, messages
from tests.security import matrix


def tool_names(http: Http) -> list[str]:
    names, cursor = [], None
    while True:
        page = http.call("tools/list", {"cursor": cursor} if cursor else {})["result"]
        names += [tool["name"] for tool in page["tools"]]
        cursor = page.get("nextCursor")
        if not cursor:
            return names


@st.composite
def tool_calls(draw: Any, names: list[str], paths: list[str]) -> dict[str, Any]:
    keys = st.sampled_from(["path", "action", "params", "dsl", "name", "operations", "format",
                            "SessionId", "RecipePath", "DryRun", "Args", "method", "uri", "x"])
    values = JSON_VALUES | st.sampled_from(paths) | st.sampled_from(
        ["create_note", "add_comment", "vote", "../..", "//evil.example/x", "/mcp"])
    return {"jsonrpc": "2.0", "id": draw(st.integers(1, 10**6)), "method": "tools/call",
            "params": {"name": draw(st.sampled_from(names) | st.text(max_size=8)),
                       "arguments": draw(st.dictionaries(keys, values, max_size=4))}}


def test_mcp_over_http_never_fails_open(app: Flask, client, make_agent, tried) -> None:  # type: ignore[no-untyped-def]
    seeded = matrix.seed(app, make_agent)
    http = Http("http://localhost", seeded.tokens["creator"], _FlaskClient(client))
    http.initialize()
    names = tool_names(http)
    paths = list(seeded.paths.values())
    # Well-formed calls on seeded pages keep part of the budget past validation whatever the
    # random ids of this run's pages make of the generated ones.
    good = [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
             "params": {"name": "navigate", "arguments": {"path": path}}}
            for n, path in enumerate(paths, start=1)]
    bodies = (st.builds(json.dumps, messages).map(str.encode)
              | st.builds(json.dumps, tool_calls(names, paths)).map(str.encode)
              | st.sampled_from(good).map(json.dumps).map(str.encode)
              | st.binary(max_size=300))

    @budget(120)
    @given(bodies)
    def one(body: bytes) -> None:
        before = digest(app)
        response = http.post(None, raw=body)
        assert response.status_code < 500, (body[:200], response.text[:500])
        if response.status_code != 200:
            tried(response.status_code)
            return
        answers = messages_of(response)
        assert answers and all(a.get("jsonrpc") == "2.0" for a in answers), response.text[:300]
        final = answers[-1]
        result = final.get("result") if isinstance(final.get("result"), dict) else {}
        refused = "error" in final or result.get("isError")
        tried("error" if refused else "ok")
        if refused:
            assert digest(app) == before, (body[:200], final)

    one()
    assert http.call("ping")["result"] == {}  # the session survived it all
    assert tried.outcomes["ok"] and tried.outcomes["error"], tried.outcomes


def test_mcp_server_stdin_survives_raw_bytes(app: Flask, make_agent, tried) -> None:  # type: ignore[no-untyped-def]
    token = make_agent("alice").token
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=token))
    counter = iter(range(10**9))
    lines = (st.binary(max_size=400).map(lambda b: b.replace(b"\n", b" "))
             | st.sampled_from([b"\xff\xfe\xfd", b"{" * 3000, b"[" * 3000 + b"]" * 3000,
                                b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
                                b'{"jsonrpc": "2.0", "id": 1e400, "method": "ping"}',
                                b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
                                b"\x00" * 100, b" ", b"null", b'"' + b"x" * 200_000 + b'"'])
             | st.builds(json.dumps, messages).map(str.encode))
    try:
        @budget(80)
        @given(lines)
        def one(line: bytes) -> None:
            server.send(line)
            marker = f"probe-{next(counter)}"
            server.send({"jsonrpc": "2.0", "id": marker, "method": "ping"})
            tried()
            while True:  # every line up to the probe's answer is a JSON-RPC message
                out = server.read(timeout=30)
                assert out.get("jsonrpc") == "2.0", out
                if out.get("id") == marker:
                    assert out["result"] == {}
                    break

        one()
        assert server.proc.poll() is None
    finally:
        code = server.close()
    assert code == 0, server.proc.stderr.read().decode()[-2000:] if server.proc.stderr else code

"""One JSON-RPC vocabulary: the same malformed input gets the same standard code at every door.

The three HTTP doors — ``/mcp`` (a 2025-11-25 session), the playbook proxy ``/rpc`` and
``/design-model/rpc`` — each get the same bodies through the Flask test client with a token.
Their HTTP statuses differ by design (MCP answers a bad body with 400, the seeds' doors always
with 200, a notification with 202, 204 or an empty 200), the JSON-RPC codes may not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from tests.mcp.conftest import INIT

DOORS = ("/mcp", "/rpc", "/design-model/rpc")
UNKNOWN = "no_such_method"

# (name, body, the code of every answer, the id every answer carries)
CASES: list[tuple[str, bytes, int, Any]] = [
    ("invalid JSON", b'{"jsonrpc": "2.0", "method": ', -32700, None),
    ("not UTF-8", b"\xff\xfe{}", -32700, None),
    ("NaN is not JSON", b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": NaN}}',
     -32700, None),
    ("empty batch", b"[]", -32600, None),
    ("batch of non-objects", b"[1, 2]", -32600, None),
    ("not an object", b'"text"', -32600, None),
    ("id of a wrong type", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600,
     None),
    ("boolean id", b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
    ("missing method", b'{"jsonrpc": "2.0", "id": 1}', -32600, 1),
    ("method not a string", b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600, 1),
    ("wrong jsonrpc", b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600, 1),
    ("missing jsonrpc", b'{"id": 1, "method": "ping"}', -32600, 1),
    ("params a number", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 5}', -32600, 1),
    ("unknown method", json.dumps({"jsonrpc": "2.0", "id": 1, "method": UNKNOWN}).encode(),
     -32601, 1),
]


class Door:
    """POSTs raw bodies to one door with the agent's token (and an MCP session for /mcp)."""

    def __init__(self, client: Any, path: str, token: str) -> None:
        self.client, self.path = client, path
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        if path == "/mcp":
            init = self.post(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                         "params": INIT}).encode())
            assert init.status_code == 200, init.get_data(as_text=True)
            self.headers |= {"Mcp-Session-Id": init.headers["Mcp-Session-Id"],
                             "MCP-Protocol-Version": "2025-11-25"}
            done = self.post(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
            assert done.status_code == 202

    def post(self, body: bytes) -> Any:
        return self.client.post(self.path, data=body, headers=self.headers)

    def answers(self, body: bytes) -> list[dict[str, Any]]:
        """Every JSON-RPC answer to ``body`` (a batch answer is flattened)."""
        response = self.post(body)
        assert response.status_code in ((200, 400) if self.path == "/mcp" else (200,)), (
            self.path, body, response.status_code)
        answer = json.loads(response.get_data(as_text=True))
        answers = answer if isinstance(answer, list) else [answer]
        assert answers and all(a.get("jsonrpc") == "2.0" and "result" not in a
                               for a in answers), answer
        return answers


@pytest.fixture
def doors(app: Flask, studio: Any, demo: None) -> dict[str, Door]:
    return {path: Door(studio.client, path, studio.token) for path in DOORS}


@pytest.mark.parametrize(("name", "body", "code", "ident"), CASES, ids=[c[0] for c in CASES])
def test_same_standard_code_at_every_door(doors: dict[str, Door], name: str, body: bytes,
                                          code: int, ident: Any) -> None:
    for path, door in doors.items():
        answers = door.answers(body)
        assert [a["error"]["code"] for a in answers] == [code] * len(answers), (path, answers)
        assert all(a["id"] == ident for a in answers), (path, answers)
        assert all(isinstance(a["error"]["message"], str) and a["error"]["message"]
                   for a in answers), (path, answers)


def test_batch_items_are_answered_one_by_one(doors: dict[str, Door]) -> None:
    """JSON-RPC 2.0 batches (MCP has none since 2025-06-18: one -32600 for the whole)."""
    for path in ("/rpc", "/design-model/rpc"):
        assert len(doors[path].answers(b"[1, 2, 3]")) == 3, path
    assert len(doors["/mcp"].answers(b"[1, 2, 3]")) == 1


def test_a_notification_is_never_answered(doors: dict[str, Door]) -> None:
    for body in (json.dumps({"jsonrpc": "2.0", "method": UNKNOWN}).encode(),
                 json.dumps({"jsonrpc": "2.0", "method": UNKNOWN, "params": {"a": 1}}).encode()):
        for path, door in doors.items():
            response = door.post(body)
            assert response.status_code in (200, 202, 204), (path, response.status_code)
            assert response.get_data() == b"", (path, response.get_data())
    # A batch of notifications only is not answered either (the seeds' doors have batches).
    batch = json.dumps([{"jsonrpc": "2.0", "method": UNKNOWN}] * 2).encode()
    for path in ("/rpc", "/design-model/rpc"):
        assert doors[path].post(batch).get_data() == b"", path


def test_a_known_method_still_answers(doors: dict[str, Door]) -> None:
    """The doors are not refusing everything: each answers a well-formed call of its own."""
    calls = {"/mcp": "ping", "/rpc": "get_walls", "/design-model/rpc": "get_walls"}
    for path, method in calls.items():
        body = json.dumps({"jsonrpc": "2.0", "id": "x", "method": method}).encode()
        response = doors[path].post(body)
        assert response.status_code == 200
        answer = json.loads(response.get_data(as_text=True))
        assert answer["id"] == "x" and "result" in answer, (path, answer)

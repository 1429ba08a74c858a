"""bin/mcp-server as a real process: the official SDK as client, hostile lines, lifecycle."""

from __future__ import annotations

import asyncio
import http.server
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import parse_md
from tests.mcp.conftest import INIT, MCP_SERVER, ROOT, app_env


class StdioProcess:
    """bin/mcp-server with line-level access to stdin and stdout."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, str(MCP_SERVER)], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, data: bytes | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        raw = json.dumps(data).encode() if isinstance(data, dict) else data
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = 60) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        assert line is not None, "the server closed stdout"
        return json.loads(line)

    def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None
                ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.read()

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def token(make_agent) -> str:  # type: ignore[no-untyped-def]
    return make_agent("alice").token


def test_missing_token_is_a_clear_error() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(MCP_SERVER)], input=b"", env=env, cwd=ROOT,
                          capture_output=True, timeout=30)
    assert done.returncode == 2
    assert b"HARMONIC_API_TOKEN" in done.stderr and done.stdout == b""


def test_invalid_token_exits_with_a_message(app: Flask) -> None:
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN="hmn_wrong"))
    refused = server.request(1, "initialize", INIT)
    assert refused["error"]["code"] == -32001 and refused["error"]["data"]["reason"] == "unknown"
    assert server.proc.wait(30) == 2
    assert b"HARMONIC_API_TOKEN is not usable: invalid token" in server.proc.stderr.read()


def test_hostile_lines_get_errors_and_the_server_keeps_running(app: Flask, token: str) -> None:
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=token, HARMONIC_MAX_BODY="4096"))
    # A discover probe without the 2026 _meta: invalid params, and the process stays.
    assert server.request(1, "server/discover")["error"]["code"] == -32602
    assert server.request(2, "tools/call", {"name": "navigate"})["error"]["code"] == -32600
    assert server.request(3, "initialize", INIT)["result"]["protocolVersion"] == "2025-11-25"
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert server.request(4, "initialize", INIT)["error"]["code"] == -32600
    server.send(b'{"jsonrpc": "2.0", "id": 5, ')
    assert server.read() == {"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32700,
                                       "message": "Parse error: the message is not valid JSON"}}
    server.send(b'{"jsonrpc":"2.0","id":6,"method":"\xff"}')
    assert server.read()["error"]["code"] == -32700
    server.send(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"' + b"a" * 9000 + b'"}}')
    assert server.read()["error"]["code"] == -32600
    server.send(b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]')
    assert server.read()["error"]["code"] == -32600
    assert server.request(9, "no/such/method")["error"]["code"] == -32601
    assert server.request(10, "tools/call", {"name": 5})["error"]["code"] == -32602
    assert server.request(11, "ping") == {"jsonrpc": "2.0", "id": 11, "result": {}}
    assert server.close() == 0


def test_subscription_notifies_over_stdio(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=studio.token))
    server.request(1, "initialize", INIT)
    uri = "harmonic://page/studios/team/note"
    assert server.request(2, "resources/subscribe", {"uri": uri})["result"] == {}
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "execute_action",
                            "arguments": {"action": "create_note", "path": "/studios/team/note",
                                          "params": {"text": "hello"}}}})
    first, second = server.read(), server.read()
    assert first == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                     "params": {"uri": uri}}
    assert second["id"] == 3 and not second["result"].get("isError"), second
    assert server.close() == 0


def test_a_cancelled_call_is_not_run_or_answered(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=studio.token))
    server.request(1, "initialize", INIT)

    def create(request_id: int, text: str) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": "execute_action",
                                      "arguments": {"action": "create_note", "params":
                                                    {"text": text},
                                                    "path": "/studios/team/note"}}}).encode()

    cancel = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 3, "reason": "never mind"}}).encode()
    # One write: call 2 runs, call 3 waits its turn and is cancelled before it starts.
    server.send(create(2, "kept") + b"\n" + create(3, "cancelled") + b"\n" + cancel)
    assert server.read()["id"] == 2
    assert server.request(4, "ping") == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert server.close() == 0
    team = studio.get("/studios/team").get_data(as_text=True)
    assert "kept" in team and "cancelled" not in team


def _answers_to(app: Flask, token: str, lines: list[dict[str, Any] | bytes],
                **env: str) -> tuple[dict[Any, dict[str, Any]], int]:
    """Pipe ``lines`` into bin/mcp-server, close its input, wait for it to exit: (the answers
    by id, the exit code)."""
    data = b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n"
                    for line in lines)
    done = subprocess.run([sys.executable, str(MCP_SERVER)], input=data, cwd=ROOT,
                          env=app_env(app, HARMONIC_API_TOKEN=token, **env),
                          capture_output=True, timeout=120)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {answer["id"]: answer for answer in answers if "id" in answer}
    assert len(by_id) == len(answers), answers  # one answer per request, nothing else
    return by_id, done.returncode


def _tool_call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def test_every_request_read_before_end_of_input_is_answered(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    # `printf '<initialize>\n<navigate>\n<tools/list>\n<unknown>\n' | bin/mcp-server`: the
    # requests queued behind the first call used to be dropped when input ended.
    answers, code = _answers_to(app, studio.token, [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _tool_call(2, "navigate", path="/studios/team"),
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"},
        # An id with a lone surrogate has no UTF-8 form: answered in JSON escapes.
        b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
    ])
    assert code == 0
    assert sorted(answers, key=str) == [1, 2, 3, 4, "\ud800"]
    assert answers[1]["result"]["protocolVersion"] == "2025-11-25"
    assert not answers[2]["result"].get("isError"), answers[2]
    assert "Current URL: /studios/team" in answers[2]["result"]["content"][0]["text"]
    assert "navigate" in {tool["name"] for tool in answers[3]["result"]["tools"]}
    assert answers[4]["error"]["code"] == -32601
    assert answers["\ud800"]["result"] == {}


class _SlowUpstream(http.server.BaseHTTPRequestHandler):
    """A JSON-RPC upstream that takes its time over every call but the catalog probe."""

    delay = 2.0

    def do_POST(self) -> None:  # noqa: N802  (the standard library's name)
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if request.get("method") == "rpc.discover":
            answer: dict[str, Any] = {"error": {"code": -32601, "message": "no catalog"}}
        else:
            time.sleep(self.delay)
            answer = {"result": {"slow": True, "method": request.get("method")}}
        body = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), **answer}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_slow_call_in_flight_at_end_of_input_is_still_answered(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SlowUpstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        started = time.monotonic()
        answers, code = _answers_to(app, studio.token, [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
            _tool_call(2, "upstream_call", method="get_walls"),
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},  # queued behind the slow call
            _tool_call(4, "navigate", path="/studios/team"),
        ], PLAYBOOK_UPSTREAM=f"http://127.0.0.1:{upstream.server_address[1]}")
    finally:
        upstream.shutdown()
    assert code == 0
    assert sorted(answers) == [1, 2, 3, 4]
    assert answers[2]["result"]["structuredContent"] == {"slow": True, "method": "get_walls"}
    assert answers[3]["result"]["tools"] and not answers[4]["result"].get("isError")
    assert time.monotonic() - started >= _SlowUpstream.delay  # it did wait for the call


def test_sigterm_ends_the_server_cleanly(app: Flask, token: str) -> None:
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=token))
    assert "result" in server.request(1, "initialize", INIT)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(15) == 0


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"),
                                              ("legacy", "2025-11-25")])
def test_official_sdk_over_stdio(app: Flask, studio, mode: str,  # type: ignore[no-untyped-def]
                                 version: str) -> None:
    """auto probes server/discover and stays stateless; legacy initializes a session. Both
    navigate and act; only the session remembers the page, so stateless calls name it."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=studio.token),
                                   cwd=str(ROOT))

    async def scenario() -> str:
        async with Client(params, mode=mode) as client:
            assert client.protocol_version == version
            names = [t.name for t in (await client.list_tools()).tools]
            assert {"navigate", "execute_action"} <= set(names)
            page = await client.call_tool("navigate", {"path": "/studios/team"})
            assert not page.is_error and page.structured_content["path"] == "/studios/team"
            path = "/studios/team"
            offered = [a["name"] for a in page.structured_content["actions"]]
            if "create_note" not in offered:
                path = "/studios/team/note"
                assert not (await client.call_tool("navigate", {"path": path})).is_error
            action = {"action": "create_note",
                      "params": {"title": f"Over stdio ({mode})", "text": "Hello from the SDK"}}
            if mode == "auto":
                bare = await client.call_tool("execute_action", action)
                assert bare.is_error and "path is required" in bare.content[0].text
                action["path"] = path
            done = await client.call_tool("execute_action", action)
            assert not done.is_error, done
            context = await client.read_resource("harmonic://context")
            assert "alice" in context.contents[0].text
            return done.structured_content["location"]

    location = asyncio.run(scenario())
    markdown = studio.get(location)
    assert markdown.status_code == 200
    front, body = parse_md(markdown.get_data(as_text=True))
    assert front["title"] == f"Over stdio ({mode})" and "Hello from the SDK" in body


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)
methods = st.sampled_from(["initialize", "ping", "tools/list", "tools/call", "resources/read",
                           "resources/list", "prompts/get", "completion/complete",
                           "logging/setLevel", "resources/subscribe", "notifications/cancelled",
                           "nope", ""])
messages = st.one_of(
    json_values,
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": methods},
                          optional={"id": st.integers() | st.text(max_size=5) | json_values,
                                    "params": json_values}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"),
                           "method": st.just("notifications/cancelled"),
                           "params": st.fixed_dictionaries({"requestId": json_values})}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": st.integers(),
                           "method": st.just("tools/call"),
                           "params": st.fixed_dictionaries(
                               {"name": st.sampled_from(["navigate", "execute_action"]),
                                "arguments": st.dictionaries(
                                    st.sampled_from(["path", "action", "params"]),
                                    json_values | st.sampled_from(["/studios", "/", "//x",
                                                                   "/studios/../u", "http://x"]),
                                    max_size=3)})}))


def test_random_json_lines_never_crash_or_pollute_stdout(app: Flask, token: str) -> None:
    server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=token))
    counter = iter(range(10**6))

    @settings(max_examples=120, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(messages)
    def one(message: Any) -> None:
        server.send(json.dumps(message).encode())
        marker = f"probe-{next(counter)}"
        server.send({"jsonrpc": "2.0", "id": marker, "method": "ping"})
        while True:  # every line up to our ping's answer must be a JSON-RPC message
            out = server.read(timeout=30)
            assert out.get("jsonrpc") == "2.0"
            assert ("id" in out and ("result" in out) != ("error" in out)) or "method" in out
            if out.get("id") == marker:
                assert out["result"] == {}
                break

    one()
    assert server.proc.poll() is None, server.proc.stderr.read()
    assert server.close() == 0


def test_initialize_after_a_late_discover_says_to_probe_again(app: Flask, token: str) -> None:
    """A client whose server/discover timed out while the server started falls back to
    initialize: a discover answered late marks the connection 2026-07-28, so the initialize is
    told so (-32022 naming the modern versions) and a second probe is answered, instead of the
    client settling on the older era. The slow start is made real: the token table is locked
    while the server checks the token (PostgreSQL; SQLite's readers never wait in WAL mode)."""
    from tests.mcp.test_era_2026 import meta

    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        pytest.skip("holding back the token check needs a lock PostgreSQL readers wait on")
    import psycopg

    url = app.config["SQLALCHEMY_DATABASE_URI"].replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url.split("?")[0]) as locker:
        locker.execute("LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE")
        server = StdioProcess(app_env(app, HARMONIC_API_TOKEN=token))
        server.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                     "params": {"_meta": meta()}})
        # Once the server's token check waits on the lock (it read the probe long before: its
        # app loads first), hold the lock past LATE_DISCOVER_SECONDS.
        deadline = time.monotonic() + 120
        while not locker.execute("SELECT count(*) FROM pg_locks WHERE NOT granted"
                                 ).fetchone()[0]:  # type: ignore[index]
            assert time.monotonic() < deadline, "the server never asked for the token"
            time.sleep(0.1)
        time.sleep(6)
    try:
        assert "2026-07-28" in server.read(60)["result"]["supportedVersions"]
        refused = server.request(2, "initialize", INIT)["error"]
        assert refused["code"] == -32022
        assert refused["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
        again = server.request(3, "server/discover", {"_meta": meta()})
        assert "2026-07-28" in again["result"]["supportedVersions"]
    finally:
        server.close()

"""GET /mcp on the app's own port, as bin/serve runs it (its gunicorn worker hands each stream to
an event loop): the official MCP SDK client, pointed at http://host:PORT/mcp, hears a change of
a page it subscribed to through its standalone GET stream; and many open streams on a server
with two pool threads leave the threads free for every other request."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.conftest import module_group
from tests.load.harness import Server, serve_app
from tests.mcp.conftest import Http
from tests.mcp.test_http import _FlaskClient

# One worker runs the module's tests of each database (``--dist loadgroup``): one server start.
pytestmark = [pytest.mark.slow, *module_group("mcp-stream-worker")]

PAGE = "/studios/team/note"
URI = "harmonic://page/studios/team/note"
UPDATED = "notifications/resources/updated"


@pytest.fixture(scope="module")
def plain_server(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """bin/serve with two pool threads and its default settings, for the module's tests that
    change none (per database): each makes its own people, tokens and sessions."""
    with serve_app(app, tmp_path_factory.mktemp("serve"), threads=2) as server:
        yield server


def _updated_uri(message: Any) -> str | None:
    message = getattr(message, "root", message)
    if getattr(message, "method", None) != UPDATED:
        return None
    return str(message.params.uri)


def _create_note(url: str, token: str, title: str) -> None:
    made = httpx.post(f"{url}{PAGE}/actions/create_note", json={"title": title, "text": "x"},
                      headers={"Authorization": f"Bearer {token}",
                               "Accept": "application/json"}, timeout=60)
    assert made.status_code == 201, made.text


def test_the_sdk_client_hears_an_update_on_its_get_stream(
        plain_server: Server, studio) -> None:  # type: ignore[no-untyped-def]
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    sent: list[str] = []  # the method of every HTTP request the SDK made, in order
    heard: list[str] = []

    async def record(request: Any) -> None:
        sent.append(request.method)

    async def scenario(url: str) -> None:
        arrived = asyncio.Event()

        async def on_message(message: Any) -> None:
            found = _updated_uri(message)
            if found is not None:
                heard.append(found)
                arrived.set()

        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {studio.token}"},
                                      timeout=httpx2.Timeout(60.0),
                                      event_hooks={"request": [record]}) as http:
            async with Client(streamable_http_client(url + "/mcp", http_client=http),
                              mode="legacy", message_handler=on_message) as client:
                assert client.protocol_version == "2025-11-25"
                await client.subscribe_resource(URI)
                posts = sent.count("POST")
                # Another client changes the page; this one sends nothing more, so the update
                # can only come over its GET stream.
                await asyncio.to_thread(_create_note, url, studio.token, "heard")
                await asyncio.wait_for(arrived.wait(), 120)
                assert sent.count("POST") == posts
                assert "GET" in sent
                assert heard == [URI]

    asyncio.run(scenario(plain_server.url))


STREAMS = 50


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines()
                if line.startswith("Threads:"))


async def _hold_streams(server: Server, token: str, sessions: list[str]) -> None:
    """Open a GET /mcp stream per session; with all open, ordinary requests and a tools/call
    are answered; then one change reaches every stream."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    opened: asyncio.Queue[int] = asyncio.Queue()
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60, read=None)) as http:
        async def one(sid: str) -> int:
            headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {token}",
                       "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
            async with http.stream("GET", server.url + "/mcp", headers=headers) as response:
                await opened.put(response.status_code)
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        return int(line[3:])
            raise AssertionError("the stream ended without an event")

        tasks = [asyncio.create_task(one(sid)) for sid in sessions]
        statuses = [await asyncio.wait_for(opened.get(), 120) for _ in sessions]
        assert statuses == [200] * STREAMS
        # Every stream is open and the server has two pool threads: a design holding one
        # thread per stream could answer nothing now.
        [worker] = server.worker_pids()
        assert _threads(worker) < STREAMS
        health = await http.get(server.url + "/healthz")
        assert health.status_code == 200
        caller = await asyncio.to_thread(Http, server.url, token)
        await asyncio.to_thread(caller.initialize)
        done = await asyncio.to_thread(caller.tool, "execute_action", action="create_note",
                                       path=PAGE, params={"title": "to all", "text": "x"})
        assert not done.get("isError"), done
        ids = await asyncio.wait_for(asyncio.gather(*tasks), 120)
        assert len(set(ids)) == 1  # the same change event, once to each stream


def test_many_open_streams_hold_no_pool_thread(app: Flask, studio, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with serve_app(app, tmp_path, threads=2, HARMONIC_STREAMS_PER_TOKEN="0") as server:
        sessions = []
        for _ in range(STREAMS):
            http = Http(server.url, studio.token)
            http.initialize()
            assert "error" not in http.call("resources/subscribe", {"uri": URI})
            assert http.session_id is not None
            sessions.append(http.session_id)
        asyncio.run(_hold_streams(server, studio.token, sessions))


def test_a_get_without_event_stream_and_other_paths_stay_with_flask(
        plain_server: Server, studio) -> None:  # type: ignore[no-untyped-def]
    server = plain_server
    headers = {"Authorization": f"Bearer {studio.token}"}
    plain = httpx.get(server.url + "/mcp", headers={**headers, "Accept": "application/json"})
    assert plain.status_code == 405  # Flask's answer: not a stream request
    assert "text/event-stream" in plain.text
    health = httpx.get(server.url + "/healthz", headers={"Accept": "text/event-stream"})
    assert health.status_code == 200  # only /mcp is handed over
    assert health.json()


def _raw_exchange(url: str, request: bytes) -> bytes:
    """Send ``request`` on a new connection; everything the server sends until it closes."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_handed_over_stream_is_framed_as_http_1_1_and_closed(
        plain_server: Server, studio) -> None:  # type: ignore[no-untyped-def]
    """Read by h11 as a client reads it: a chunked response, Connection: close, a whole body,
    then the server closes the connection. An HTTP/1.0 client reads no chunked body: its
    GET /mcp stays with Flask (405)."""
    import h11

    server = plain_server
    client = h11.Connection(h11.CLIENT)
    host = server.url.removeprefix("http://")
    request = client.send(h11.Request(method="GET", target="/mcp", headers=[
        ("Host", host), ("Accept", "text/event-stream"),
        ("Authorization", f"Bearer {studio.token}")]))
    client.receive_data(_raw_exchange(server.url, request))
    client.receive_data(b"")  # the server closed the connection
    response = client.next_event()
    assert isinstance(response, h11.Response)
    headers = dict(response.headers)
    assert (response.status_code, headers[b"transfer-encoding"], headers[b"connection"]) \
        == (400, b"chunked", b"close")  # no Mcp-Session-Id: the stream app's refusal
    body = b""
    while isinstance(event := client.next_event(), h11.Data):
        body += event.data
    assert isinstance(event, h11.EndOfMessage)
    assert json.loads(body)["error"]["data"]["reason"] == "no_session"
    assert isinstance(client.next_event(), h11.ConnectionClosed)

    old = _raw_exchange(server.url, (
        f"GET /mcp HTTP/1.0\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
        f"Authorization: Bearer {studio.token}\r\n\r\n").encode())
    assert old.startswith(b"HTTP/1.0 405 "), old[:200]


def test_handed_over_streams_leave_gunicorns_count_of_connections(
        app: Flask, studio, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The canary of the gthread internals the hand-over uses (pyproject.toml bounds gunicorn
    for them): a worker that may hold 3 connections at once still answers after 4 streams came
    and went one after another (each handed-over connection left gunicorn's count)."""
    sessions = []
    for _ in range(4):  # made in this process: the server sees only the streams
        http = Http("http://localhost", studio.token, _FlaskClient(studio.client))
        http.initialize()
        sessions.append(str(http.session_id))
    headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {studio.token}",
               "MCP-Protocol-Version": "2025-11-25"}
    with serve_app(app, tmp_path, threads=2,
                   GUNICORN_CMD_ARGS="--worker-connections 3") as server:
        for sid in sessions:
            with httpx.stream("GET", server.url + "/mcp", timeout=30,
                              headers={**headers, "Mcp-Session-Id": sid}) as stream:
                assert stream.status_code == 200
        assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200

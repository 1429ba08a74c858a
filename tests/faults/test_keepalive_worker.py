"""bin/serve's worker answers a kept-alive connection's next request on the same thread
(``app.core.keepalive_worker``): requests one after the other and pipelined on one connection
are all answered, in order, on that connection; a connection that keeps its thread busy never
keeps a new client waiting behind its whole backlog; a client that closes is let go; requests
beyond the few that run at once wait their turn only for a bounded time, so requests that
stall (a client that never finishes its body) hold no one else back."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest
from flask import Flask

from tests.conftest import module_group
from tests.load.harness import Server, serve_app
from tests.mcp.conftest import ACCEPT
from tests.mcp.test_era_2026 import VERSION, meta

# One worker runs the module's tests of each database (``--dist loadgroup``): each of its
# module servers starts once, not once on every worker that picks up one of their tests.
pytestmark = [pytest.mark.slow, *module_group("faults-keepalive")]

PIPELINED = 300


def _request(path: str, close: bool = False) -> bytes:
    connection = "close" if close else "keep-alive"
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n"
            f"Connection: {connection}\r\n\r\n").encode()


def _mcp_post(body: bytes, **headers: str) -> bytes:
    """A whole POST /mcp request (the connection closes after its answer)."""
    lines = {"Host": "127.0.0.1", "Content-Type": "application/json", "Accept": ACCEPT,
             **headers, "Content-Length": str(len(body)), "Connection": "close"}
    head = "".join(f"{name}: {value}\r\n" for name, value in lines.items())
    return f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body


class _Reader:
    """Reads whole HTTP/1.1 responses (Content-Length framed) off a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def response(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(status_line.split()[1]), headers, body


@pytest.fixture(scope="module")
def server(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One bin/serve server with a single pool thread for the module (per database): with one
    thread, any connection kept waiting shows."""
    with serve_app(app, tmp_path_factory.mktemp("keepalive"), threads=1) as started:
        yield started


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=60)


def test_one_connection_carries_request_after_request_and_a_pipeline(server: Server) -> None:
    with _connect(server.url) as sock:
        reader = _Reader(sock)
        for _ in range(50):  # each sent once the last answer is read: the thread's own path
            sock.sendall(_request("/healthz"))
            status, headers, body = reader.response()
            assert status == 200 and headers.get("connection") != "close", headers
            assert json.loads(body), body
        # Three requests in one write: three answers, in order, on the same connection.
        sock.sendall(_request("/healthz") + _request("/nowhere") + _request("/healthz",
                                                                             close=True))
        assert [reader.response()[0] for _ in range(3)] == [200, 404, 200]
        assert sock.recv(1) == b""  # the server closed it, as the last request asked


def test_a_busy_connection_does_not_keep_a_new_client_waiting(server: Server) -> None:
    """One pool thread; a client pipelines PIPELINED requests, which keeps that thread busy on
    its connection. A second client's request, sent once the first answer has come, is
    answered before the first client's last: the thread gives the busy connection back
    whenever another is waiting for it."""
    order: list[str] = []
    first_answered = threading.Event()
    with _connect(server.url) as busy:
        def read_busy() -> None:
            reader = _Reader(busy)
            for n in range(PIPELINED):
                reader.response()
                if n == 0:
                    first_answered.set()
            order.append("busy done")

        reading = threading.Thread(target=read_busy)
        reading.start()
        busy.sendall(_request("/healthz") * PIPELINED)
        assert first_answered.wait(60)
        with _connect(server.url) as other:
            other.sendall(_request("/healthz", close=True))
            status, _, _ = _Reader(other).response()
            order.append("other answered")
        reading.join(120)
        assert status == 200
        assert order == ["other answered", "busy done"]


def test_a_client_that_closes_after_its_answer_is_let_go(server: Server) -> None:
    for _ in range(20):  # each closes while the thread may be waiting for its next request
        with _connect(server.url) as sock:
            sock.sendall(_request("/healthz"))
            assert _Reader(sock).response()[0] == 200
    with _connect(server.url) as sock:  # the one thread is free for the next client
        sock.sendall(_request("/healthz", close=True))
        assert _Reader(sock).response()[0] == 200


RUNNING = 2  # requests of one process that run at once, as the servers below are told
STALL = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


@pytest.fixture(scope="module")
def roomy_server(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One pool thread more than the requests it runs at once; the default wait for a turn."""
    with serve_app(app, tmp_path_factory.mktemp("roomy"), threads=RUNNING + 1,
                   HARMONIC_RUNNING=str(RUNNING)) as started:
        yield started


@pytest.fixture(scope="module")
def strict_server(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The same, with a wait for a turn far longer than any test: a request that runs before
    another ends did not need a turn (auth off: the stream test's client has no token)."""
    with serve_app(app, tmp_path_factory.mktemp("strict"), threads=RUNNING + 1,
                   HARMONIC_RUNNING=str(RUNNING), HARMONIC_RUN_WAIT_MS="600000",
                   HARMONIC_MCP_AUTH="off") as started:
        yield started


def _stall(url: str) -> socket.socket:
    """A POST whose body stops after five bytes: its request holds its thread, and its turn."""
    sock = _connect(url)
    whole = _mcp_post(STALL)
    sock.sendall(whole[:len(whole) - len(STALL) + 5])  # the head, five bytes of the body
    return sock


def _finish(sock: socket.socket) -> None:
    """The rest of a stalled body; its answer (a JSON-RPC one, whatever the auth) comes back."""
    sock.sendall(STALL[5:])
    status, _, answer = _Reader(sock).response()
    assert status in (200, 400, 401) and json.loads(answer)["jsonrpc"] == "2.0", answer


@pytest.mark.one_backend  # no database work: the worker's own scheduling
def test_requests_that_stall_hold_no_one_else_back_for_long(roomy_server: Server) -> None:
    """As many uploads as may run at once stall half-way through their bodies. Another client
    is still answered (it waits for a turn only so long, then runs); the stalled ones are
    answered once their bodies arrive."""
    stalled = [_stall(roomy_server.url) for _ in range(RUNNING)]
    try:
        with _connect(roomy_server.url) as other:
            other.sendall(_request("/healthz", close=True))
            status, _, answer = _Reader(other).response()
        assert status == 200 and json.loads(answer), answer
        for sock in stalled:
            _finish(sock)
    finally:
        for sock in stalled:
            sock.close()


@pytest.mark.one_backend
def test_a_request_beyond_those_running_waits_for_its_turn(strict_server: Server) -> None:
    """With every turn held by a stalled upload, another client's request waits (the spare
    thread has it) until an upload ends, and is answered after it."""
    stalled = [_stall(strict_server.url) for _ in range(RUNNING)]
    order: list[str] = []
    try:
        with _connect(strict_server.url) as other:
            other.sendall(_request("/healthz", close=True))

            def read_other() -> None:
                status, _, _ = _Reader(other).response()
                order.append(f"other {status}")

            reading = threading.Thread(target=read_other)
            reading.start()
            reading.join(1.5)  # it stays unanswered: no turn is free
            order.append("first upload ends")
            _finish(stalled[0])
            reading.join(60)
        assert order == ["first upload ends", "other 200"]
        _finish(stalled[1])
    finally:
        for sock in stalled:
            sock.close()


@pytest.mark.one_backend
def test_streams_give_their_turn_back(strict_server: Server) -> None:
    """As many subscriptions/listen streams as may run at once (each lasts minutes) stay open
    while other requests are answered, one after another: a streamed answer runs without a
    turn once its headers are out."""
    listen = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                         "params": {"_meta": meta(), "notifications": {
                             "resourceSubscriptions": ["harmonic://page/studios/nowhere"]}}})
    request = _mcp_post(listen.encode(), **{"MCP-Protocol-Version": VERSION,
                                            "Mcp-Method": "subscriptions/listen"})
    streams = [_connect(strict_server.url) for _ in range(RUNNING)]
    try:
        for sock in streams:
            sock.sendall(request)
            seen = b""
            while b"subscriptions/acknowledged" not in seen:
                chunk = sock.recv(65536)
                assert chunk, seen
                seen += chunk
            assert seen.startswith(b"HTTP/1.1 200") and b"text/event-stream" in seen, seen
        for _ in range(3):  # each needs a turn: were the streams holding theirs, none would come
            with _connect(strict_server.url) as other:
                other.sendall(_request("/healthz", close=True))
                assert _Reader(other).response()[0] == 200
        for sock in streams:  # still open: nothing more has come, and the server has not closed
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)
    finally:
        for sock in streams:
            sock.close()


def test_the_worker_freezes_what_loading_the_app_made() -> None:
    # Full collections must not walk the loaded app's objects again (gc.freeze after load).
    import gc

    from gunicorn.config import Config

    from app.core.keepalive_worker import KeepAliveWorker

    class Loaded:
        def wsgi(self) -> object:
            return lambda environ, start_response: [b""]

    worker = KeepAliveWorker(0, 0, [], Loaded(), 30, Config(), None)
    gc.unfreeze()
    try:
        worker.load_wsgi()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        worker.tmp.close()

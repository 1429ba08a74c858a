"""bin/serve's worker answers a kept-alive connection's next request on the same thread
(``app.core.keepalive_worker``): requests one after the other and pipelined on one connection
are all answered, in order, on that connection; a connection that keeps its thread busy never
keeps a new client waiting behind its whole backlog; a client that closes is let go."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest
from flask import Flask

from tests.load.harness import Server, serve_app

pytestmark = pytest.mark.slow

PIPELINED = 300


def _request(path: str, close: bool = False) -> bytes:
    connection = "close" if close else "keep-alive"
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n"
            f"Connection: {connection}\r\n\r\n").encode()


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

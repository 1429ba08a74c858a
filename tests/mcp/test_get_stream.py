"""GET /mcp, the standalone SSE stream of a 2025-11-25 session, served two ways: on the app's own
port by bin/serve (its gunicorn worker hands the stream to an event loop) and by the separate
stream endpoint (app.mcp.stream under uvicorn, HARMONIC_STREAM_PORT). Either way: updates of
subscribed pages made through the app arrive with event ids; the stream's server is restarted
and the client resumes with Last-Event-ID, receiving what it missed; keep-alive comments; a
bound per token."""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.helpers import stop, wait_until_answering
from tests.load.harness import serve_app
from tests.mcp.conftest import ROOT, Http, app_env, free_port
from tests.mcp.test_http import _FlaskClient

pytestmark = pytest.mark.slow

URI = "harmonic://page/studios/team/note"


@contextmanager
def stream_server(app: Flask, port: int, **env: str) -> Iterator[str]:
    """``uvicorn --factory app.entrypoints:stream_app`` on ``port``; yields its base URL."""
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "app.entrypoints:stream_app",
           "--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=app_env(app, **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(url + "/", time.monotonic() + 120, proc)
        yield url
    finally:
        stop(proc)


@contextmanager
def main_server(app: Flask, log_dir: Path, port: int, **env: str) -> Iterator[str]:
    """``bin/serve`` on ``port`` (two pool threads: streams must not need one each)."""
    with serve_app(app, log_dir, port=port, threads=2, **env) as server:
        yield server.url


Serving = Callable[..., AbstractContextManager[str]]


@pytest.fixture(params=["main_port", "stream_port"])
def serving(request: pytest.FixtureRequest, app: Flask, tmp_path: Path) -> Serving:
    """Starts a server holding GET /mcp streams on a port: ``serving(port, **settings)``."""
    if request.param == "main_port":
        return lambda port, **env: main_server(app, tmp_path, port, **env)
    return lambda port, **env: stream_server(app, port, **env)


class Listener:
    """A GET /mcp stream read on a thread: SSE events (id, message) and comments in a queue."""

    def __init__(self, url: str, http: Http, last_event_id: int | None = None) -> None:
        headers = {"Accept": "text/event-stream", "Authorization": http.headers["Authorization"],
                   "Mcp-Session-Id": str(http.session_id), "MCP-Protocol-Version": "2025-11-25"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.items: queue.Queue[Any] = queue.Queue()
        self.client = httpx.Client(timeout=httpx.Timeout(60, read=120))
        self.response = self.client.send(self.client.build_request("GET", url + "/mcp",
                                                                   headers=headers),
                                         stream=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        event_id = None
        try:
            for line in self.response.iter_lines():
                if line.startswith(":"):
                    self.items.put("comment")
                elif line.startswith("id:"):
                    event_id = int(line[3:].strip())
                elif line.startswith("data:"):
                    self.items.put((event_id, json.loads(line[5:])))
        except httpx.HTTPError:
            pass
        self.items.put("closed")

    def event(self, timeout: float = 60) -> tuple[int, dict[str, Any]]:
        while True:
            item = self.items.get(timeout=timeout)
            if item == "comment":
                continue
            assert item != "closed", "the stream closed"
            return item  # type: ignore[no-any-return]

    def close(self) -> None:
        # Shut the socket down first: closing it while the reading thread is blocked in recv
        # would send no FIN until that recv returns, and the server would go on sending this
        # session's events to a stream nobody reads.
        stream = self.response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=30)
        self.response.close()
        self.client.close()


def _subscribed(studio: Any) -> Http:
    http = Http("http://localhost", studio.token, _FlaskClient(studio.client))
    http.initialize()
    assert "error" not in http.call("resources/subscribe", {"uri": URI})
    return http


def _change(studio: Any, title: str) -> None:
    made = studio.act("/studios/team/note", "create_note", title=title, text="x")
    assert made.status_code == 201, made.get_data(as_text=True)


def test_updates_arrive_and_a_restarted_stream_resumes_with_last_event_id(
        serving: Serving, studio) -> None:  # type: ignore[no-untyped-def]
    http = _subscribed(studio)
    port = free_port()
    with serving(port, HARMONIC_STREAM_KEEPALIVE="1") as url:
        listener = Listener(url, http)
        assert listener.response.status_code == 200
        assert listener.response.headers["content-type"].startswith("text/event-stream")
        assert listener.items.get(timeout=60) == "comment"  # keep-alive while idle
        _change(studio, "one")
        first_id, first = listener.event()
        assert first["method"] == "notifications/resources/updated"
        assert first["params"]["uri"] == URI
        listener.close()
    # The stream's process is gone; the page changes twice meanwhile.
    _change(studio, "two")
    _change(studio, "three")
    with serving(port) as url:
        resumed = Listener(url, http, last_event_id=first_id)
        missed = [resumed.event(), resumed.event()]
        assert [m["params"]["uri"] for _, m in missed] == [URI, URI]
        ids = [i for i, _ in missed]
        assert first_id < ids[0] < ids[1]
        resumed.close()
        # A client that lost what it was sent asks again from an older id: replayed, in order.
        again = Listener(url, http, last_event_id=ids[0])
        assert again.event()[0] == ids[1]
        _change(studio, "four")
        assert again.event()[0] > ids[1]
        with pytest.raises(queue.Empty):  # nothing twice
            again.event(timeout=2)
        again.close()


def _token_for_elsewhere(app: Flask, token: str) -> str:
    """Another token of ``token``'s person, minted (as OAuth would) for another server's /mcp."""
    from app.extensions import db
    from app.services import tokens

    with app.app_context():
        minted, plaintext = tokens.create_token(tokens.resolve(token).user, "elsewhere")
        minted.audience = "https://elsewhere.example/mcp"
        db.session.commit()
    return plaintext


def test_refusals_and_the_bound_per_token(serving: Serving, app: Flask, studio,  # type: ignore[no-untyped-def]
                                          make_agent) -> None:
    http = _subscribed(studio)
    elsewhere = _token_for_elsewhere(app, studio.token)
    with serving(free_port(), HARMONIC_STREAMS_PER_TOKEN="2") as url:
        base = {"Accept": "text/event-stream", "Authorization": f"Bearer {studio.token}"}
        assert httpx.get(url + "/mcp", headers=base).status_code == 400  # no session
        other = make_agent("bob")
        stolen = httpx.get(url + "/mcp", headers={**base, "Authorization":
                                                  f"Bearer {other.token}",
                                                  "Mcp-Session-Id": str(http.session_id)})
        assert stolen.status_code == 404  # another person's session
        assert httpx.get(url + "/mcp", headers={
            "Mcp-Session-Id": str(http.session_id)}).status_code == 401
        foreign = httpx.get(url + "/mcp", headers={**base, "Origin": "https://evil.example",
                                                   "Mcp-Session-Id": str(http.session_id)})
        assert foreign.status_code == 403  # a page of another origin (DNS rebinding)
        assert foreign.json()["error"]["data"]["reason"] == "origin_not_allowed"
        audience = httpx.get(url + "/mcp", headers={**base, "Authorization":
                                                    f"Bearer {elsewhere}",
                                                    "Mcp-Session-Id": str(http.session_id)})
        assert audience.status_code == 401  # RFC 8707: minted for another resource
        assert audience.json()["error"]["data"]["reason"] == "wrong_audience"
        held = [Listener(url, http), Listener(url, http)]
        assert all(h.response.status_code == 200 for h in held)
        third = httpx.get(url + "/mcp", headers={**base, "Mcp-Session-Id": str(http.session_id)})
        assert third.status_code == 429
        assert third.json()["error"]["data"]["reason"] == "too_many_streams"
        for h in held:
            h.close()

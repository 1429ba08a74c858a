"""Fixtures for the design-model server: a real ``bin/model-server`` process and RPC clients.

The server runs on the test database of the current backend (SQLite, then PostgreSQL), so the
``app`` fixture migrates it and empties it between tests. ``rpc`` is parametrized over the two
doors: the standalone server over HTTP, and the app's ``/design-model/rpc`` with a token.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from app.design_model import loader
from app.extensions import db
from tests.conftest import module_group
from tests.helpers import stop, wait_until_healthy

ROOT = Path(__file__).resolve().parents[2]
# ``pytestmark`` of the modules using bin/model-server (a session fixture): their tests of one
# database run on one worker (``--dist loadgroup``), so it starts once per database, not on
# every worker that picks up one of their tests.
MODEL_SERVER_GROUP = module_group("design-model-server")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Rpc:
    """A JSON-RPC caller; subclasses say how a body reaches the server."""

    label = "rpc"
    base_url: str | None = None

    def post(self, body: bytes) -> tuple[int, str, dict[str, str]]:
        raise NotImplementedError

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
        status, text, _headers = self.post(body.encode())
        assert status == 200, text
        response = json.loads(text)
        assert response["jsonrpc"] == "2.0" and response["id"] == 7, response
        return response

    def ok(self, method: str, **params: Any) -> dict[str, Any]:
        response = self.call(method, **params)
        assert "error" not in response, response
        return response["result"]

    def err(self, method: str, code: int, **params: Any) -> dict[str, Any]:
        response = self.call(method, **params)
        assert "result" not in response, response
        assert response["error"]["code"] == code, response
        return response["error"]


class ServerRpc(Rpc):
    label = "server"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.http = httpx.Client(timeout=30)

    def post(self, body: bytes) -> tuple[int, str, dict[str, str]]:
        response = self.http.post(f"{self.base_url}/rpc", content=body,
                                  headers={"Content-Type": "application/json"})
        return response.status_code, response.text, dict(response.headers)


class AppRpc(Rpc):
    label = "app"

    def __init__(self, client: Any, token: str | None) -> None:
        self.client, self.token = client, token

    def post(self, body: bytes) -> tuple[int, str, dict[str, str]]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        response = self.client.post("/design-model/rpc", data=body, headers=headers)
        return response.status_code, response.get_data(as_text=True), dict(response.headers)


@pytest.fixture(scope="session")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dmlog") / "calls.jsonl"


@pytest.fixture(scope="session")
def model_server(app: Flask, database_url: str, server_log: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``bin/model-server`` on a free loopback port, on this backend's test database."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARMONIC_DESIGN")}
    env.update(DATABASE_URL=database_url, SECRET_KEY="test-secret",
               HARMONIC_INSTANCE=str(tmp_path_factory.mktemp("server-instance")),
               HARMONIC_DESIGN_MODEL_LOG=str(server_log))
    proc = subprocess.Popen([sys.executable, str(ROOT / "bin" / "model-server"), "--port",
                             str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(f"{base}/health", proc, "bin/model-server")
    except RuntimeError as exc:
        proc.kill()
        raise RuntimeError(f"{exc}:\n{proc.communicate()[0]}") from None
    try:
        yield base
    finally:
        stop(proc)


@pytest.fixture
def demo(app: Flask) -> None:
    """A fresh demo model for this test."""
    with app.app_context():
        loader.load_demo(db.session, "default", reset=True)
        db.session.commit()


@pytest.fixture(params=["server", "app"])
def rpc(request: pytest.FixtureRequest, app: Flask, demo: None, make_agent: Any) -> Rpc:
    """The demo model behind one of the two doors."""
    if request.param == "server":
        return ServerRpc(request.getfixturevalue("model_server"))
    agent = make_agent("designer")
    return AppRpc(agent.client, agent.token)


@pytest.fixture
def server(app: Flask, demo: None, model_server: str) -> ServerRpc:
    """The demo model behind the standalone server only (for HTTP-specific checks)."""
    return ServerRpc(model_server)

"""``bin/mcp-server`` picks its transport from ``MCP_TRANSPORT`` (seed 003's configuration):
``http`` serves the app's ``/mcp`` on ``MCP_HTTP_PORT``, loopback by default, for clients that
each bring their own token; anything else but ``stdio`` is refused with a message."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import httpx
import pytest
from flask import Flask

from tests.helpers import stop
from tests.mcp.conftest import MCP_SERVER, ROOT, app_env, free_port

pytestmark = pytest.mark.slow


def _wait_for(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120  # gunicorn booting the app on a loaded machine
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"bin/mcp-server exited with {proc.returncode}: {err}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_mcp_transport_http_serves_mcp_on_its_port(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    env = app_env(app, MCP_TRANSPORT="http", MCP_HTTP_PORT=str(port), HARMONIC_WORKERS="1",
                  HARMONIC_THREADS="4", HARMONIC_ACCESS_LOG="off")
    env.pop("HOST", None)  # the default bind: loopback
    env.pop("PORT", None)
    proc = subprocess.Popen([sys.executable, str(MCP_SERVER)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url + "/mcp", proc)

        async def scenario() -> list[str]:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {studio.token}"},
                                          timeout=httpx2.Timeout(60.0)) as http:
                async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
                    names = [t.name for t in (await client.list_tools()).tools]
                    page = await client.call_tool("navigate", {"path": "/studios/team"})
                    assert not page.is_error, page
                    return names

        names = asyncio.run(asyncio.wait_for(scenario(), 180))
        assert {"navigate", "execute_action"} <= set(names)
        # Without a token the endpoint asks for one, as /mcp does everywhere.
        anonymous = httpx.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                               headers={"Accept": "application/json, text/event-stream"})
        assert anonymous.status_code == 401
    finally:
        stop(proc)


def test_an_unknown_transport_is_refused_with_a_message(app: Flask) -> None:
    done = subprocess.run([sys.executable, str(MCP_SERVER)], cwd=ROOT,
                          env=app_env(app, MCP_TRANSPORT="carrier-pigeon"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "MCP_TRANSPORT must be stdio or http, not 'carrier-pigeon'" in done.stderr


def test_a_bad_port_is_refused_with_a_message(app: Flask) -> None:
    done = subprocess.run([sys.executable, str(MCP_SERVER)], cwd=ROOT,
                          env=app_env(app, MCP_TRANSPORT="http", MCP_HTTP_PORT="80a"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "MCP_HTTP_PORT must be a port number, not '80a'" in done.stderr

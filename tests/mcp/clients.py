"""The official MCP SDK as a client, over either transport in either protocol era.

``TRANSPORTS`` names every combination (HTTP against the ``live_server`` fixture, or stdio
spawning ``bin/mcp-server``; 2026-07-28 or 2025-11-25), so a test parametrized over it runs the
same story four ways.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
from flask import Flask

from tests.mcp.conftest import MCP_SERVER, ROOT, app_env

MODES = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
TRANSPORTS = [(transport, mode, version) for transport in ("http", "stdio")
              for mode, version in MODES]
LEGACY = "2025-11-25"


@asynccontextmanager
async def http_client(url: str, token: str, mode: str = "auto",
                      extensions: tuple[Any, ...] = ()) -> AsyncIterator[Any]:
    """The SDK's client over Streamable HTTP: auto speaks 2026-07-28, legacy 2025-11-25."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(60.0)) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http),
                          mode=mode, extensions=list(extensions)) as client:  # type: ignore[arg-type]
            yield client


@asynccontextmanager
async def stdio_client(app: Flask, token: str, errlog: Any = None, mode: str = "auto",
                       extensions: tuple[Any, ...] = (), **env: str) -> AsyncIterator[Any]:
    """The SDK's client spawning bin/mcp-server (stderr to ``errlog`` when given): auto speaks
    2026-07-28, legacy 2025-11-25."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client as spawn

    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=token, **env),
                                   cwd=str(ROOT))
    transport = spawn(params, errlog=errlog) if errlog is not None else spawn(params)
    async with Client(transport, mode=mode,
                      extensions=list(extensions)) as client:  # type: ignore[arg-type]
        yield client


# A scenario that waits on an answer that never comes fails with the awaiting frame in its
# traceback, well before pytest-timeout would stop the whole test.
SCENARIO_SECONDS = 240


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), SCENARIO_SECONDS))  # type: ignore[arg-type]


def opener(transport: str, mode: str, request: pytest.FixtureRequest, app: Flask,
           extensions: tuple[Any, ...] = ()) -> Callable[[str], AbstractAsyncContextManager[Any]]:
    """A function opening a fresh client with a token, over ``transport`` in ``mode``'s era
    (declaring ``extensions``, SDK ClientExtension objects)."""
    def open_client(token: str) -> AbstractAsyncContextManager[Any]:
        if transport == "http":
            return http_client(request.getfixturevalue("live_server"), token, mode, extensions)
        return stdio_client(app, token, mode=mode, extensions=extensions)

    return open_client


def over(transport: str, mode: str, version: str, request: pytest.FixtureRequest, app: Flask,
         token: str, task: Callable[[Any], Awaitable[Any]],
         extensions: tuple[Any, ...] = ()) -> Any:
    """Run ``task`` with a fresh SDK client over ``transport`` in ``mode``'s era."""
    open_client = opener(transport, mode, request, app, extensions)

    async def scenario() -> Any:
        async with open_client(token) as client:
            assert client.protocol_version == version
            return await task(client)

    return run(scenario)


def text_of(result: Any) -> str:
    """The text blocks of a tool result, joined."""
    return "\n".join(block.text for block in result.content if block.type == "text")

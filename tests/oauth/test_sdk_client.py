"""The official MCP SDK's OAuth client against a real server (gunicorn, as bin/dev serves):
discovery from the 401, dynamic registration, sign-in and consent in Chromium, then
navigate; execute_action after a step-up from read to write (403 insufficient_scope); a
refresh; after the person revokes the app, a 401. In both protocol eras."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from flask import Flask

from app.actions import ACTIONS
from app.extensions import db
from tests.conftest import CHROMIUM, module_group
from tests.helpers import open_studio
from tests.mcp.conftest import free_port, gunicorn

# One worker runs the module's tests of each database (``--dist loadgroup``): one server start.
pytestmark = [pytest.mark.browser, pytest.mark.slow, *module_group("oauth-sdk-client")]
PASSWORD = "pat-password-1"


class Memory:
    """TokenStorage in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


@pytest.fixture(scope="module")
def server(app: Flask) -> Iterator[str]:
    """gunicorn on this database for both eras' runs (per database): neither is about the
    server starting, and each signs in a person of its own, whose app registration, grants and
    tokens the cleanup after the test deletes."""
    with gunicorn(app) as base:
        yield base


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # 2025-11-25 sessions; 2026-07-28
def test_sdk_oauth_client_signs_in_and_calls_tools(app: Flask, server: str, mode: str) -> None:
    from app.services import accounts

    with app.app_context():
        accounts.create_user("pat", "Pat", password=PASSWORD)
        db.session.commit()
    open_studio(app, "pat")
    callback = f"http://127.0.0.1:{free_port()}/callback"
    asyncio.run(_scenario(server, callback, mode))


async def _scenario(base: str, callback: str, mode: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientMetadata
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                           args=["--no-sandbox", "--disable-gpu"])
        context = await browser.new_context()
        landed: list[str] = []

        async def redirect_handler(url: str) -> None:
            # The person's side: open the authorization URL, sign in, allow.
            page = await context.new_page()
            page.set_default_timeout(30000)
            arrived: asyncio.Future[str] = asyncio.get_running_loop().create_future()

            async def at_callback(route: Any) -> None:
                if not arrived.done():
                    arrived.set_result(route.request.url)
                await route.fulfill(status=200, body="signed in")

            await page.route(callback + "**", at_callback)
            await page.goto(url)
            if "/login" in page.url:
                await page.fill("#login", "pat")
                await page.fill("#password", PASSWORD)
                await page.click("form.action button[type=submit]")
            await page.wait_for_selector("button[value=allow]")
            assert "Harmonic SDK test" in await page.content()
            if not landed:  # the first time the person grants read only
                await page.uncheck("input[name=grant_write]")
            await page.click("button[value=allow]")
            landed.append(await asyncio.wait_for(arrived, 60))
            await page.close()

        async def callback_handler() -> AuthorizationCodeResult:
            query = {k: v[0] for k, v in parse_qs(urlsplit(landed[-1]).query).items()}
            return AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                           iss=query.get("iss"))

        storage = Memory()
        provider = OAuthClientProvider(
            server_url=base + "/mcp",
            client_metadata=OAuthClientMetadata(client_name="Harmonic SDK test",
                                                redirect_uris=[callback],  # type: ignore[list-item]
                                                grant_types=["authorization_code",
                                                             "refresh_token"],
                                                token_endpoint_auth_method="none"),
            storage=storage, redirect_handler=redirect_handler,
            callback_handler=callback_handler)
        async with httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(60.0)) as http:
            async with Client(streamable_http_client(base + "/mcp", http_client=http),
                              mode=mode) as client:  # type: ignore[arg-type]
                page = await client.call_tool("navigate", {"path": "/studios/team"})
                assert not page.is_error, page
                assert len(landed) == 1 and storage.tokens.scope == "read"
                # Writing with a read grant: 403 insufficient_scope, the client asks the
                # person again (step-up), who now grants write; the call then succeeds.
                made = await client.call_tool("execute_action", {
                    "path": "/studios/team/note", "action": "create_note",
                    "params": {"title": "Signed in", "text": "via OAuth"}})
                assert not made.is_error, made
                assert len(landed) == 2
                first = storage.tokens
                assert first.scope == "read write"
                # Refresh: the access token is due, the client refreshes (rotation).
                provider.context.token_expiry_time = time.time() - 1
                again = await client.call_tool("navigate", {"path": "/studios/team"})
                assert not again.is_error, again
                assert storage.tokens.refresh_token != first.refresh_token
                assert storage.tokens.access_token != first.access_token
                assert len(landed) == 2  # no new sign-in was needed

        # The person sees what the app did (the same audit as any API token's calls)...
        page = await context.new_page()
        await page.goto(base + "/u/pat/agent-activity")
        activity = await page.content()
        # (in words: the note it wrote and the page it read, each with its address)
        assert ACTIONS["create_note"].title() in activity and "Read a page" in activity
        assert 'href="/studios/team/note"' in activity
        # ...and revokes the app in their settings.
        await page.goto(base + "/u/pat/settings/apps")
        assert "Harmonic SDK test" in await page.content()
        await page.click("button[aria-label='Disconnect Harmonic SDK test']")
        async with page.expect_navigation():  # the person confirms in the page's dialog
            await page.click("#confirm-dialog [data-confirm-go]")
        assert "No connected apps." in await page.content()
        await browser.close()

    token = storage.tokens.access_token
    answer = httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                             "params": {"protocolVersion": "2025-11-25",
                                                        "capabilities": {},
                                                        "clientInfo": {"name": "t",
                                                                       "version": "1"}}},
                        headers={"Authorization": f"Bearer {token}",
                                 "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"]["data"]["reason"] == "revoked"
    assert "resource_metadata=" in answer.headers["WWW-Authenticate"]
    refused = httpx.post(base + "/oauth/token", data={
        "grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token,
        "client_id": storage.client_info.client_id})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"

"""Helpers for the list and edit/delete tests: the SDK's MCP client over stdio, and a person
using the HTML forms (with CSRF) of a logged-in browser session."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from flask import Flask

from tests.mcp.conftest import MCP_SERVER, ROOT, app_env

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@asynccontextmanager
async def mcp_client(app: Flask, token: str) -> AsyncIterator[Any]:
    """The official MCP SDK client, spawning bin/mcp-server with ``token``."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)],
                                   env=app_env(app, HARMONIC_API_TOKEN=token), cwd=str(ROOT))
    async with Client(params) as client:
        yield client


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class Person:
    """Someone using the HTML pages: signs in, posts the forms the pages render."""

    def __init__(self, app: Flask, handle: str, password: str = "correct horse 1") -> None:
        from werkzeug.security import generate_password_hash

        from app.extensions import db
        from app.models import User
        from app.services import accounts

        with app.app_context():
            user = db.session.query(User).filter(User.handle == handle).one_or_none()
            if user is None:
                accounts.create_user(handle, handle.title(), password=password)
            else:  # an agent's account (made by make_agent) gets a password to sign in with
                user.password_hash = generate_password_hash(
                    password, app.config["HARMONIC_PASSWORD_HASH"])
            db.session.commit()
        self.client = app.test_client()
        page = self.client.get("/login").get_data(as_text=True)
        r = self.client.post("/login", data={"login": handle, "password": password,
                                             "csrf_token": CSRF.search(page).group(1)})
        assert r.status_code == 303

    def page(self, path: str) -> str:
        r = self.client.get(path, headers={"Accept": "text/html"})
        assert r.status_code == 200, r.get_data(as_text=True)
        return r.get_data(as_text=True)

    def act(self, path: str, action: str, **params: Any) -> Any:
        """Post the action's form from the page; the response (303 on success)."""
        html = self.page(path)
        assert f'data-action="{action}"' in html, (path, action)
        form = {"csrf_token": CSRF.search(html).group(1)}
        for key, value in params.items():
            form[key] = json.dumps(value) if isinstance(value, list | dict) else str(value)
        return self.client.post(f"{path}/actions/{action}", data=form,
                                headers={"Accept": "text/html"})

"""Tokens of every kind for the authorization tests, made through the app's own doors: an
OAuth grant's access token (the whole authorization-code flow: registration, sign-in, consent,
exchange) and an agent's token (its owner's ``create_agent``)."""

from __future__ import annotations

from typing import Any

from flask import Flask

from tests.oauth.conftest import (
    BASE,
    authorize_query,
    csrf_of,
    exchange,
    pkce,
    redirect_params,
    register,
    sign_in,
)


def oauth_token(app: Flask, handle: str, password: str, write: bool = True
                ) -> tuple[str, str]:
    """(access token, client id) of a new app ``handle`` connected, granted ``read`` and,
    when ``write``, ``write``. The flow runs with the app served at the OAuth tests' origin
    (the resource it names), which ``/mcp`` accepts as the request's own."""
    configured = app.config.get("HARMONIC_BASE_URL")
    app.config["HARMONIC_BASE_URL"] = BASE
    try:
        return _connect(app, handle, password, write)
    finally:
        app.config["HARMONIC_BASE_URL"] = configured


def _connect(app: Flask, handle: str, password: str, write: bool) -> tuple[str, str]:
    browser = app.test_client()
    client = register(browser)
    sign_in(browser, handle, password)
    verifier, challenge = pkce()
    url = authorize_query(client["client_id"], challenge)
    page = browser.get(url)
    assert page.status_code == 200, page.get_data(as_text=True)[:300]
    form = {"decision": "allow", "grant_read": "1", "csrf_token": csrf_of(page.get_data(
        as_text=True))}
    if write:
        form["grant_write"] = "1"
    code = redirect_params(browser.post(url, data=form))["code"]
    answer = exchange(browser, client["client_id"], code, verifier)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    granted = answer.get_json()
    assert granted["scope"].split() == (["read", "write"] if write else ["read"]), granted
    return granted["access_token"], client["client_id"]


def agent_token(owner: Any, handle: str) -> str:
    """The first token of a new agent ``handle`` that ``owner`` (an Agent with a person's
    write token) makes on their agents page."""
    made = owner.act(f"/u/{owner.handle}/settings/agents", "create_agent", handle=handle)
    assert made.status_code == 201, made.get_data(as_text=True)
    return str(made.get_json()["result"]["token"])

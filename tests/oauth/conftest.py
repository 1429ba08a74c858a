"""Helpers for the OAuth tests: a registered client, a signed-in person, PKCE, the consent."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.extensions import db

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
REDIRECT = "http://127.0.0.1:9/callback"
BASE = "http://localhost"  # HARMONIC_BASE_URL here: where the test client reaches the app
RESOURCE = f"{BASE}/mcp"


@pytest.fixture(autouse=True)
def _served_at_localhost(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(app.config, "HARMONIC_BASE_URL", BASE)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found, html[:500]
    return found.group(1)


def sign_in(client: FlaskClient, handle: str = "pat", password: str = "pat-password-1") -> None:
    token = csrf_of(client.get("/login").get_data(as_text=True))
    response = client.post("/login", data={"login": handle, "password": password,
                                           "csrf_token": token})
    assert response.status_code == 303, response.get_data(as_text=True)[:300]


def register(client: FlaskClient, redirect: str = REDIRECT, **extra: Any) -> dict[str, Any]:
    body = {"client_name": "Test client", "redirect_uris": [redirect],
            "token_endpoint_auth_method": "none", "grant_types": ["authorization_code",
                                                                  "refresh_token"],
            "response_types": ["code"], **extra}
    response = client.post("/oauth/register", json=body)
    assert response.status_code == 201, response.get_data(as_text=True)
    return dict(response.get_json())


def authorize_query(client_id: str, challenge: str | None, redirect: str = REDIRECT,
                    method: str | None = "S256", **extra: str) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
              "state": "st-1", "scope": "read write", "resource": RESOURCE}
    if challenge is not None:
        params["code_challenge"] = challenge
    if method is not None:
        params["code_challenge_method"] = method
    params.update(extra)
    return "/oauth/authorize?" + urlencode(params)


def consent(client: FlaskClient, url: str, decision: str = "allow",
            with_csrf: bool = True, **form: str) -> Any:
    page = client.get(url)
    assert page.status_code == 200, page.get_data(as_text=True)[:500]
    data = {"decision": decision, "grant_read": "1", "grant_write": "1", **form}
    if with_csrf:
        data["csrf_token"] = csrf_of(page.get_data(as_text=True))
    return client.post(url, data=data)


def redirect_params(response: Any) -> dict[str, str]:
    assert response.status_code == 302, response.get_data(as_text=True)[:500]
    location = response.headers["Location"]
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def code_for(client: FlaskClient, client_id: str) -> tuple[str, str]:
    verifier, challenge = pkce()
    params = redirect_params(consent(client, authorize_query(client_id, challenge)))
    return params["code"], verifier


def exchange(client: FlaskClient, client_id: str, code: str, verifier: str,
             **extra: str) -> Any:
    return client.post("/oauth/token", data={"grant_type": "authorization_code", "code": code,
                                             "redirect_uri": REDIRECT, "client_id": client_id,
                                             "code_verifier": verifier, "resource": RESOURCE,
                                             **extra})


@pytest.fixture
def person(app: Flask) -> str:
    from app.services import accounts

    with app.app_context():
        accounts.create_user("pat", "Pat", password="pat-password-1")
        db.session.commit()
    return "pat"

"""Dynamic client registration is bounded in size and rate (RFC 7591 errors, 429 with
Retry-After); the issuer and every absolute URL come from HARMONIC_BASE_URL, never from the
Host header a client sends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.extensions import db
from config import SettingError, base_url
from tests.oauth.conftest import (
    BASE,
    REDIRECT,
    authorize_query,
    consent,
    pkce,
    redirect_params,
    register,
    sign_in,
)

FORGED = "evil.example"


def _register(client: FlaskClient, **body: Any) -> Any:
    return client.post("/oauth/register", json={"redirect_uris": [REDIRECT],
                                                "token_endpoint_auth_method": "none", **body})


def _clients(app: Flask) -> int:
    with app.app_context():
        return int(db.session.execute(db.text("SELECT count(*) FROM oauth_clients")).scalar()
                   or 0)


# -- size ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "error"), [
    ({"client_name": "x" * 900_000}, "invalid_client_metadata"),  # the finding's 900 KB name
    ({"client_name": "x" * 201}, "invalid_client_metadata"),
    ({"redirect_uris": [f"http://127.0.0.1:{p}/cb" for p in range(1, 20_001)]},
     "invalid_client_metadata"),  # the finding's 20,000 redirect URIs (over the body cap)
    ({"redirect_uris": [f"http://127.0.0.1:{p}/cb" for p in range(1, 12)]},
     "invalid_redirect_uri"),
    ({"redirect_uris": ["http://127.0.0.1/" + "a" * 2100]}, "invalid_redirect_uri"),
    ({"client_uri": "https://app.example/" + "a" * 2100}, "invalid_client_metadata"),
    ({"contacts": [f"c{i}@app.example" for i in range(11)]}, "invalid_client_metadata"),
])
def test_registration_is_bounded_in_size(app: Flask, client: FlaskClient, body: dict[str, Any],
                                         error: str) -> None:
    response = _register(client, **body)
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    answer = response.get_json()
    assert answer["error"] == error, answer
    assert answer["error_description"]
    assert _clients(app) == 0


def test_registration_takes_json_only(app: Flask, client: FlaskClient) -> None:
    body = json.dumps({"client_name": "x", "redirect_uris": [REDIRECT],
                       "token_endpoint_auth_method": "none"})
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        response = client.post("/oauth/register", data=body, content_type=content_type)
        assert response.status_code == 400, content_type
        assert response.get_json()["error"] == "invalid_client_metadata"
    assert _clients(app) == 0


def test_a_client_of_ordinary_size_registers(app: Flask, client: FlaskClient) -> None:
    response = _register(client, client_name="n" * 200,
                         redirect_uris=[f"http://127.0.0.1:{p}/cb" for p in range(1, 11)])
    assert response.status_code == 201, response.get_data(as_text=True)[:300]
    assert _clients(app) == 1


# -- rate ----------------------------------------------------------------------------------------

def test_registration_is_bounded_in_rate_per_address(
        app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # One a minute after a burst of five: the window is five minutes, so no refill (the
    # sliding window's earlier count fades as the next window goes on) can let one more in
    # however slowly a loaded machine runs these twelve requests (at 10 a minute, one did).
    monkeypatch.setitem(app.config, "HARMONIC_RATE_LIMIT_REGISTER", 1)
    monkeypatch.setitem(app.config, "HARMONIC_RATE_BURST_REGISTER", 5)
    answers = [_register(client, client_name=f"c{i}") for i in range(12)]
    assert [a.status_code for a in answers[:5]] == [201] * 5
    refused = answers[5]
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.get_json()["error"] == "temporarily_unavailable"
    assert all(a.status_code == 429 for a in answers[5:])
    assert _clients(app) == 5
    # Another address has its own budget.
    other = client.post("/oauth/register", json={"redirect_uris": [REDIRECT],
                                                 "token_endpoint_auth_method": "none"},
                        environ_base={"REMOTE_ADDR": "127.0.0.9"})
    assert other.status_code == 201


# -- the issuer ----------------------------------------------------------------------------------

@pytest.mark.parametrize("host", [FORGED, "127.0.0.1:5000", "localhost:9999"])
def test_metadata_names_the_configured_issuer_whatever_the_host(client: FlaskClient,
                                                                host: str) -> None:
    asm = client.get("/.well-known/oauth-authorization-server", headers={"Host": host})
    assert asm.status_code == 200
    metadata = asm.get_json()
    assert metadata["issuer"] == BASE
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint",
                "revocation_endpoint"):
        assert metadata[key].startswith(f"{BASE}/oauth/"), metadata[key]
    prm = client.get("/.well-known/oauth-protected-resource/mcp",
                     headers={"Host": host}).get_json()
    assert prm["resource"] == f"{BASE}/mcp" and prm["authorization_servers"] == [BASE]


def test_the_mcp_challenge_names_the_configured_metadata(client: FlaskClient) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    # A Host /mcp answers (loopback) but that is not the configured one.
    response = client.post("/mcp", data=json.dumps(init), content_type="application/json",
                           headers={"Host": "127.0.0.1:5000",
                                    "Accept": "application/json, text/event-stream"})
    assert response.status_code == 401
    assert (f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
            in response.headers["WWW-Authenticate"])
    # A forged Host is refused by /mcp's Host allow-list before anything else.
    forged = client.post("/mcp", data=json.dumps(init), content_type="application/json",
                         headers={"Host": FORGED,
                                  "Accept": "application/json, text/event-stream"})
    assert forged.status_code == 403


def test_the_authorization_response_names_the_configured_issuer(
        app: Flask, client: FlaskClient, person: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The public origin is not where this client reaches the app (http://localhost): the
    # issuer and the resource are the configured ones all the same.
    public = "https://harmonic.example"
    monkeypatch.setitem(app.config, "HARMONIC_BASE_URL", public)
    registered = register(client)
    sign_in(client)
    _v, challenge = pkce()
    params = redirect_params(consent(client, authorize_query(
        registered["client_id"], challenge, resource=f"{public}/mcp")))
    assert params["iss"] == public and "code" in params
    # A resource named after the Host the request came to is not this server's.
    refused = redirect_params(client.get(authorize_query(registered["client_id"], challenge)))
    assert refused["error"] == "invalid_target" and refused["iss"] == public


def test_absolute_links_of_the_agent_guide_use_the_configured_origin(
        client: FlaskClient) -> None:
    text = client.get("/llms.txt", headers={"Host": FORGED}).get_data(as_text=True)
    assert f"{BASE}/studios.md" in text and FORGED not in text


def test_the_default_base_url_is_where_the_app_serves() -> None:
    assert base_url(None, None, None) == "http://127.0.0.1:5000"
    assert base_url(None, "127.0.0.1", "8123") == "http://127.0.0.1:8123"
    assert base_url(None, "0.0.0.0", "8000") == "http://127.0.0.1:8000"
    assert base_url(None, "::1", "8000") == "http://[::1]:8000"
    assert base_url("https://harmonic.example.org/", "0.0.0.0", "80") == \
        "https://harmonic.example.org"
    for wrong in ("harmonic.example.org", "ftp://x", "https://x/path", "https://u@x"):
        with pytest.raises(SettingError, match="HARMONIC_BASE_URL"):
            base_url(wrong, None, None)

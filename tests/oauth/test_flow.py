"""The authorization code flow through the Flask app, and each refusal the issue names."""

from __future__ import annotations

import json

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.oauth.conftest import (
    REDIRECT,
    RESOURCE,
    authorize_query,
    code_for,
    consent,
    exchange,
    pkce,
    redirect_params,
    register,
    sign_in,
)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}


def _mcp(client: FlaskClient, token: str | None, host: str = "localhost") -> object:
    headers = {"Accept": "application/json, text/event-stream", "Host": host}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return client.post("/mcp", data=json.dumps(INIT), headers=headers,
                       content_type="application/json")


def test_metadata_and_the_challenge(client: FlaskClient) -> None:
    prm = client.get("/.well-known/oauth-protected-resource/mcp").get_json()
    assert prm["resource"] == RESOURCE
    assert prm["authorization_servers"] == ["http://localhost"]
    assert client.get("/.well-known/oauth-protected-resource").get_json() == prm
    asm = client.get("/.well-known/oauth-authorization-server").get_json()
    assert asm["issuer"] == "http://localhost"
    assert asm["code_challenge_methods_supported"] == ["S256"]
    assert asm["client_id_metadata_document_supported"] is True
    assert asm["authorization_response_iss_parameter_supported"] is True
    response = _mcp(client, None)
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    assert ('resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp"'
            in challenge)
    assert 'scope="read write"' in challenge
    assert response.get_json()["error"]["data"]["reason"] == "missing"
    # A browser-based client may read the challenge (and the metadata) across origins.
    from_browser = client.post("/mcp", data=json.dumps(INIT), content_type="application/json",
                               headers={"Origin": "http://localhost:6274",
                                        "Accept": "application/json, text/event-stream"})
    assert from_browser.status_code == 401
    assert "WWW-Authenticate" in from_browser.headers["Access-Control-Expose-Headers"]
    assert client.get("/.well-known/oauth-authorization-server").headers[
        "Access-Control-Allow-Origin"] == "*"


def test_code_flow_refresh_rotation_and_revocation(client: FlaskClient, person: str) -> None:
    registered = register(client)
    assert "client_secret" not in registered
    sign_in(client)
    code, verifier = code_for(client, registered["client_id"])
    tokens = exchange(client, registered["client_id"], code, verifier).get_json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "read write", tokens
    assert _mcp(client, tokens["access_token"]).status_code == 200
    # The same token is an API token at every door: a Markdown page too.
    page = client.get(f"/u/{person}/settings/apps", headers={
        "Authorization": f"Bearer {tokens['access_token']}", "Accept": "text/markdown"})
    assert page.status_code == 200 and "Test client" in page.get_data(as_text=True)
    refreshed = client.post("/oauth/token", data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
        "client_id": registered["client_id"], "resource": RESOURCE}).get_json()
    assert refreshed["refresh_token"] != tokens["refresh_token"], refreshed
    assert _mcp(client, refreshed["access_token"]).status_code == 200
    revoked = client.post("/oauth/revoke", data={"token": refreshed["refresh_token"],
                                                 "client_id": registered["client_id"]})
    assert revoked.status_code == 200
    for token in (tokens["access_token"], refreshed["access_token"]):
        answer = _mcp(client, token)
        assert answer.status_code == 401
        assert answer.get_json()["error"]["data"]["reason"] == "revoked"


def test_iss_and_state_in_the_authorization_response(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    _verifier, challenge = pkce()
    params = redirect_params(consent(client, authorize_query(registered["client_id"],
                                                             challenge)))
    assert params["iss"] == "http://localhost" and params["state"] == "st-1"
    denied = redirect_params(consent(client, authorize_query(registered["client_id"],
                                                             challenge), decision="deny"))
    assert denied["error"] == "access_denied" and denied["iss"] == "http://localhost"


def test_a_remembered_consent_is_not_asked_again(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    _verifier, challenge = pkce()
    url = authorize_query(registered["client_id"], challenge)
    redirect_params(consent(client, url, remember="1"))
    again = client.get(url)
    assert "code" in redirect_params(again)


def test_write_can_be_withheld(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    verifier, challenge = pkce()
    url = authorize_query(registered["client_id"], challenge)
    page = client.get(url).get_data(as_text=True)
    from tests.oauth.conftest import csrf_of

    response = client.post(url, data={"decision": "allow", "grant_read": "1",
                                      "csrf_token": csrf_of(page)})
    code = redirect_params(response)["code"]
    tokens = exchange(client, registered["client_id"], code, verifier).get_json()
    assert tokens["scope"] == "read"


# -- refusals --------------------------------------------------------------------------------

def test_wrong_audience_is_refused(app: Flask, client: FlaskClient, person: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    registered = register(client)
    sign_in(client)
    _v, challenge = pkce()
    url = authorize_query(registered["client_id"], challenge,
                          resource="https://elsewhere.example/mcp")
    params = redirect_params(client.get(url))
    assert params["error"] == "invalid_target"
    # A token minted for this server as http://localhost/mcp is honoured there, and at any
    # Host this /mcp answers while that is its public URL.
    code, verifier = code_for(client, registered["client_id"])
    token = exchange(client, registered["client_id"], code, verifier).get_json()["access_token"]
    assert _mcp(client, token).status_code == 200
    assert _mcp(client, token, host="127.0.0.1").status_code == 200
    # Once the server's public URL is another, a request at another origin (127.0.0.1) is not
    # to the /mcp the token was minted for.
    monkeypatch.setitem(app.config, "HARMONIC_BASE_URL", "https://harmonic.example")
    other = _mcp(client, token, host="127.0.0.1")
    assert other.status_code == 401
    assert other.get_json()["error"]["data"]["reason"] == "wrong_audience"
    assert 'error="invalid_token"' in other.headers["WWW-Authenticate"]


def test_missing_or_plain_pkce_is_refused(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    verifier, challenge = pkce()
    missing = redirect_params(client.get(authorize_query(registered["client_id"], None,
                                                         method=None)))
    assert missing["error"] == "invalid_request" and "code_challenge" in missing[
        "error_description"]
    plain = redirect_params(client.get(authorize_query(registered["client_id"], verifier,
                                                       method="plain")))
    assert plain["error"] == "invalid_request" and "S256" in plain["error_description"]
    no_method = redirect_params(client.get(authorize_query(registered["client_id"], challenge,
                                                           method=None)))
    assert no_method["error"] == "invalid_request"
    # And the verifier must match the challenge at the token endpoint.
    code, _verifier = code_for(client, registered["client_id"])
    wrong = exchange(client, registered["client_id"], code, pkce()[0])
    assert wrong.status_code == 400 and wrong.get_json()["error"] == "invalid_grant"


def test_redirect_uri_mismatch_renders_a_page(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    _v, challenge = pkce()
    for uri in (REDIRECT + "/", REDIRECT + "?x=1", "http://127.0.0.1:9/other",
                "https://evil.example/callback"):
        response = client.get(authorize_query(registered["client_id"], challenge,
                                               redirect=uri))
        assert response.status_code == 400, uri
        assert "Location" not in response.headers
        assert "cannot be used" in response.get_data(as_text=True)


def test_no_open_redirect_through_the_authorization_endpoint(client: FlaskClient) -> None:
    # Unknown client, an error-provoking request, unsupported response type: a page every
    # time, whether or not anyone is signed in, never a redirect to the given URI.
    evil = "https://evil.example/landing"
    for query in (authorize_query("no-such-client", "x" * 43, redirect=evil),
                  authorize_query("no-such-client", None, redirect=evil, response_type="token"),
                  "/oauth/authorize?redirect_uri=" + evil):
        response = client.get(query)
        assert response.status_code == 400, query
        assert "evil.example" not in response.headers.get("Location", "")


def test_consent_post_without_csrf_is_refused(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    _v, challenge = pkce()
    response = consent(client, authorize_query(registered["client_id"], challenge),
                       with_csrf=False)
    assert response.status_code == 400
    assert "Location" not in response.headers


def test_authorization_code_used_twice(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    code, verifier = code_for(client, registered["client_id"])
    first = exchange(client, registered["client_id"], code, verifier).get_json()
    assert _mcp(client, first["access_token"]).status_code == 200
    second = exchange(client, registered["client_id"], code, verifier)
    assert second.status_code == 400 and second.get_json()["error"] == "invalid_grant"
    # The tokens the first use issued are revoked (RFC 6749 §4.1.2).
    assert _mcp(client, first["access_token"]).status_code == 401


def test_reused_refresh_token_revokes_the_family(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    code, verifier = code_for(client, registered["client_id"])
    first = exchange(client, registered["client_id"], code, verifier).get_json()
    refresh = {"grant_type": "refresh_token", "client_id": registered["client_id"]}
    second = client.post("/oauth/token", data={**refresh,
                                               "refresh_token": first["refresh_token"]})
    second_tokens = second.get_json()
    assert second.status_code == 200, second_tokens
    reused = client.post("/oauth/token", data={**refresh,
                                               "refresh_token": first["refresh_token"]})
    assert reused.status_code == 400 and reused.get_json()["error"] == "invalid_grant"
    # The whole family is gone: the rotated refresh token and the new access token too.
    assert client.post("/oauth/token", data={
        **refresh, "refresh_token": second_tokens["refresh_token"]}).status_code == 400
    assert _mcp(client, second_tokens["access_token"]).status_code == 401


def test_connected_apps_list_and_revoke(client: FlaskClient, person: str) -> None:
    registered = register(client)
    sign_in(client)
    code, verifier = code_for(client, registered["client_id"])
    token = exchange(client, registered["client_id"], code, verifier).get_json()["access_token"]
    assert _mcp(client, token).status_code == 200
    page = client.get(f"/u/{person}/settings/apps").get_data(as_text=True)
    assert "Test client" in page and registered["client_id"] in page
    from tests.oauth.conftest import csrf_of

    response = client.post(f"/u/{person}/settings/apps/actions/disconnect_app",
                           data={"client_id": registered["client_id"],
                                 "csrf_token": csrf_of(page)})
    assert response.status_code in (200, 303), response.get_data(as_text=True)[:300]
    assert _mcp(client, token).status_code == 401
    assert "No connected apps" in client.get(f"/u/{person}/settings/apps").get_data(
        as_text=True)


def test_a_read_grant_writing_gets_403_insufficient_scope(client: FlaskClient,
                                                          person: str) -> None:
    from tests.helpers import open_studio
    from tests.oauth.conftest import csrf_of

    registered = register(client)
    sign_in(client)
    open_studio(client.application, person)
    verifier, challenge = pkce()
    url = authorize_query(registered["client_id"], challenge)
    page = client.get(url).get_data(as_text=True)
    code = redirect_params(client.post(url, data={"decision": "allow", "grant_read": "1",
                                                  "csrf_token": csrf_of(page)}))["code"]
    token = exchange(client, registered["client_id"], code, verifier).get_json()["access_token"]
    headers = {"Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {token}"}
    init = client.post("/mcp", data=json.dumps(INIT), headers=headers,
                       content_type="application/json")
    session = {"Mcp-Session-Id": init.headers["Mcp-Session-Id"],
               "MCP-Protocol-Version": "2025-11-25", **headers}

    def call(name: str, arguments: dict[str, object]) -> object:
        return client.post("/mcp", content_type="application/json", headers=session,
                           data=json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                            "params": {"name": name,
                                                       "arguments": arguments}}))

    read = call("navigate", {"path": "/studios/team"})
    assert read.status_code == 200, read.get_data(as_text=True)
    write = call("execute_action", {"path": "/studios/team/note", "action": "create_note",
                                    "params": {"text": "needs write"}})
    assert write.status_code == 403
    challenge_header = write.headers["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge_header and 'scope="write"' in \
        challenge_header and "resource_metadata=" in challenge_header
    assert write.get_json()["error"]["data"]["reason"] == "insufficient_scope"
    assert write.get_json()["id"] == 5


def test_a_confidential_client_needs_its_secret_which_is_stored_hashed(
        app: object, client: FlaskClient, person: str) -> None:
    from app.models.oauth import OAuthClient

    body = {"client_name": "Server app", "redirect_uris": [REDIRECT]}
    registered = client.post("/oauth/register", json=body).get_json()
    # No method asked: RFC 7591's client_secret_basic becomes client_secret_post here.
    assert registered["token_endpoint_auth_method"] == "client_secret_post"
    secret = registered["client_secret"]
    with client.application.app_context():
        row = OAuthClient.query.filter_by(client_id=registered["client_id"]).one()
        assert row.secret_hash and secret not in row.secret_hash
    sign_in(client)
    code, verifier = code_for(client, registered["client_id"])
    without = exchange(client, registered["client_id"], code, verifier)
    assert without.status_code in (400, 401) and without.get_json()["error"] == "invalid_client"
    wrong = exchange(client, registered["client_id"], code, verifier, client_secret="nope")
    assert wrong.get_json()["error"] == "invalid_client"
    right = exchange(client, registered["client_id"], code, verifier, client_secret=secret)
    assert right.status_code == 200, right.get_json()
    # The app's tokens are listed under Connected apps, not among the pasted API tokens.
    tokens_page = client.get(f"/u/{person}/settings/tokens").get_data(as_text=True)
    assert "OAuth: Server app" not in tokens_page


def test_registration_refuses_unusable_redirect_uris(client: FlaskClient) -> None:
    for uris in ([], ["http://example.com/cb"], ["/relative"], ["https://app.example/cb#x"]):
        response = client.post("/oauth/register", json={"client_name": "x",
                                                        "redirect_uris": uris,
                                                        "token_endpoint_auth_method": "none"})
        assert response.status_code == 400, (uris, response.get_json())
        assert response.get_json()["error"] in ("invalid_client_metadata",
                                                "invalid_redirect_uri"), response.get_json()


def test_hostile_requests_get_clear_errors(client: FlaskClient, person: str) -> None:
    sign_in(client)
    _v, challenge = pkce()
    for query in ("/oauth/authorize", "/oauth/authorize?response_type=code",
                  authorize_query("https://", challenge), authorize_query("http://[::1", challenge),
                  authorize_query("x" * 5000, challenge),
                  authorize_query("https://user:pw@example.com/c.json", challenge),
                  authorize_query("ftp://example.com/c.json", challenge),
                  authorize_query("\x00", challenge)):
        response = client.get(query)
        # A NUL character is refused app-wide before any view, naming the field (422).
        assert response.status_code == (422 if "%00" in query else 400), (query[:80],
                                                                         response.status_code)
        assert "Location" not in response.headers
    for form in ({}, {"grant_type": "authorization_code"}, {"grant_type": "password"},
                 {"grant_type": "refresh_token", "refresh_token": "x", "client_id": "nope"},
                 {"grant_type": "authorization_code", "client_id": "x" * 5000, "code": "c"},
                 {"grant_type": "authorization_code", "client_id": "\x00", "code": "\x00"},
                 {"grant_type": "refresh_token", "client_id": "\x00", "refresh_token": "\x00"}):
        response = client.post("/oauth/token", data=form)
        # A NUL character is refused app-wide before any view (app.web.limits): 422.
        nul = any("\x00" in v for v in form.values())
        assert response.status_code in ((422,) if nul else (400, 401)), (form,
                                                                         response.status_code)
        assert nul or "error" in response.get_json()
    for body in ("not json", "[]", '{"redirect_uris": "x"}'):
        response = client.post("/oauth/register", data=body, content_type="application/json")
        assert response.status_code == 400, (body, response.status_code)
    for token in ("nothing", "\x00"):
        assert client.post("/oauth/revoke", data={"token": token, "client_id": "nope"}
                           ).status_code in ((422,) if "\x00" in token else (400, 401))

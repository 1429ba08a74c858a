"""Client ID Metadata Documents: fetched through the outbound rules, never from a private
address unless the allow-list names the host, and cached."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.oauth.conftest import (
    REDIRECT,
    authorize_query,
    consent,
    exchange,
    pkce,
    redirect_params,
    sign_in,
)


@pytest.fixture
def metadata_server() -> Iterator[tuple[str, list[str]]]:
    """A local site publishing one client metadata document; yields (its URL, hits)."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            hits.append(self.path)
            url = f"http://127.0.0.1:{self.server.server_address[1]}/client.json"
            body = json.dumps({"client_id": url, "client_name": "Metadata Client",
                               "redirect_uris": [REDIRECT],
                               "logo_uri": "https://evil.example/logo.png"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/client.json", hits
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_a_private_address_is_not_fetched(client: FlaskClient, person: str,
                                          metadata_server: tuple[str, list[str]]) -> None:
    url, hits = metadata_server
    sign_in(client)
    _v, challenge = pkce()
    for client_id in (url.replace("http://", "https://"), "https://10.1.2.3/client.json",
                      "https://localhost/client.json", url):
        response = client.get(authorize_query(client_id, challenge))
        assert response.status_code == 400, client_id
        assert "Location" not in response.headers
        text = response.get_data(as_text=True)
        assert "not public" in text or "https" in text, text
    assert hits == []  # nothing reached the local server
    token = client.post("/oauth/token", data={"grant_type": "authorization_code",
                                              "client_id": "https://10.1.2.3/client.json",
                                              "code": "x", "redirect_uri": REDIRECT})
    assert token.status_code in (400, 401) and token.get_json()["error"] == "invalid_client"


def test_an_allowed_document_drives_the_consent_and_is_cached(
        app: Flask, client: FlaskClient, person: str, metadata_server: tuple[str, list[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, hits = metadata_server
    monkeypatch.setitem(app.config, "HARMONIC_OAUTH_CLIENT_HOSTS",
                        [url.rsplit("/", 1)[0]])  # http://127.0.0.1:<port>
    sign_in(client)
    verifier, challenge = pkce()
    query = authorize_query(url, challenge)
    page = client.get(query).get_data(as_text=True)
    assert "Metadata Client" in page and "127.0.0.1:9" in page
    assert "evil.example/logo.png" not in page  # a logo from another origin is not shown
    params = redirect_params(consent(client, query))
    tokens = exchange(client, url, params["code"], verifier).get_json()
    assert tokens["scope"] == "read write", tokens
    assert len(hits) == 1  # every later look-up came from the cache
    # A redirect URI the document does not list is refused with a page.
    other = client.get(authorize_query(url, challenge, redirect="http://127.0.0.1:9/elsewhere"))
    assert other.status_code == 400 and "Location" not in other.headers

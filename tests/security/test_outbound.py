"""Outbound calls: one deadline for the whole call (connect, headers and body), a bound on calls
at once, public addresses only for URLs the app did not choose (every special-purpose range,
NAT64, 6to4 and Teredo spellings included), and no fetch an anonymous visitor can cause.

The slow servers here are real sockets on loopback that send a byte a second."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.core import netpolicy
from app.design_model.settings import CONFIG_KEY, Settings
from app.extensions import db
from app.oauth import cimd
from tests.oauth.conftest import REDIRECT, authorize_query, pkce, sign_in

DRIP_SECONDS = 1.0  # one byte this often
DRIP_BYTES = 30  # so a call without a total deadline would take 30 s


class Trickle:
    """A loopback server that answers every request one byte a second: in its headers
    (``phase="headers"``) or in its body (``phase="body"``). Records each connection."""

    def __init__(self, phase: str, body: bytes = b"") -> None:
        self.phase, self.body = phase, body
        self.connections = 0
        self.started = threading.Event()
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                self.started.set()
                if self.phase == "headers":
                    head, drip = b"", b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * DRIP_BYTES
                else:
                    head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                            b"Content-Length: %d\r\n\r\n" % (len(self.body) + DRIP_BYTES))
                    drip = self.body + b" " * DRIP_BYTES
                conn.sendall(head)
                for byte in drip:
                    if self._stop.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(DRIP_SECONDS)
            except OSError:
                return  # the client gave up: what the tests want

    def close(self) -> None:
        self._stop.set()
        self._sock.close()


@pytest.fixture
def person(app: Flask) -> str:
    """Pat, who signs in (tests.oauth.conftest.sign_in's person)."""
    from app.services import accounts

    with app.app_context():
        accounts.create_user("pat", "Pat", password="pat-password-1")
        db.session.commit()
    return "pat"


@pytest.fixture
def trickle_body() -> Iterator[Trickle]:
    server = Trickle("body")
    yield server
    server.close()


@pytest.fixture
def trickle_headers() -> Iterator[Trickle]:
    server = Trickle("headers")
    yield server
    server.close()


def _allow(app: Flask, monkeypatch: pytest.MonkeyPatch, *servers: Trickle) -> None:
    monkeypatch.setitem(app.config, cimd.SETTING, [s.url for s in servers])


def _authorize(client: FlaskClient, client_id: str) -> tuple[Any, float]:
    _v, challenge = pkce()
    started = time.monotonic()
    response = client.get(authorize_query(client_id, challenge))
    return response, time.monotonic() - started


# -- one deadline --------------------------------------------------------------------------------

@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_trickling_client_metadata_document_ends_at_the_deadline(
        app: Flask, client: FlaskClient, person: str, monkeypatch: pytest.MonkeyPatch,
        phase: str, request: pytest.FixtureRequest) -> None:
    server: Trickle = request.getfixturevalue(f"trickle_{phase}")
    _allow(app, monkeypatch, server)
    sign_in(client)
    response, took = _authorize(client, f"{server.url}/client-{phase}.json")
    assert server.connections == 1
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert "could not be fetched" in text and f"within {cimd.TIMEOUT:g} s" in text, text[-800:]
    # Each byte came within the per-read timeout; only a deadline for the whole call ends it.
    assert cimd.TIMEOUT - 0.5 <= took < cimd.TIMEOUT + 3, took


def test_a_trickling_design_model_upstream_ends_at_the_deadline(
        app: Flask, studio: Any, demo: None, monkeypatch: pytest.MonkeyPatch,
        trickle_body: Trickle) -> None:
    monkeypatch.setitem(app.config, CONFIG_KEY, Settings(upstream_timeout=2.0))
    body = {"jsonrpc": "2.0", "id": 1, "method": "rhino_import_by_ids",
            "params": {"uniqueIds": ["x"], "revitBaseUrl": trickle_body.url}}
    started = time.monotonic()
    response = studio.client.post("/design-model/rpc", json=body,
                                  headers=studio.headers("application/json"))
    took = time.monotonic() - started
    assert response.status_code == 200
    assert trickle_body.connections == 1
    answer = response.get_json()
    assert "error" in answer or answer["result"].get("errors"), answer
    assert "within 2 s" in json.dumps(answer), answer
    assert took < 2 + 3, took


# -- calls at once -------------------------------------------------------------------------------

def test_calls_at_once_are_bounded_and_one_more_is_refused_at_once(
        app: Flask, client: FlaskClient, person: str, monkeypatch: pytest.MonkeyPatch,
        trickle_body: Trickle) -> None:
    monkeypatch.setitem(app.config, "HARMONIC_OUTBOUND_MAX", 1)
    _allow(app, monkeypatch, trickle_body)
    sign_in(client)
    other = app.test_client()
    sign_in(other)
    first: list[Any] = []
    holder = threading.Thread(target=lambda: first.append(
        _authorize(client, f"{trickle_body.url}/first.json")))
    holder.start()
    assert trickle_body.started.wait(10), "the first fetch never reached the server"
    response, took = _authorize(other, f"{trickle_body.url}/second.json")
    holder.join(30)
    assert took < 2, took  # refused at once, not queued behind the first
    assert response.status_code == 400
    assert "HARMONIC_OUTBOUND_MAX" in response.get_data(as_text=True)
    assert trickle_body.connections == 1
    assert first and first[0][0].status_code == 400  # the first ended at its own deadline


# -- public addresses ----------------------------------------------------------------------------

# One address in each range of IANA's special-purpose registries that is not globally
# reachable, multicast and the deprecated blocks, and IPv6 spellings of 127.0.0.1 and 10.0.0.1.
NOT_PUBLIC = {
    "this network": "0.1.2.3", "private 10/8": "10.0.0.1", "shared (CGN)": "100.64.0.1",
    "loopback": "127.0.0.1", "link local": "169.254.169.254", "private 172.16/12": "172.16.0.1",
    "IETF protocol assignments": "192.0.0.9", "DS-Lite": "192.0.0.2",
    "TEST-NET-1": "192.0.2.1", "6to4 relay anycast": "192.88.99.1",
    "private 192.168/16": "192.168.1.1", "benchmarking": "198.18.0.1",
    "TEST-NET-2": "198.51.100.1", "TEST-NET-3": "203.0.113.1", "multicast": "224.0.0.1",
    "reserved": "240.0.0.1", "broadcast": "255.255.255.255",
    "unspecified v6": "::", "loopback v6": "::1", "IPv4-mapped loopback": "::ffff:127.0.0.1",
    "IPv4-mapped public": "::ffff:8.8.8.8", "IPv4-compatible loopback": "::127.0.0.1",
    "NAT64 loopback": "64:ff9b::7f00:1", "NAT64 private": "64:ff9b::a00:1",
    "NAT64 local-use": "64:ff9b:1::808:808", "discard only": "100::1",
    "dummy prefix": "100:0:0:1::1", "IETF protocol assignments v6": "2001:1::1",
    "Teredo": "2001:0:4136:e378:8000:63bf:3fff:fdd2", "benchmarking v6": "2001:2::1",
    "ORCHIDv2": "2001:20::1", "documentation v6": "2001:db8::1",
    "6to4 loopback": "2002:7f00:1::1", "6to4 private": "2002:c0a8:101::1",
    "documentation 3fff::/20": "3fff::1", "SRv6 SIDs": "5f00::1",
    "unique local": "fd00:ec2::254", "link local v6": "fe80::1", "site local": "fec0::1",
    "multicast v6": "ff02::1",
}
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("address", NOT_PUBLIC.values(), ids=NOT_PUBLIC.keys())
def test_special_purpose_addresses_are_not_public(address: str) -> None:
    assert not netpolicy.is_public_address(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_public(address: str) -> None:
    assert netpolicy.is_public_address(address)


@pytest.mark.parametrize("address", ["64:ff9b::7f00:1", "2002:7f00:1::1", "::ffff:127.0.0.1",
                                     "::127.0.0.1", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
                                     "192.0.0.9", "224.0.0.1", "[fec0::1]", "3fff::1"])
def test_a_client_metadata_document_on_a_special_address_is_not_fetched(
        client: FlaskClient, person: str, address: str) -> None:
    host = address if address.startswith("[") or ":" not in address else f"[{address}]"
    sign_in(client)
    response, _took = _authorize(client, f"https://{host}/client.json")
    assert response.status_code == 400 and "Location" not in response.headers
    text = response.get_data(as_text=True)
    # Refused by the check before any connection (a connection attempt would say otherwise).
    assert "is not public" in text, text[-800:]


# -- nothing fetched for an anonymous visitor ----------------------------------------------------

def test_an_anonymous_visitor_cannot_make_the_server_fetch(
        app: Flask, client: FlaskClient, person: str, monkeypatch: pytest.MonkeyPatch,
        trickle_body: Trickle) -> None:
    _allow(app, monkeypatch, trickle_body)
    url = f"{trickle_body.url}/client.json"
    response, took = _authorize(client, url)
    assert response.status_code == 303 and "/login?next=" in response.headers["Location"]
    token = client.post("/oauth/token", data={"grant_type": "authorization_code",
                                              "client_id": url, "code": "x",
                                              "redirect_uri": REDIRECT, "code_verifier": "v"})
    assert token.status_code in (400, 401) and token.get_json()["error"] == "invalid_client"
    revoke = client.post("/oauth/revoke", data={"token": "x", "client_id": url})
    assert revoke.status_code in (400, 401)
    assert trickle_body.connections == 0
    with app.app_context():
        assert db.session.execute(db.text("SELECT count(*) FROM oauth_codes")).scalar() == 0

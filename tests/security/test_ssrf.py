"""Server-side request forgery: every outbound door refuses hosts off its allow-list — private,
link-local and metadata addresses, other spellings of an address, DNS names that resolve to
loopback or private ranges, credentials in URLs — and never follows a redirect elsewhere.

Doors: ``revitBaseUrl`` of the design-model server (``/design-model/rpc``), the playbook proxy's
upstream (``/rpc``, also used by workflow ``rpc`` tools), and workflow ``http`` tools.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from flask import Flask

from app.workflows.tools import host_allowed

# Names here resolve (in public DNS or /etc/hosts conventions) to loopback or private ranges;
# they are refused by name: an allow-list entry is an exact host, never a resolution result.
HOSTILE = [
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata (link-local)
    "http://[fd00:ec2::254]/",  # metadata over IPv6 (unique local)
    "http://10.0.0.8:5210", "http://192.168.1.10:5210", "http://172.16.0.1:5210",
    "http://[fe80::1]:5210", "http://[::ffff:169.254.169.254]:5210",
    "http://0.0.0.0:5210", "http://2130706433:5210", "http://0x7f000001:5210",
    "http://127.1:5210", "http://017700000001:5210",  # 127.0.0.1 in other spellings
    "http://127.0.0.1.nip.io:5210", "http://localtest.me:5210", "http://lvh.me:5210",
    "http://169.254.169.254.nip.io/", "http://metadata.google.internal/",
    "http://localhost.evil.example:5210", "http://evil.example:5210",
    "http://127.0.0.1@evil.example:5210", "http://evil.example#@127.0.0.1:5210",
    "http://evil.example\\@127.0.0.1:5210", "file:///etc/passwd", "gopher://127.0.0.1:70/_x",
    "ftp://127.0.0.1/", "//127.0.0.1:5210", "http:///rpc", "",
]


class Listener:
    """A loopback HTTP server that records every request; optionally redirects all of them."""

    def __init__(self, redirect_to: str | None = None, body: dict[str, Any] | None = None
                 ) -> None:
        self.hits: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                site.hits.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                if redirect_to is not None:
                    self.send_response(307)
                    self.send_header("Location", redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = json.dumps(body or {"jsonrpc": "2.0", "id": 1, "result": {}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def outside() -> Iterator[Listener]:
    """Where a forged request would land; the tests assert it is never reached."""
    site = Listener()
    yield site
    site.close()


def design_rpc(agent: Any, **params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "rhino_import_by_ids",
            "params": {"uniqueIds": ["x"], **params}}
    response = agent.client.post("/design-model/rpc", json=body,
                                 headers=agent.headers("application/json"))
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def test_revit_base_url_refuses_hosts_off_the_allow_list(studio, demo) -> None:  # type: ignore[no-untyped-def]
    for url in HOSTILE:
        answer = design_rpc(studio, revitBaseUrl=url)
        assert answer["error"]["code"] == -32602, (url, answer)
        assert answer["error"]["data"]["param"] == "revitBaseUrl", url


def test_revit_base_url_never_follows_a_redirect(studio, demo, outside: Listener) -> None:  # type: ignore[no-untyped-def]
    bouncer = Listener(redirect_to=f"{outside.url}/rpc")
    try:
        answer = design_rpc(studio, revitBaseUrl=bouncer.url)  # loopback: allowed
    finally:
        bouncer.close()
    assert "error" in answer or answer["result"]["errors"], answer
    assert bouncer.hits and outside.hits == []


@pytest.mark.parametrize("upstream", [u for u in HOSTILE if u])
def test_the_playbook_proxy_refuses_an_upstream_off_the_allow_list(
        app: Flask, studio, monkeypatch, upstream: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", upstream)
    answer = studio.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "get_walls"})
    assert answer.status_code == 200
    error = answer.get_json()["error"]
    assert error["data"]["code"] == "UPSTREAM_NOT_ALLOWED", (upstream, error)


def test_the_playbook_proxy_never_follows_a_redirect(app: Flask, studio, monkeypatch,
                                                     outside: Listener) -> None:  # type: ignore[no-untyped-def]
    bouncer = Listener(redirect_to=f"{outside.url}/rpc")
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", bouncer.url)
    try:
        answer = studio.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "get_walls"})
    finally:
        bouncer.close()
    assert answer.get_json()["error"]["data"]["code"] == "UPSTREAM_HTTP"
    assert bouncer.hits == ["POST /rpc"] and outside.hits == []


def test_a_queued_job_id_cannot_steer_the_proxy_to_another_path(app: Flask, studio,
                                                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The upstream names the job it queued; the id is one path segment, whatever it contains.
    upstream = Listener(body={"jsonrpc": "2.0", "id": 1,
                              "result": {"queued": True, "jobId": "../../admin?x=1#y"}})
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", upstream.url)
    monkeypatch.setitem(app.config, "PLAYBOOK_JOB_TIMEOUT", "0.1")
    try:
        studio.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "get_walls"})
    finally:
        upstream.close()
    polls = [hit for hit in upstream.hits if hit.startswith("GET")]
    assert polls and all(hit.startswith("GET /job/..%2F..%2Fadmin%3Fx%3D1%23y") for hit in polls)


def test_workflow_http_tools_refuse_hosts_off_the_allow_list(app: Flask, monkeypatch) -> None:
    # Allow-listed: exactly this loopback port. Everything else, including names that resolve
    # to it, is refused before any connection is made.
    monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", "127.0.0.1:5210")
    with app.app_context():
        assert host_allowed("http://127.0.0.1:5210/ok") == (True, "")
        for url in HOSTILE + ["http://127.0.0.1:5211/", "http://localhost:5210/",
                              "https://127.0.0.1:5210.evil.example/"]:
            ok, why = host_allowed(url)
            assert not ok and why, url


def test_a_refusal_names_the_setting_never_the_allow_list(app: Flask, studio, demo,  # type: ignore[no-untyped-def]
                                                          monkeypatch) -> None:
    # Each door's refusal used to end with the whole list ("(SETTING: a, b, c)"): a map of
    # the hosts this server may reach, told to whoever asked for another one.
    from app.design_model.settings import CONFIG_KEY, Settings

    entries = ("revit.lan", "10.9.9.9:5210", "https://ci.lan")
    monkeypatch.setitem(app.config, CONFIG_KEY, Settings(allowed_upstreams=entries))
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAMS", ",".join(entries))
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", "http://10.0.0.8:5210")
    monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", ",".join(entries))
    told = {
        "HARMONIC_DESIGN_UPSTREAMS": design_rpc(studio, revitBaseUrl="http://10.0.0.8:5210")
        ["error"]["message"],
        "PLAYBOOK_UPSTREAMS": studio.post("/rpc", json={
            "jsonrpc": "2.0", "id": 1, "method": "get_walls"}).get_json()["error"]["message"],
    }
    with app.app_context():
        told["WORKFLOWS_HTTP_ALLOW"] = host_allowed("http://10.0.0.8:5210/x")[1]
    for setting, message in told.items():
        assert "host '10.0.0.8:5210' is not allowed: this server's operator allows a host by " \
               f"adding it to {setting}" in message, message
        assert not any(host in message for host in ("revit.lan", "10.9.9.9", "ci.lan")), message

"""http tasks of noetl.io/v2 documents against a local server: the result NoETL hands on, an
answer's status read by a policy, credentials by name in a header, the outbound allow-list."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from flask import Flask

from tests.workflows.v2.conftest import of_type, run_to_end

TOKEN = "tok-v2-keychain-7f3a9c"


class Service:
    """/busy answers 503 twice, then JSON; /echo answers what it was sent."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                owner.seen.append({"path": self.path, "headers": dict(self.headers)})
                busy = sum(1 for s in owner.seen if s["path"].startswith("/busy"))
                if self.path.startswith("/busy") and busy <= 2:
                    self._answer(503, {"error": "busy"})
                else:
                    self._answer(200, {"path": self.path, "ok": True})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                owner.seen.append({"path": self.path, "headers": dict(self.headers),
                                   "body": body})
                self._answer(201, {"received": body})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def service(v2: Flask, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    server = Service()
    monkeypatch.setitem(v2.config, "WORKFLOWS_HTTP_ALLOW", f"127.0.0.1:{server.server.server_port}")
    yield server
    server.server.shutdown()


CALLS = """
apiVersion: noetl.io/v2
kind: Playbook
metadata: {name: v2-calls, path: tests/v2/calls}
keychain:
  - name: service_token
    kind: bearer
workload:
  base: http://127.0.0.1:9
workflow:
  - step: start
    tool:
      kind: http
      url: "{{ base }}/busy"
      spec:
        policy:
          rules:
            - when: "{{ output.status == 'error' and output.http.status == 503 }}"
              then: {do: retry, attempts: 5, delay: 0.05, backoff: linear}
            - when: "{{ output.status == 'error' }}"
              then: {do: fail}
            - else:
                then: {do: continue}
    next:
      arcs:
        - step: send
          when: "{{ start.status_code == 200 and start.data.ok }}"
  - step: send
    tool:
      kind: http
      method: POST
      url: "{{ base }}/echo"
      headers:
        Authorization: "Bearer {{ keychain.service_token }}"
      payload:
        from: "{{ start.data.path }}"
        count: 2
"""


def test_an_http_task_retries_a_503_by_its_policy_and_posts_with_a_named_credential(
        v2: Flask, service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(v2.config, "WORKFLOWS_SECRETS", "service_token")
    monkeypatch.setenv("SERVICE_TOKEN", TOKEN)
    run, events = run_to_end(v2, CALLS, {"base": service.base})
    assert run["status"] == "succeeded", run["error"]
    assert [s["path"] for s in service.seen] == ["/busy", "/busy", "/busy", "/echo"]
    posted = service.seen[-1]
    assert posted["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert posted["body"] == {"from": "/busy", "count": 2}
    assert run["result"]["status_code"] == 201
    assert run["result"]["data"] == {"received": {"from": "/busy", "count": 2}}
    errors = of_type(events, "call.error")
    assert [(e["data"]["attempt"], e["data"]["then"]) for e in errors] == [
        (1, "retry"), (2, "retry")]
    assert "answered 503" in errors[0]["data"]["error"]
    assert TOKEN not in json.dumps([e["data"] for e in events], default=str)


def test_a_credential_not_on_the_operators_list_fails_the_task(v2: Flask,
                                                               service: Service) -> None:
    run, _events = run_to_end(v2, CALLS, {"base": service.base})
    assert run["status"] == "failed"
    assert run["error"].startswith("step send: send: ")
    assert "secret 'service_token' is not allowed: this server's operator allows a secret by " \
           "adding its name to WORKFLOWS_SECRETS" in run["error"]
    assert [s["path"] for s in service.seen] == ["/busy"] * 3

"""Inline python of a noetl.io/v2 task: on only when the operator says so, in a separate
process that sees nothing of the server's environment, reaches only the allow-listed hosts and
stops at its time limit; a registered function needs no setting."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from flask import Flask

from tests.workflows.v2.conftest import of_type, run_to_end


def _code(code: str, **inputs: Any) -> str:
    body = "\n".join("        " + line for line in code.strip().splitlines())
    given = "".join(f"\n        {k}: {json.dumps(v)}" for k, v in inputs.items())
    return f"""
apiVersion: noetl.io/v2
kind: Playbook
metadata: {{name: v2-code, path: tests/v2/code}}
workflow:
  - step: start
    tool:
      kind: python
      input:{given or " {}"}
      code: |
{body}
"""


class Answers:
    def __init__(self) -> None:
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                owner.hits += 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"42")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def answers() -> Iterator[Answers]:
    server = Answers()
    yield server
    server.server.shutdown()


FETCH = """
import urllib.request
with urllib.request.urlopen(url, timeout=5) as answer:
    result = int(answer.read())
"""


def test_the_code_reaches_an_allow_listed_host(v2: Flask, answers: Answers,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(v2.config, "WORKFLOWS_HTTP_ALLOW",
                        f"127.0.0.1:{answers.server.server_port}")
    run, _events = run_to_end(v2, _code(FETCH, url=answers.url))
    assert run["status"] == "succeeded", run["error"]
    assert run["result"] == 42 and answers.hits == 1


def test_the_code_reaches_no_other_host(v2: Flask, answers: Answers) -> None:
    run, events = run_to_end(v2, _code(FETCH, url=answers.url))
    assert run["status"] == "failed"
    assert "host '127.0.0.1' is not allowed: this server's operator allows a host by adding " \
           "it to WORKFLOWS_HTTP_ALLOW" in run["error"]
    assert answers.hits == 0
    assert of_type(events, "call.error")[0]["data"]["then"] == "fail"


def test_the_code_sees_none_of_the_servers_environment(
        v2: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PG_LOCAL", "postgresql://someone:hunter22@db/prod")
    run, _events = run_to_end(v2, _code("result = sorted(os.environ)"))
    assert run["status"] == "succeeded", run["error"]
    assert "PG_LOCAL" not in run["result"] and "DATABASE_URL" not in run["result"]
    assert not any(name.startswith(("HARMONIC_", "WORKFLOWS_")) for name in run["result"])


def test_a_connection_to_an_address_is_checked_too(v2: Flask, answers: Answers) -> None:
    code = (f"import socket\nsocket.socket().connect(('127.0.0.1', "
            f"{answers.server.server_port}))\nresult = 1")
    run, _events = run_to_end(v2, _code(code))
    assert run["status"] == "failed"
    assert f"network access to ('127.0.0.1', {answers.server.server_port}) is not allowed" \
           in run["error"]
    assert answers.hits == 0


def test_the_code_may_not_start_processes_or_write_outside_its_folder(v2: Flask) -> None:
    run, _events = run_to_end(v2, _code('os.system("touch /tmp/owned")'))
    assert run["status"] == "failed" and "may not do this here (os.system)" in run["error"]
    run, _events = run_to_end(v2, _code('open("/tmp/owned.txt", "w").write("x")'))
    assert run["status"] == "failed"
    assert "python tasks write files only in their own folder" in run["error"]


def test_the_code_stops_at_its_time_limit(v2: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(v2.config, "WORKFLOWS_PYTHON_SECONDS", "1")
    run, _events = run_to_end(v2, _code("while True:\n    pass"))
    assert run["status"] == "failed"
    assert "python: stopped" in run["error"]


def test_the_code_is_refused_when_inline_code_is_off(v2: Flask,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from app.services.errors import Invalid
    from tests.workflows.v2.conftest import start

    monkeypatch.setitem(v2.config, "WORKFLOWS_PYTHON_INLINE", "off")
    with pytest.raises(Invalid) as refused:
        start(v2, _code("result = 1"))
    assert "its operator turns it on with WORKFLOWS_PYTHON_INLINE=on" in refused.value.message


def test_a_registered_function_needs_no_setting(v2: Flask,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(v2.config, "WORKFLOWS_PYTHON_INLINE", "off")
    monkeypatch.setitem(v2.config, "WORKFLOWS_PYTHON_MODULES", "tests.workflows.functions")
    document = _code("unused").replace("      code: |\n        unused\n",
                                       "      function: tests.workflows.functions:word_count\n")
    document = document.replace("input: {}", 'input: {text: "one two three"}')
    run, _events = run_to_end(v2, document)
    assert run["status"] == "succeeded", run["error"]
    assert run["result"] == {"words": 3}

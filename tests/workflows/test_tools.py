"""Tool types and model steps: gateways, allow-lists, read-only SQL, retries, failures."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.workflows.conftest import drain, events_of, user_id
from tests.workflows.gateway import ScriptedGateway, answer, tool_call

WEEKLY = (Path(__file__).resolve().parents[2] / "examples" / "workflows" / "weekly-note.yaml")


def _start(app: Flask, text: str, inputs: dict[str, Any] | None = None,
           as_user: str | None = "alice"):  # type: ignore[no-untyped-def]
    from app.workflows import runs

    with app.app_context():
        return runs.start(text, inputs or {}, user_id(app, as_user) if as_user else None)


def test_without_a_gateway_the_run_fails_at_its_first_model_step(
        app: Flask, studio, wf_settings) -> None:  # type: ignore[no-untyped-def]
    run_id = _start(app, WEEKLY.read_text())
    run = drain(app, run_id)
    assert run["status"] == "failed"
    assert "LLM_GATEWAY_URL" in run["error"] and run["error"].startswith("step mcp.summarize")
    events = events_of(app, run_id)
    assert [(e["type"], e["step"]) for e in events][-3:] == [
        ("action_started", "mcp.summarize"), ("action_error", "mcp.summarize"),
        ("execution_failed", None)]
    done = {e["step"] for e in events if e["type"] == "step_completed"}
    assert done == {"start", "resource.this_week"}


def test_a_model_that_keeps_calling_tools_stops_at_the_round_limit(
        app: Flask, studio, gateway: ScriptedGateway) -> None:  # type: ignore[no-untyped-def]
    gateway.replies = [tool_call("create_note", {"text": f"n{i}"}, f"c{i}") for i in range(5)]
    run = drain(app, _start(app, WEEKLY.read_text()))
    assert run["status"] == "failed"
    assert "after 3 rounds (max_rounds)" in run["error"]
    assert len(gateway.requests) == 3


def test_a_tool_the_turn_may_not_use_is_refused_to_the_model(
        app: Flask, studio, gateway: ScriptedGateway) -> None:  # type: ignore[no-untyped-def]
    gateway.replies = [tool_call("delete_studio", {}), answer("I could not do that.")]
    run = drain(app, _start(app, WEEKLY.read_text()))
    assert run["status"] == "succeeded"
    refused = next(m for m in gateway.requests[1]["messages"] if m["role"] == "tool")
    assert "'delete_studio' is not allowed here (allowed: create_note)" in refused["content"]


class _Site:
    """A tiny HTTP server: /redirect → another server, /flaky fails once, /ok answers JSON."""

    def __init__(self, redirect_to: str = "") -> None:
        self.hits: list[tuple[str, dict[str, str]]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                site.hits.append((self.path, dict(self.headers)))
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", redirect_to)
                    self.end_headers()
                    return
                if self.path == "/flaky" and len(site.hits) == 1:
                    self.send_response(503)
                    self.end_headers()
                    return
                data = json.dumps({"path": self.path}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def sites() -> Iterator[tuple[_Site, _Site]]:
    outside = _Site()
    inside = _Site(redirect_to=f"http://127.0.0.1:{outside.port}/stolen")
    yield inside, outside
    inside.server.shutdown()
    outside.server.shutdown()


def _http_playbook(url: str) -> str:
    return f"""
apiVersion: harmonic/v1
kind: Playbook
metadata: {{name: http-demo, path: tests/http}}
workbook:
  - name: fetch
    type: http
    spec: {{url: "{url}"}}
workflow:
  - step: start
    next: [fetch]
  - step: fetch
    task: fetch
    next: [end]
  - step: end
"""


def test_http_follows_only_allow_listed_hops(app: Flask, sites, wf_settings,
                                             monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inside, outside = sites
    monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", f"127.0.0.1:{inside.port}")
    run = drain(app, _start(app, _http_playbook(f"http://127.0.0.1:{inside.port}/redirect"),
                            as_user=None))
    assert run["status"] == "failed"
    assert f"host '127.0.0.1:{outside.port}' is not allowed" in run["error"]
    assert "(redirected)" in run["error"] and outside.hits == []


def test_http_retries_a_503_with_the_same_idempotency_key(
        app: Flask, sites, wf_settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inside, _ = sites
    monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", f"127.0.0.1:{inside.port}")
    run_id = _start(app, _http_playbook(f"http://127.0.0.1:{inside.port}/flaky"), as_user=None)
    run = drain(app, run_id)
    assert run["status"] == "succeeded"
    keys = {headers["Idempotency-Key"] for _, headers in inside.hits}
    assert len(inside.hits) == 2 and keys == {f"{run_id}:fetch"}
    fetch = [(e["type"], e["data"].get("attempt")) for e in events_of(app, run_id)
             if e["step"] == "fetch"]
    assert ("action_error", 1) in fetch and ("step_started", 2) in fetch
    error = next(e for e in events_of(app, run_id) if e["type"] == "action_error")
    assert "retry_in" in error["data"] and "503" in error["data"]["error"]


def test_http_url_values_are_percent_encoded(app: Flask, sites, wf_settings,
                                            monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inside, _ = sites
    base = f"http://127.0.0.1:{inside.port}"
    monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", f"127.0.0.1:{inside.port}")
    playbook = _http_playbook("{{ workload.base }}/ok?q={{ workload.q }}").replace(
        "workbook:", f"workload: {{base: '{base}', q: 'a&b=c d/e'}}\nworkbook:")
    run = drain(app, _start(app, playbook, as_user=None))
    assert run["status"] == "succeeded", run
    # The base URL at the start is pasted as it is; the query value stays one value.
    assert [path for path, _ in inside.hits] == ["/ok?q=a%26b%3Dc%20d%2Fe"]


def test_a_permanent_error_kills_the_step_at_once(app: Flask, wf_settings) -> None:
    run = drain(app, _start(app, _http_playbook("http://example.invalid/x"), as_user=None))
    assert run["status"] == "failed" and "WORKFLOWS_HTTP_ALLOW" in run["error"]


def _sql_playbook(query: str, params: str) -> str:
    return f"""
apiVersion: harmonic/v1
kind: Playbook
metadata: {{name: sql-demo, path: tests/sql}}
workload: {{topic: queues}}
workbook:
  - name: q
    type: sql
    spec:
      query: "{query}"
      params: {params}
workflow:
  - step: start
    next: [q]
  - step: q
    task: q
    next: [end]
  - step: end
"""


def test_sql_reads_with_bound_parameters_on_a_read_only_connection(
        app: Flask, studio, wf_settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from app.workflows.tools import _read_only_engine

    url = app.config["SQLALCHEMY_DATABASE_URI"]
    monkeypatch.setitem(app.config, "WORKFLOWS_SQL_URL", url)
    hostile = "x' OR '1'='1"
    run_id = _start(app, _sql_playbook("SELECT handle FROM users WHERE handle = :h OR handle = :e",
                                       f'{{h: alice, e: "{hostile}"}}'), as_user=None)
    run = drain(app, run_id)
    assert run["status"] == "succeeded", run["error"]
    with app.app_context():
        from app.workflows import queue

        _, done = queue.load_run(run_id)
    rows = next(d["result"] for d in done if d["step"] == "q")["rows"]
    assert rows == [{"handle": "alice"}]  # the hostile value was data, not SQL
    # Read-only is enforced by the database, not only by our statement check.
    with _read_only_engine(url).connect() as conn, pytest.raises(SQLAlchemyError):
        conn.execute(text("UPDATE users SET name = 'x'"))
    with app.app_context():
        from app.extensions import db
        from app.models import User

        assert db.session.query(User).filter(User.name == "x").count() == 0


def test_sql_statements_other_than_select_are_refused(app: Flask, wf_settings,
                                                      monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    db_file = tmp_path / "kb.db"
    with sqlite3.connect(db_file) as conn:
        conn.execute("CREATE TABLE kb (topic TEXT)")
    monkeypatch.setitem(app.config, "WORKFLOWS_SQL_URL", f"sqlite:///{db_file}")
    run = drain(app, _start(app, _sql_playbook("SELECT 1; DROP TABLE kb", "{}"), as_user=None))
    assert run["status"] == "failed" and "one SELECT statement" in run["error"]
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone() == (1,)


def _rpc_playbook(method: str) -> str:
    return f"""
apiVersion: harmonic/v1
kind: Playbook
metadata: {{name: rpc-demo, path: tests/rpc}}
workbook:
  - name: call
    type: rpc
    spec: {{method: {method}, params: {{count: 0}}}}
workflow:
  - step: start
    next: [call]
  - step: call
    task: call
    next: [end]
  - step: end
"""


def test_rpc_calls_the_embedded_design_model_server(app: Flask, wf_settings) -> None:
    run = drain(app, _start(app, _rpc_playbook("get_walls"), as_user=None))
    assert run["status"] == "succeeded", run["error"]
    with app.app_context():
        from app.workflows import queue

        _, done = queue.load_run(run["id"])
    walls = next(d["result"] for d in done if d["step"] == "call")
    assert walls["ok"] is True and "totalCount" in walls
    bad = drain(app, _start(app, _rpc_playbook("no_such_method"), as_user=None))
    assert bad["status"] == "failed" and "-32601" in bad["error"]

"""noetl.io/v2 playbooks that write PostgreSQL (a scratch schema of the test server per test)
and read DuckDB: rows saved by a loop's pipeline, SQL built by one step and run by the next,
a retry policy, and what a run is given going into SQL as data."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from flask import Flask

from tests.conftest import PG_ADMIN_URL
from tests.workflows.v2.conftest import of_type, run_to_end, steps_run, text

POSTS = [{"id": 1, "userId": 7, "title": "Ada's notes"},
         {"id": 2, "userId": 7, "title": "On engines"},
         {"id": 3, "userId": 9, "title": "Loops; and more"},
         {"id": 4, "userId": 9, "title": "Not kept"}]


class Scratch:
    """A schema of its own on the test PostgreSQL, named by the credential ``pg_local``."""

    def __init__(self, admin: Any, schema: str, dsn: str) -> None:
        self.admin, self.schema, self.dsn = admin, schema, dsn

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self.admin.cursor() as cursor:
            cursor.execute(f'SET search_path TO "{self.schema}"')
            cursor.execute(sql)
            return list(cursor.fetchall())


@pytest.fixture
def pg_local(v2: Flask, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scratch]:
    import psycopg

    schema = f"v2_{uuid.uuid4().hex[:10]}"
    url = PG_ADMIN_URL.replace("postgresql+psycopg://", "postgresql://")
    try:
        admin = psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL at {url}: {exc}")
    dsn = f"{url}?options={quote(f'-csearch_path={schema}')}"
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        monkeypatch.setitem(v2.config, "WORKFLOWS_SECRETS", "pg_local")
        monkeypatch.setenv("PG_LOCAL", dsn)
        try:
            yield Scratch(admin, schema, dsn)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


# A loop whose python → postgres pipeline saves rows --------------------------------------------

def test_a_loop_prices_and_saves_each_order(v2: Flask, pg_local: Scratch) -> None:
    run, events = run_to_end(v2, text("orders.yaml"))
    assert run["status"] == "succeeded", run["error"]
    saved = pg_local.rows("SELECT id, customer, total::float, run FROM orders_saved ORDER BY id")
    assert saved == [(1, "Ada", 8.0, str(run["id"])), (2, "Grace", 30.0, str(run["id"])),
                     (3, "Edsger", 0.0, str(run["id"]))]
    assert run["result"]["rows"] == [{"saved": 3, "total": 38.0}]
    calls = [(e["step"], e["data"]["task"]) for e in of_type(events, "call.done")]
    assert ("save_orders[1]", "price") in calls and ("save_orders[1]", "save") in calls
    # The credential's DSN is a secret: nothing recorded shows it.
    assert pg_local.dsn not in json.dumps([e["data"] for e in events], default=str)


def test_what_a_run_is_given_goes_into_sql_as_data(v2: Flask, pg_local: Scratch) -> None:
    sly = "O'Brien', 0, 'x'); DROP TABLE orders_saved; --"
    run, _events = run_to_end(v2, text("orders.yaml"), {"orders": [
        {"id": 5, "customer": sly, "lines": [{"price": 2, "qty": 2}]}]})
    assert run["status"] == "succeeded", run["error"]
    assert pg_local.rows("SELECT id, customer FROM orders_saved") == [(5, sly)]


def test_a_failing_item_fails_the_run_at_its_step(v2: Flask, pg_local: Scratch) -> None:
    orders = [{"id": 1, "customer": "Ada", "lines": [{"price": 1, "qty": 1}]},
              {"id": 2, "customer": "Bob", "lines": [{"price": 1, "qty": -1}]},
              {"id": 3, "customer": "Cy", "lines": [{"price": 1, "qty": 1}]}]
    run, events = run_to_end(v2, text("orders.yaml"), {"orders": orders})
    assert run["status"] == "failed"
    assert run["error"].startswith("step save_orders[1]: price: python: ValueError (line 3): "
                                   "order 2 has a negative quantity")
    # The first order was saved before; the third never ran, nor did the step after.
    assert pg_local.rows("SELECT id FROM orders_saved") == [(1,)]
    assert "save_orders[2]" not in steps_run(events) and "count" not in steps_run(events)
    error = of_type(events, "call.error")[-1]
    assert error["step"] == "save_orders[1]" and error["data"]["then"] == "fail"
    assert of_type(events, "execution_failed")


def test_the_credential_name_is_an_input_only_an_admin_may_give(
        v2: Flask, pg_local: Scratch, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.services.errors import Invalid
    from tests.workflows.v2.conftest import start

    make_agent("alice")
    with pytest.raises(Invalid) as refused:
        start(v2, text("orders.yaml"), {"pg_auth": "pg_other"}, as_user="alice")
    assert "only a workflow admin may set pg_auth" in refused.value.message
    # The command line is the operator's: it may.
    assert start(v2, text("orders.yaml"), {"pg_auth": "pg_local"}, as_user="alice",
                 operator=True)


# HTTP to PostgreSQL, the SQL built by an earlier step --------------------------------------

class Posts:
    """A local HTTP server answering GET /posts with JSON."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                owner.queries.append(urlsplit(self.path).query)
                body = json.dumps(POSTS).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/posts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def posts() -> Iterator[Posts]:
    server = Posts()
    yield server
    server.server.shutdown()


def test_posts_fetched_over_http_are_saved_by_sql_an_earlier_step_built(
        v2: Flask, pg_local: Scratch, posts: Posts, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(v2.config, "WORKFLOWS_HTTP_ALLOW", urlsplit(posts.url).netloc)
    run, events = run_to_end(v2, text("posts.yaml"), {"api_url": posts.url})
    assert run["status"] == "succeeded", run["error"]
    assert posts.queries == ["limit=3"]
    assert pg_local.rows("SELECT id, author, title FROM posts_saved ORDER BY id") == [
        (1, 7, "Ada's notes"), (2, 7, "On engines"), (3, 9, "Loops; and more")]
    assert run["result"]["rows"][0] == {"id": 1, "author": 7, "title": "Ada's notes"}
    fetched = next(e for e in of_type(events, "call.done") if e["step"] == "start")
    assert fetched["data"]["status"] == 200


def test_a_host_off_the_allow_list_fails_the_run_at_the_fetch(
        v2: Flask, pg_local: Scratch, posts: Posts) -> None:
    run, events = run_to_end(v2, text("posts.yaml"), {"api_url": posts.url})
    assert run["status"] == "failed"
    assert run["error"].startswith("step start: start: ")
    assert "is not allowed: this server's operator allows a host by adding it to " \
           "WORKFLOWS_HTTP_ALLOW" in run["error"]
    assert posts.queries == [] and steps_run(events) == []


# DuckDB with a retry policy ------------------------------------------------------------------

RETRYING = """
apiVersion: noetl.io/v2
kind: Playbook
metadata: {name: v2-duck, path: tests/v2/duck}
workload:
  folder: /nowhere
workflow:
  - step: start
    tool:
      kind: duckdb
      command: >-
        SELECT count(*) AS arrivals, max(city) AS last
        FROM read_csv('{{ folder }}/batch_{{ _attempt }}.csv')
      spec:
        policy:
          rules:
            - when: "{{ output.status == 'error' }}"
              then: {do: retry, attempts: ATTEMPTS, delay: 0.05, backoff: exponential}
            - else:
                then: {do: continue}
"""


@pytest.fixture
def duck_folder(v2: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setitem(v2.config, "WORKFLOWS_DUCKDB_DIR", str(tmp_path))
    (tmp_path / "batch_3.csv").write_text("city\nOslo\nLima\n", encoding="utf-8")
    return tmp_path


def test_duckdb_retries_by_its_policy_until_the_batch_is_there(v2: Flask,
                                                              duck_folder: Path) -> None:
    run, events = run_to_end(v2, RETRYING.replace("ATTEMPTS", "4"),
                             {"folder": str(duck_folder)})
    assert run["status"] == "succeeded", run["error"]
    assert run["result"]["rows"] == [{"arrivals": 2, "last": "Oslo"}]
    tries = [(e["type"], e["data"]["attempt"]) for e in events
             if e["type"] in ("call.done", "call.error")]
    assert tries == [("call.error", 1), ("call.error", 2), ("call.done", 3)]
    assert {e["data"]["then"] for e in of_type(events, "call.error")} == {"retry"}
    assert "batch_1.csv" in of_type(events, "call.error")[0]["data"]["error"]


def test_duckdb_gives_up_after_its_attempts(v2: Flask, duck_folder: Path) -> None:
    run, events = run_to_end(v2, RETRYING.replace("ATTEMPTS", "2"),
                             {"folder": str(duck_folder)})
    assert run["status"] == "failed"
    assert run["error"].startswith("step start: start: gave up after 2 attempts: duckdb: ")
    assert len(of_type(events, "call.error")) == 2 and not of_type(events, "call.done")


def test_duckdb_reads_no_file_outside_its_folder(v2: Flask, duck_folder: Path,
                                                 tmp_path_factory: pytest.TempPathFactory
                                                 ) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "batch_1.csv").write_text("city\nRome\n", encoding="utf-8")
    run, _events = run_to_end(v2, RETRYING.replace("ATTEMPTS", "1"), {"folder": str(outside)})
    assert run["status"] == "failed"
    assert "gave up after 1 attempts: duckdb: " in run["error"]

"""Production mode's contract with a load balancer: ``/healthz``, 503 while the database is
away, and ``bin/serve`` turning settings into the gunicorn command."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.conftest import make_app
from tests.load.harness import serve
from tests.mcp.conftest import ROOT, free_port


def test_healthz_is_ok_on_a_migrated_database(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"ok": True, "database": "ok", "migrations": "current"}
    assert response.headers["Cache-Control"] == "no-store"


def test_healthz_fails_while_migrations_are_not_applied(tmp_path: Path) -> None:
    app = make_app(f"sqlite:///{tmp_path / 'empty.db'}", tmp_path / "instance")
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == {"ok": False, "database": "ok",
                                    "migrations": "not applied"}


@pytest.fixture
def unreachable(tmp_path: Path) -> Flask:
    """An app whose PostgreSQL is not there: nothing listens on the port."""
    return make_app(f"postgresql://postgres@127.0.0.1:{free_port()}/gone", tmp_path / "inst")


def test_healthz_fails_when_the_database_is_unreachable(unreachable: Flask) -> None:
    response = unreachable.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == {"ok": False, "database": "unreachable",
                                   "migrations": "unknown"}
    assert "127.0.0.1" not in response.get_data(as_text=True)  # no details for strangers


@pytest.mark.parametrize(("accept", "mimetype"), [("application/json", "application/json"),
                                                   ("text/markdown", "text/markdown"),
                                                   ("text/html", "text/html")])
def test_requests_get_503_not_500_while_the_database_is_unreachable(
        unreachable: Flask, accept: str, mimetype: str) -> None:
    client = unreachable.test_client()
    # A token makes the app look it up: the first thing that needs the database.
    response = client.get("/studios", headers={"Authorization": "Bearer hmn_x",
                                               "Accept": accept})
    assert response.status_code == 503 and response.mimetype == mimetype
    assert response.headers["Retry-After"] == "2"
    body = response.get_data(as_text=True)
    assert "unavailable" in body and "Traceback" not in body and "psycopg" not in body
    posted = client.post("/studios/x/note/actions/create_note", json={"text": "hi"},
                         headers={"Authorization": "Bearer hmn_x", "Accept": accept})
    assert posted.status_code == 503


def _serve(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HARMONIC_")
             and k not in ("HOST", "PORT")}
    return subprocess.run([sys.executable, str(ROOT / "bin" / "serve"), *args],
                          env={**clean, **env}, capture_output=True, text=True, timeout=60)


def test_bin_serve_runs_threaded_gunicorn_on_loopback_by_default() -> None:
    done = _serve("--dry-run")
    assert done.returncode == 0, done.stderr
    command = shlex.split(done.stdout)
    # gthread, with GET /mcp streams on an event loop (app.mcp.stream_worker)
    for flag, value in (("--bind", "127.0.0.1:5000"),
                        ("--worker-class", "app.mcp.stream_worker.StreamWorker"),
                        ("--workers", "2"), ("--threads", "8"), ("--timeout", "60"),
                        ("--graceful-timeout", "30"), ("--keep-alive", "5")):
        assert command[command.index(flag) + 1] == value, flag
    assert command[-1] == "wsgi:app"
    assert done.stdout.count("\n") == 1  # one process: no stream endpoint of its own


def test_bin_serve_with_a_stream_port_runs_the_keepalive_worker_and_the_stream_endpoint() -> None:
    done = _serve("--dry-run", HARMONIC_STREAM_PORT="8124")
    assert done.returncode == 0, done.stderr
    gunicorn, streams = (shlex.split(line) for line in done.stdout.splitlines())
    worker = gunicorn[gunicorn.index("--worker-class") + 1]
    assert worker == "app.core.keepalive_worker.KeepAliveWorker"
    assert streams[streams.index("--port") + 1] == "8124"
    assert "app.entrypoints:stream_app" in streams


def test_bin_serve_takes_its_settings_from_the_environment() -> None:
    done = _serve("--dry-run", HOST="::1", PORT="8123", HARMONIC_WORKERS="3",
                  HARMONIC_THREADS="16", HARMONIC_TIMEOUT="90", HARMONIC_ACCESS_LOG="off")
    command = shlex.split(done.stdout)
    assert command[command.index("--bind") + 1] == "[::1]:8123"
    assert command[command.index("--workers") + 1] == "3"
    assert command[command.index("--threads") + 1] == "16"
    assert command[command.index("--timeout") + 1] == "90"
    assert "--access-logfile" not in command


def test_bin_serve_refuses_a_bad_setting_with_a_clear_message() -> None:
    done = _serve("--dry-run", HARMONIC_THREADS="many")
    assert done.returncode != 0
    assert "HARMONIC_THREADS must be a whole number of at least 1, not 'many'" in done.stderr
    assert "Traceback" not in done.stderr
    for name, value, why in (("HARMONIC_RUNNING", "two", "must be a whole number"),
                             ("HARMONIC_RUN_WAIT_MS", "-5", "must not be negative")):
        done = _serve("--dry-run", **{name: value})
        assert done.returncode != 0
        assert f"bin/serve: {name} {why}, not {value!r}" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_bin_serve_upgrade_migrates_then_serves_a_healthy_app(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARMONIC_")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'fresh.db'}", SECRET_KEY="test-secret",
               HARMONIC_INSTANCE=str(tmp_path / "instance"))
    # serve() waits until /healthz answers 200, which needs the migrations at their heads.
    with serve(env, tmp_path, upgrade=True) as server:
        assert httpx.get(server.url + "/healthz").json()["migrations"] == "current"
        log = server.access_log.read_text()
    assert "GET /healthz HTTP/1.1\" 200" in log and "pid=" in log

"""Workflow test helpers: the scripted gateway, settings per test, and a drain-the-queue loop."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from tests.workflows.gateway import ScriptedGateway

FAST = {"WORKFLOWS_LEASE_SECONDS": "5", "WORKFLOWS_RETRY_SECONDS": "0.05",
        "WORKFLOWS_POLL_SECONDS": "0.05", "WORKFLOWS_WORKER": "off"}


@pytest.fixture
def wf_settings(app: Flask, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Short leases and retries for this test; returns a dict tests may extend."""
    for key, value in FAST.items():
        monkeypatch.setitem(app.config, key, value)
    return FAST


@pytest.fixture
def gateway(app: Flask, monkeypatch: pytest.MonkeyPatch, wf_settings: dict[str, str]
            ) -> Iterator[ScriptedGateway]:
    server = ScriptedGateway()
    monkeypatch.setitem(app.config, "LLM_GATEWAY_URL", server.url)
    monkeypatch.setitem(app.config, "LLM_API_KEY", "sk-test-SECRET-9f8e7d")
    yield server
    server.close()


def drain(app: Flask, run_id: uuid.UUID, timeout: float = 30.0) -> dict[str, Any]:
    """Run an in-process worker until the run finishes; returns the run row."""
    from app.workflows import queue
    from app.workflows.worker import Worker

    worker = Worker(app, "test-worker")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        worker.run_once()
        with app.app_context():
            run = queue.get_run(run_id)
        assert run is not None
        if run["status"] in ("succeeded", "failed"):
            return run
        time.sleep(0.01)
    raise AssertionError(f"run {run_id} did not finish within {timeout}s")


def events_of(app: Flask, run_id: uuid.UUID) -> list[dict[str, Any]]:
    from app.workflows import queue

    with app.app_context():
        return queue.events_after(run_id)


def user_id(app: Flask, handle: str) -> uuid.UUID:
    from app.extensions import db
    from app.models import User

    with app.app_context():
        return db.session.query(User.id).filter(User.handle == handle).one()[0]

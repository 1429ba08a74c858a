"""Helpers for the noetl.io/v2 tests: our own playbooks in this folder, inline python on, a
run started and drained, its events by type."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.workflows.conftest import drain, events_of, user_id

HERE = Path(__file__).resolve().parent


@pytest.fixture
def v2(app: Flask, wf_settings: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Flask:
    """The app with short leases and inline python code turned on."""
    monkeypatch.setitem(app.config, "WORKFLOWS_PYTHON_INLINE", "on")
    return app


def text(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def start(app: Flask, document: str, inputs: dict[str, Any] | None = None,
          as_user: str | None = None, **options: Any) -> uuid.UUID:
    from app.workflows import runs

    with app.app_context():
        who = user_id(app, as_user) if as_user else None
        return runs.start(document, inputs or {}, who, **options)


def run_to_end(app: Flask, document: str, inputs: dict[str, Any] | None = None,
               as_user: str | None = None, **options: Any) -> tuple[dict[str, Any],
                                                                   list[dict[str, Any]]]:
    run_id = start(app, document, inputs, as_user, **options)
    return drain(app, run_id, timeout=120), events_of(app, run_id)


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def steps_run(events: list[dict[str, Any]]) -> list[str]:
    """The jobs that completed, in the order they did."""
    return [e["step"] for e in events if e["type"] == "step_completed"]

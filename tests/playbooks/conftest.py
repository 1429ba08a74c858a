"""Fixtures for playbook tests: the demo design model, token-less loopback mode, helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask import Flask


@pytest.fixture
def auth_off(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """PLAYBOOK_AUTH=off: loopback callers need no token (the seed's curl examples)."""
    monkeypatch.setitem(app.config, "PLAYBOOK_AUTH", "off")


@pytest.fixture
def data_dir(app: Flask) -> Path:
    return Path(app.config["HARMONIC_DATA_DIR"])


def rpc(agent: Any, method: str, params: dict[str, Any] | None = None,
        ident: int = 1) -> dict[str, Any]:
    response = agent.post("/rpc", json={"jsonrpc": "2.0", "id": ident, "method": method,
                                        "params": params or {}})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def capture_lines(folder: Path) -> list[dict[str, Any]]:
    """Every line of capture.jsonl parsed strictly: a torn line fails the test."""
    text = (folder / "capture.jsonl").read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "capture.jsonl ends with a torn line"
    return [json.loads(line) for line in text.splitlines()]


def run_async(scenario: Any) -> Any:
    """``asyncio.run(scenario())`` on a fresh thread: Playwright's sync API keeps an event loop
    running on the main thread once a browser test has run in this session."""
    import asyncio
    import threading

    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(scenario())
        except BaseException as exc:  # re-raised on the test's thread
            out["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]

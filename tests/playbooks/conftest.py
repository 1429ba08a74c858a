"""Fixtures for playbook tests: the demo design model, token-less loopback mode, helpers.

Every test here that uses the app runs once per capture store (``PLAYBOOK_CAPTURE_STORE``
``folder`` and ``database``); the helpers below read a capture from whichever is in use.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

STORES = ("folder", "database")
_current: dict[str, Any] = {"app": None, "store": "folder"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "app" in metafunc.fixturenames and "capture_store" in metafunc.fixturenames:
        metafunc.parametrize("capture_store", STORES, indirect=True)


@pytest.fixture(autouse=True)
def capture_store(request: pytest.FixtureRequest,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The capture store of this test: set in the app's config and in the environment (for
    the servers a test starts as processes)."""
    store = getattr(request, "param", "folder")
    if store != "folder":
        app = request.getfixturevalue("app")
        monkeypatch.setitem(app.config, "PLAYBOOK_CAPTURE_STORE", store)
        monkeypatch.setenv("PLAYBOOK_CAPTURE_STORE", store)
        _current["app"] = app
    _current["store"] = store
    yield store
    _current.update(app=None, store="folder")


def folder_store_only(store: str) -> None:
    """Skip a test of the folder's own matters (a torn tail left by a crash mid-write): a
    database row is written whole or not at all."""
    if store != "folder":
        pytest.skip("a folder-store matter: database rows are never torn")


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


def capture_text(folder: Path) -> str:
    """capture.jsonl of the session in ``folder``: the file, or the database store's export."""
    if _current["store"] == "database":
        from app.playbooks import capture

        with _current["app"].app_context():
            return capture.export(folder).decode("ascii")
    return (folder / "capture.jsonl").read_text(encoding="utf-8")


def capture_lines(folder: Path) -> list[dict[str, Any]]:
    """Every line of capture.jsonl parsed strictly: a torn line fails the test."""
    text = capture_text(folder)
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

    # A daemon thread, joined with a bound: a scenario that never ends fails the test and does
    # not keep the test process from exiting afterwards.
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(240)
    if thread.is_alive():
        raise TimeoutError("the MCP client scenario did not finish within 240 s")
    if "error" in out:
        raise out["error"]
    return out["value"]

"""The app asks once per function whether a view or hook is a coroutine (app.HarmonicFlask)."""

from __future__ import annotations

from typing import Any

import flask.app
from flask import Flask


def test_each_function_is_asked_once(app: Flask, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked: list[Any] = []
    real = flask.app.iscoroutinefunction

    def counting(func: Any) -> bool:
        asked.append(func)
        return real(func)

    monkeypatch.setattr(flask.app, "iscoroutinefunction", counting)

    def view() -> str:
        return "ok"

    assert app.ensure_sync(view) is view
    assert app.ensure_sync(view) is view
    assert asked == [view]


def test_requests_ask_nothing_once_warm(app: Flask, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    client = app.test_client()
    client.get("/healthz")  # every hook of a request seen once
    asked: list[Any] = []
    real = flask.app.iscoroutinefunction
    monkeypatch.setattr(flask.app, "iscoroutinefunction",
                        lambda func: asked.append(func) or real(func))
    assert client.get("/healthz").status_code == 200
    assert asked == []

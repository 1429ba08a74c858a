"""The two capture stores give the same capture.jsonl: the database store's export equals the
folder store's file byte for byte, through the MCP capture resource too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.playbooks import capture

ENTRIES: list[dict[str, Any]] = [
    {"t": 1, "method": "get_walls", "params": {"level": "1FL", "note": "é ✓ \u2028 \"q\""},
     "result": {"walls": [1, 2]}, "ms": 1.5},
    {"t": 2, "tool": "navigate", "params": {"path": "/studios/x"}, "error": {"message": "no"},
     "ms": 0.25},
    {"t": 3, "method": "x", "params": {"big": "z" * 70000}, "result": None, "ms": 3},
]


def test_the_database_export_is_the_folder_file_byte_for_byte(
        app: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_disk = tmp_path / "20260101_000000_same"
    on_disk.mkdir()
    in_rows = tmp_path / "rows" / on_disk.name  # the same session id, on another "host"
    in_rows.mkdir(parents=True)
    with app.app_context():
        monkeypatch.setitem(app.config, "PLAYBOOK_CAPTURE_STORE", "folder")
        for entry in ENTRIES:
            capture.append(on_disk, entry)
        written = (on_disk / capture.CAPTURE).read_bytes()
        assert capture.export(on_disk) == written
        monkeypatch.setitem(app.config, "PLAYBOOK_CAPTURE_STORE", "database")
        for entry in ENTRIES:
            capture.append(in_rows, entry)
        assert not (in_rows / capture.CAPTURE).exists()  # no file: rows only
        assert capture.export(in_rows) == written
        assert capture.read(in_rows) == ENTRIES
        assert capture.last_written(in_rows) is not None


def test_the_capture_resource_exports_the_stored_bytes(app: Flask, studio,  # type: ignore[no-untyped-def]
                                                       capture_store: str) -> None:
    from tests.mcp.conftest import Http
    from tests.mcp.test_http import _FlaskClient
    from tests.playbooks.conftest import capture_text, rpc

    started = studio.post("/teach/start?name=export").get_json()
    for i in range(2):
        assert "result" in rpc(studio, "get_walls", {"i": i, "text": "ünïcode"}, ident=i)
    assert studio.post("/teach/stop").get_json()["entries"] == 2
    http = Http("http://localhost", studio.token, _FlaskClient(studio.client))
    http.initialize()
    read = http.call("resources/read", {"uri": f"playbook://{started['id']}/capture"})
    text = read["result"]["contents"][0]["text"]
    assert text == capture_text(Path(started["dir"])) and text.count("\n") == 2
    assert (Path(started["dir"]) / capture.CAPTURE).exists() == (capture_store == "folder")

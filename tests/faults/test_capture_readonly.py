"""The capture folder becomes read-only while an agent teaches.

Documented behaviour (README, playbooks): nothing is lost. A call through the recording proxy
is refused with a JSON-RPC error (``CAPTURE_UNWRITABLE``) *before* it reaches the upstream, so
the model is untouched and the capture still tells the whole story; stopping answers 503 and
keeps the session teaching until the folder is fixed; starting into an unwritable data folder
answers 503 and records nothing. Over MCP, ``upstream_call`` is refused the same way, while
Harmonic's own tools still run (their lost capture line is logged; the MCP audit keeps the
call). Once writable again, everything carries on.

"Read-only" is made honestly for whoever runs the tests: as root (whom permission bits do not
stop) the folder and its capture get the immutable attribute (``chattr +i``); otherwise the
permission bits are removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.playbooks.conftest import capture_lines, rpc

BAR = {"barType": "D16", "coverTop": "25mm", "coverSide": "25mm"}


@contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    """Make ``paths`` unwritable for this process, whoever it runs as; restore afterwards."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in paths}
        for p in paths:
            p.chmod(0o500 if p.is_dir() else 0o400)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("as root only the immutable attribute stops writes, and chattr is missing")
    done: list[Path] = []
    try:
        for p in paths:
            result = subprocess.run([chattr, "+i", str(p)], capture_output=True, text=True)
            if result.returncode != 0:
                pytest.skip(f"this file system refuses the immutable attribute: {result.stderr}")
            done.append(p)
        yield
    finally:
        for p in reversed(done):
            subprocess.run([chattr, "-i", str(p)], check=True)


def _rebar_count(agent: Any) -> int:
    answer = rpc(agent, "get_elements_by_category_and_level", {"category": "OST_Rebar"})
    return int(answer["result"]["count"])


def _beam(agent: Any) -> int:
    beams = rpc(agent, "get_elements_by_category_and_level",
                {"category": "OST_StructuralFraming", "levelSelector": {"levelName": "2FL"}})
    return int(beams["result"]["items"][0]["elementId"])


def test_a_read_only_capture_refuses_the_call_and_loses_nothing(
        app: Flask, studio: Any, demo: None) -> None:
    agent = studio
    started = agent.post("/teach/start?name=read-only").get_json()
    folder = Path(started["dir"])
    beam = _beam(agent)  # recorded: line 1
    before = _rebar_count(agent)  # recorded: line 2
    create = {"host": {"elementId": beam}, "count": 3, "confirm": True, **BAR}

    with read_only(folder / "capture.jsonl", folder):
        refused = rpc(agent, "create_rebar_linear", create, ident=41)
        stop = agent.post("/teach/stop")
    assert refused["id"] == 41 and "result" not in refused
    assert refused["error"]["code"] == -32000
    assert refused["error"]["data"]["code"] == "CAPTURE_UNWRITABLE"
    assert refused["error"]["message"].startswith("Not forwarded: the capture folder "
                                                  f"{folder.name} cannot be written")
    assert stop.status_code == 503
    assert stop.get_json()["error"]["kind"] == "capture_unwritable"
    # The upstream never saw the refused write, and the capture holds only what happened.
    assert _rebar_count(agent) == before  # recorded: line 3
    assert [line["method"] for line in capture_lines(folder)] == [
        "get_elements_by_category_and_level"] * 3

    # Writable again: the same call goes through and is recorded; stopping works.
    made = rpc(agent, "create_rebar_linear", create)
    assert made["result"]["created"] == 3, made
    stopped = agent.post("/teach/stop").get_json()
    assert stopped["ok"] and stopped["entries"] == 4
    assert capture_lines(folder)[-1]["method"] == "create_rebar_linear"
    assert _rebar_count(agent) == before + 3


def test_teach_start_into_a_read_only_data_folder_answers_503(app: Flask, studio: Any) -> None:
    from app.extensions import db
    from app.models.playbooks import Playbook

    root = Path(app.config["HARMONIC_DATA_DIR"]) / "playbooks"
    root.mkdir(parents=True, exist_ok=True)
    with read_only(root):
        response = studio.post("/teach/start?name=nowhere")
    assert response.status_code == 503
    error = response.get_json()["error"]
    assert error["kind"] == "capture_unwritable" and "cannot be written" in error["message"]
    with app.app_context():
        assert db.session.query(Playbook).count() == 0  # nothing half-started
    # Not teaching, so calls are simply forwarded.
    assert rpc(studio, "get_elements_by_category_and_level", {"category": "OST_Rebar"})["result"]


def test_over_mcp_the_upstream_call_is_refused_and_harmonic_calls_still_run(
        app: Flask, studio: Any, demo: None, live_server: str) -> None:
    from tests.mcp.conftest import Http

    mcp = Http(live_server, studio.token)
    mcp.initialize()
    started = mcp.call("tools/call", {"name": "teach_start", "arguments": {
        "name": "mcp-read-only"}})["result"]["structuredContent"]
    folder = Path(started["dir"])
    with read_only(folder / "capture.jsonl", folder):
        refused = mcp.tool("upstream_call", method="get_elements_by_category_and_level",
                           params={"category": "OST_Rebar"})
        # A Harmonic tool still runs; its capture line cannot be written and is logged, and
        # the call stays in the agent-activity audit.
        page = mcp.tool("navigate", path="/studios/team")
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["data"]["code"] == "CAPTURE_UNWRITABLE"
    assert not page.get("isError") and page["structuredContent"]["path"] == "/studios/team"
    assert capture_lines(folder) == []
    activity = studio.get(f"/u/{studio.handle}/agent-activity").get_data(as_text=True)
    assert "| `navigate` |" in activity
    stopped = mcp.tool("teach_stop")["structuredContent"]
    assert stopped["ok"] and stopped["entries"] == 0

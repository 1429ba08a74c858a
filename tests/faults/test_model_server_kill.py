"""``bin/model-server`` killed (SIGKILL) in the middle of a replay.

The replay must stop at the step whose call found the server gone, say so (status ``failed``,
an error naming that step, the steps before it ``ok`` and none after it run), store the run as
failed, and never report success. With the server back, the same recipe replays in full.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.helpers import wait_until_healthy
from tests.load.harness import LONG
from tests.mcp.conftest import ROOT, free_port
from tests.playbooks.conftest import rpc

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults")]

READS = 120 if LONG else 60
CATEGORIES = ("OST_StructuralFraming", "OST_Walls", "OST_Rebar", "OST_Levels")


@contextmanager
def model_server(database_url: str, log: Path, instance: Path) -> Iterator[
        tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARMONIC_")}
    env.update(DATABASE_URL=database_url, SECRET_KEY="test-secret",
               HARMONIC_INSTANCE=str(instance), HARMONIC_DESIGN_MODEL_LOG=str(log))
    proc = subprocess.Popen([sys.executable, str(ROOT / "bin" / "model-server"), "--port",
                             str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(f"{base}/health", proc, "bin/model-server")
        yield base, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def _lines(log: Path) -> int:
    return log.read_bytes().count(b"\n") if log.exists() else 0


def _teach(agent: Any) -> str:
    started = agent.post("/teach/start?name=long-read").get_json()
    for i in range(READS):
        answer = rpc(agent, "get_elements_by_category_and_level",
                     {"category": CATEGORIES[i % len(CATEGORIES)]}, ident=i)
        assert "result" in answer, answer
    stopped = agent.post("/teach/stop").get_json()
    assert stopped["entries"] == READS
    made = agent.act(f"/playbooks/{started['id']}", "generate_recipe")
    assert made.status_code == 200, made.get_data(as_text=True)
    return str(started["sessionId"])


def test_replay_stops_at_the_step_that_found_the_server_killed(
        app: Flask, studio: Any, demo: None, database_url: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.extensions import db
    from app.models.playbooks import PlaybookRun

    log = tmp_path / "calls.jsonl"
    with model_server(database_url, log, tmp_path / "server") as (base, proc):
        monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", base)
        session = _teach(studio)
        # First run is always a dry run (governance); the teacher then replays for real.
        assert studio.post("/replay", json={"SessionId": session,
                                            "DryRun": True}).get_json()["ok"]
        outcome: dict[str, Any] = {}

        def replay() -> None:
            outcome["response"] = studio.post("/replay", json={"SessionId": session})

        before = _lines(log)
        thread = threading.Thread(target=replay)
        thread.start()
        while _lines(log) < before + 3:  # the replay is under way: three calls answered
            assert thread.is_alive(), "the replay ended before the server could be killed"
            time.sleep(0.002)
        # The whole server: its gunicorn master and workers, at once, without warning.
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        thread.join(120)
        answered = _lines(log) - before

    response = outcome["response"]
    assert response.status_code == 200
    report = response.get_json()
    assert report["ok"] is False and report["status"] == "failed", report["steps"]
    details = report["details"]
    failed = details[-1]
    assert [d["status"] for d in details[:-1]] == ["ok"] * (len(details) - 1)
    assert failed["status"] == "failed" and "unreachable" in failed["error"]
    assert report["error"].startswith(f"step {failed['name']}: ")
    assert len({d["name"] for d in details}) == len(details), "step names must be unique"
    # It stopped there. The server may have run the failed step's call and died before
    # answering (a read, so harmless), but no step after it was sent.
    succeeded = len(details) - 1
    assert succeeded <= answered <= succeeded + 1 and succeeded >= 2
    assert report["steps"] == {"total": READS, "succeeded": succeeded, "failed": 1,
                               "skipped": READS - succeeded - 1}
    with app.app_context():
        run = db.session.query(PlaybookRun).filter_by(short_id=report["runId"]).one()
        assert run.status == "failed" and run.error == report["error"]
        assert run.finished_at is not None
    page = studio.get(report["run"], accept="application/json")
    assert page.status_code == 200 and "failed" in page.get_data(as_text=True)

    # The server back (a new process): the same recording replays in full.
    with model_server(database_url, tmp_path / "again.jsonl", tmp_path / "server2") as (base2, _):
        monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", base2)
        again = studio.post("/replay", json={"SessionId": session}).get_json()
    assert again["ok"] is True and again["steps"]["succeeded"] == READS

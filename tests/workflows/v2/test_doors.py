"""noetl.io/v2 documents come in by the same doors as ours: catalog entries with their pages,
the run_workflow action, MCP run_workflow, ``flask workflows``; a step may call another
playbook of the catalog; a v2 document may hold our mcp section."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.workflows.conftest import drain, events_of
from tests.workflows.gateway import ScriptedGateway, answer
from tests.workflows.v2.conftest import HERE, of_type, run_to_end, start, steps_run, text

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def catalog(v2: Flask, monkeypatch: pytest.MonkeyPatch) -> Flask:
    """The catalog is this folder: our own v2 playbooks."""
    monkeypatch.setitem(v2.config, "WORKFLOWS_DIR", str(HERE.relative_to(ROOT)))
    return v2


def _run_id(app: Flask, short: str) -> Any:
    from app.workflows import runs

    with app.app_context():
        return runs.find(short)["id"]


def test_v2_playbooks_are_catalog_entries_with_their_pages(catalog: Flask,
                                                           make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    listing = bob.get("/workflows").get_data(as_text=True)
    for name in ("v2-greeting", "v2-thermostat", "v2-orders", "v2-team"):
        assert name in listing
    page = bob.get("/workflows/v2-thermostat").get_data(as_text=True)
    assert "Valid." in page and "name: run_workflow" in page
    assert "| `decide` | python | python `classify` |" in page, page  # the workbook's task
    html = bob.get("/workflows/v2-thermostat", accept="text/html").get_data(as_text=True)
    assert 'name="inputs[celsius]" value="30"' in html


def test_the_run_workflow_action_starts_a_v2_run(catalog: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = make_agent("alice")
    started = alice.act("/workflows/v2-greeting", "run_workflow",
                        inputs={"message": "Hello there, friend"})
    assert started.status_code == 201, started.get_data(as_text=True)
    run = drain(catalog, _run_id(catalog, started.get_json()["location"].rsplit("/", 1)[1]))
    assert run["status"] == "succeeded", run["error"]
    assert run["result"] == {"status": "done", "words": 3}
    page = alice.get(started.get_json()["location"]).get_data(as_text=True)
    assert "call.done" in page and "execution_completed" in page


def test_inline_code_is_refused_when_the_operator_has_not_turned_it_on(
        catalog: Flask, make_agent, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(catalog.config, "WORKFLOWS_PYTHON_INLINE", "off")
    refused = make_agent("alice").act("/workflows/v2-greeting", "run_workflow", inputs={})
    assert refused.status_code == 422
    message = refused.get_json()["error"]["message"]
    assert message.startswith("step start runs inline python code, which is off on this server")
    assert "WORKFLOWS_PYTHON_INLINE=on" in message


def test_mcp_run_workflow_runs_a_v2_playbook(catalog: Flask, studio, live_server: str) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.clients import http_client, run

    async def scenario() -> Any:
        async with http_client(live_server, studio.token) as client:
            return await client.call_tool("run_workflow", {"workflow": "v2-loops"})

    result = run(scenario)
    assert not result.is_error, result
    info = result.structured_content
    assert info["workflow"] == "v2-loops" and info["status"] == "queued"
    finished = drain(catalog, _run_id(catalog, info["run"]))
    assert finished["status"] == "succeeded", finished["error"]
    assert finished["result"]["sum"] == 28


def test_flask_workflows_validates_compiles_and_runs_a_v2_file(app: Flask, studio,  # type: ignore[no-untyped-def]
                                                                tmp_path: Path) -> None:
    runner = app.test_cli_runner()
    checked = runner.invoke(args=["workflows", "validate", str(HERE / "thermostat.yaml")])
    assert checked.exit_code == 0, checked.output
    compiled = runner.invoke(args=["workflows", "compile", str(HERE / "thermostat.yaml"),
                                   "--json"])
    assert '"joins": {' in compiled.output and '"report": [' in compiled.output
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKFLOWS_", "LLM_"))}
    env.update({"FLASK_APP": "wsgi.py", "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
                "HARMONIC_INSTANCE": str(tmp_path / "instance"), "SECRET_KEY": "test",
                "WORKFLOWS_POLL_SECONDS": "0.05", "WORKFLOWS_PYTHON_INLINE": "on"})
    done = subprocess.run(
        [sys.executable, "-m", "flask", "workflows", "run", str(HERE / "thermostat.yaml"),
         "--input", "celsius=10", "--as", "alice", "--follow", "--worker"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    kinds = [line.split()[2] for line in done.stdout.splitlines()[1:]]
    assert kinds[-1] == "execution_completed" and "next.evaluated" in kinds
    assert "heat_up" in done.stdout and "cool_down" not in done.stdout.replace(
        '"taken": ["cool_down"]', "")


# A step that runs another playbook ----------------------------------------------------------

def test_a_loop_scores_each_member_with_a_sub_run(catalog: Flask) -> None:
    run, events = run_to_end(catalog, text("team.yaml"))
    assert run["status"] == "succeeded", run["error"]
    assert run["result"] == {"lines": ["Ada: senior (70)", "Linus: junior (20)"]}
    started = of_type(events, "call.started")
    assert [e["data"]["workflow"] for e in started] == ["v2-score", "v2-score"]
    assert steps_run(events) == ["start", "start[0]", "start[0]#r1", "start[1]",
                                 "start[1]#r1", "start#done", "summary"]
    from app.workflows import runs

    with catalog.app_context():
        children = [r for r in runs.recent("v2-score") if r["parent_run_id"] == run["id"]]
    assert sorted(r["status"] for r in children) == ["succeeded", "succeeded"]
    assert {r["parent_step"] for r in children} == {"start[0]#r1", "start[1]#r1"}


def test_a_failing_sub_run_fails_its_caller_at_that_step(catalog: Flask) -> None:
    run, events = run_to_end(catalog, text("team.yaml"), {"members": [
        {"name": "Ada", "years": 3}, {"name": "Eve", "years": -1}]})
    assert run["status"] == "failed"
    assert run["error"].startswith("step start[1]#r1: scored: sub-run ")
    assert "of v2-score failed: step start: start: python: ValueError" in run["error"]
    assert "summary" not in steps_run(events)


# Our mcp section in a v2 document -----------------------------------------------------------

BRIEFING = """
apiVersion: noetl.io/v2
kind: Playbook
metadata: {name: v2-briefing, path: tests/v2/briefing}
workload:
  topic: rivers
mcp:
  models:
    - name: small
      params: {temperature: 0}
  turns:
    - name: brief
      model: small
      system: You write one-line briefings.
      user:
        - text: "Brief me on {{ input.topic }}; notes: {{ steps.start.notes }}"
workflow:
  - step: start
    tool:
      kind: noop
      input:
        notes: "long and wet"
    next:
      arcs:
        - step: ask
  - step: ask
    turn: brief
    next:
      arcs:
        - step: keep
          when: "{{ ask.answer | length > 0 }}"
  - step: keep
    tool:
      kind: noop
      input:
        briefing: "{{ ask.answer }}"
"""


def test_a_v2_document_may_run_a_turn_of_its_mcp_section(
        v2: Flask, gateway: ScriptedGateway) -> None:
    gateway.replies = [answer("Rivers: long and wet.")]
    run, events = run_to_end(v2, BRIEFING)
    assert run["status"] == "succeeded", run["error"]
    assert run["result"] == {"briefing": "Rivers: long and wet."}
    sent = gateway.requests[0]["messages"]
    assert sent[-1] == {"role": "user", "content": "Brief me on rivers; notes: long and wet"}
    assert steps_run(events) == ["start", "ask", "keep"]


def test_events_keep_noetl_names_for_what_our_log_adds(v2: Flask) -> None:
    run_id = start(v2, text("loops.yaml"))
    assert drain(v2, run_id)["status"] == "succeeded"
    kinds = {e["type"] for e in events_of(v2, run_id)}
    assert {"call.done", "loop.started", "loop.item", "loop.done",
            "next.evaluated"} <= kinds
    assert {"execution_started", "step_started", "step_completed",
            "execution_completed"} <= kinds

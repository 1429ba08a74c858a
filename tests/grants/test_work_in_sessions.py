"""Work started in a representation session and run later (a workflow run, started by the
run_workflow action or the MCP tool; an MCP task) runs for the principal within the grant, as
the call that started it would, and is recorded with both names; once the session has ended it
writes nothing, for the principal or for the representative alone."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from flask import Flask

from tests.grants.test_representation import GRANTS, _agent
from tests.mcp.clients import over
from tests.workflows.conftest import FAST, drain

HELPER_GRANTS = "/u/helper/settings/grants"
CHECK = "/workflows/studio-check"  # writes a welcome note in a studio without notes


@pytest.fixture
def queued(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs wait on the queue until the test works it."""
    for key, value in FAST.items():
        monkeypatch.setitem(app.config, key, value)


def _session(alice: Any, helper: Any, actions: str) -> None:
    """Alice grants the helper ``actions`` (the newest grant, which a session takes)."""
    assert alice.act(GRANTS, "grant_actions", studio="team", member="helper",
                     actions=actions, until="1d").status_code == 201
    started = helper.act(HELPER_GRANTS, "start_representation", principal="alice")
    assert started.status_code == 201, started.get_json()


def _run(app: Flask, location: str) -> dict[str, Any]:
    from app.workflows import runs

    with app.app_context():
        return runs.find(location.rsplit("/", 1)[1])


def _welcome_notes(app: Flask) -> list[tuple[str, uuid.UUID | None]]:
    """(author's handle, representative's id) of each note the workflow wrote."""
    from app.extensions import db
    from app.models import Note, User

    with app.app_context():
        return [(db.session.get(User, n.created_by_id).handle, n.representative_id)
                for n in db.session.query(Note).filter(Note.title == "Welcome")]


def _user_id(app: Flask, handle: str) -> uuid.UUID:
    from app.extensions import db
    from app.models import User

    with app.app_context():
        return db.session.query(User.id).filter(User.handle == handle).one()[0]


def test_a_run_started_in_a_session_acts_for_the_principal_within_the_grant(  # type: ignore[no-untyped-def]
        app: Flask, studio, queued) -> None:
    alice = studio
    helper = _agent(app, alice)
    # Granted to start a run, not to write notes: the run's note is refused with the terms.
    _session(alice, helper, "run_workflow")
    started = helper.act(CHECK, "run_workflow", inputs={"studio": "team"})
    assert started.status_code == 201, started.get_json()
    run = drain(app, _run(app, started.get_json()["location"])["id"])
    assert run["status"] == "failed", run
    assert "'create_note' is outside your grant" in (run["error"] or ""), run["error"]
    assert _welcome_notes(app) == []  # not Alice's without the grant, nor the helper's

    # Granted both: the note is Alice's, made by the helper for her (both names kept).
    assert helper.act(HELPER_GRANTS, "end_representation").status_code == 200
    _session(alice, helper, "run_workflow,create_note")
    started = helper.act(CHECK, "run_workflow", inputs={"studio": "team"})
    found = _run(app, started.get_json()["location"])
    assert found["representation_id"] is not None
    assert drain(app, found["id"])["status"] == "succeeded"
    assert _welcome_notes(app) == [("alice", _user_id(app, "helper"))]
    # The principal sees the run as hers.
    assert alice.get(started.get_json()["location"]).status_code == 200


def test_a_run_whose_session_ended_writes_nothing(app: Flask, studio, queued) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    helper = _agent(app, alice)
    _session(alice, helper, "run_workflow,create_note")
    started = helper.act(CHECK, "run_workflow", inputs={"studio": "team"})
    assert started.status_code == 201
    # Alice ends the session before the run's steps run.
    assert alice.act(GRANTS, "end_representation", representative="helper").status_code == 200
    run = drain(app, _run(app, started.get_json()["location"])["id"])
    assert run["status"] == "failed"
    assert "representation session that has ended" in (run["error"] or ""), run["error"]
    assert _welcome_notes(app) == []


def test_a_run_started_over_mcp_in_a_session(request: pytest.FixtureRequest, app: Flask,  # type: ignore[no-untyped-def]
                                             studio, queued) -> None:
    """The MCP run_workflow tool (official SDK), in a session: the run acts for Alice within
    the grant and the call log names both."""
    alice = studio
    helper = _agent(app, alice)
    _session(alice, helper, "run_workflow,create_note")

    async def start(client: Any) -> str:
        made = await client.call_tool("run_workflow", {"workflow": "studio-check",
                                                       "inputs": {"studio": "team"}})
        assert not made.is_error, made
        return str(made.structured_content["run"])

    short = over("http", "auto", "2026-07-28", request, app, helper.token, start)
    found = _run(app, f"/runs/{short}")
    assert found["representation_id"] is not None
    assert drain(app, found["id"])["status"] == "succeeded"
    assert _welcome_notes(app) == [("alice", _user_id(app, "helper"))]
    log = alice.get("/u/alice/agent-activity?agent=helper").get_data(as_text=True)
    assert any("`run_workflow`" in line and "| @helper | @alice |" in line
               for line in log.splitlines()), log


def test_an_mcp_task_started_in_a_session_carries_it(request: pytest.FixtureRequest,  # type: ignore[no-untyped-def]
                                                    app: Flask, studio, queued) -> None:
    """As a task (the tasks extension): the task and the run it is both carry the session,
    and the run acts for Alice within the grant."""
    from app.extensions import db
    from app.models.mcp_tasks import McpTask
    from tests.mcp.test_tasks import tasks_extension

    alice = studio
    helper = _agent(app, alice)
    _session(alice, helper, "run_workflow")  # not create_note: the run's note is refused

    async def start(client: Any) -> str:
        created = await client.session.call_tool("run_workflow", {
            "workflow": "studio-check", "inputs": {"studio": "team"}}, allow_claimed=True)
        return str(created.task_id)

    task_id = over("http", "auto", "2026-07-28", request, app, helper.token, start,
                   extensions=(tasks_extension([]),))
    with app.app_context():
        task = db.session.get(McpTask, task_id)
        assert task is not None and task.representation_id is not None
        run_id = task.run_id
    run = drain(app, run_id)
    assert run["representation_id"] is not None
    assert run["status"] == "failed" and "outside your grant" in (run["error"] or "")
    assert _welcome_notes(app) == []

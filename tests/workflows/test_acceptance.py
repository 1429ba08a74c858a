"""Seed 004's acceptance, end to end: resource + tool + turn through the queue, over HTTP."""

from __future__ import annotations

import json
import uuid

from flask import Flask

from tests.workflows.conftest import drain, events_of
from tests.workflows.gateway import ScriptedGateway, answer, tool_call


def _note_titles(app: Flask) -> list[str]:
    from app.extensions import db
    from app.models import Note

    with app.app_context():
        return [n.title for n in db.session.query(Note).all()]


def test_weekly_note_runs_enqueue_lease_execute_emit_complete(
        app: Flask, studio, gateway: ScriptedGateway) -> None:  # type: ignore[no-untyped-def]
    gateway.replies = [
        tool_call("create_note", {"title": "Week in review", "text": "- one\n- two\n- three"}),
        answer("Filed the note 'Week in review'."),
    ]
    alice = studio
    started = alice.act("/workflows/weekly-note", "run_workflow", inputs={"studio": "team"})
    assert started.status_code == 201, started.get_data(as_text=True)
    location = started.get_json()["location"]
    run_id = uuid.UUID(hex=_full_id(app, location.rsplit("/", 1)[1]))

    run = drain(app, run_id)
    assert run["status"] == "succeeded", run["error"]
    assert run["result"]["answer"] == "Filed the note 'Week in review'."
    assert _note_titles(app) == ["Week in review"]

    events = events_of(app, run_id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    flow = [(e["type"], e["step"]) for e in events]
    per_step = ["step_started", "action_started", "action_completed", "step_completed"]
    expected = [("execution_started", None)]
    for step in ("start", "resource.this_week", "mcp.summarize",
                 "mcp.summarize#1.create_note.0", "mcp.summarize#2", "end"):
        kinds = list(per_step)
        if step == "mcp.summarize#2":
            kinds.insert(3, "result_saved")
        expected += [(kind, step) for kind in kinds]
    expected.append(("execution_completed", None))
    assert flow == expected

    # The model saw the cycle page, the tool it may call, and then the tool's result.
    first, second = gateway.requests
    assert first["model"] == "gpt-4o-mini" and first["temperature"] == 0.2
    user_text = next(m["content"] for m in first["messages"] if m["role"] == "user")
    assert "Resource this_week" in user_text and "This week" in user_text
    assert [t["function"]["name"] for t in first["tools"]] == ["create_note"]
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_1"
    assert "Created note" in tool_message["content"]

    # The key went to the gateway and nowhere else.
    assert gateway.headers[0]["Authorization"] == "Bearer sk-test-SECRET-9f8e7d"
    assert "SECRET" not in json.dumps([e["data"] for e in events], default=str)
    page = alice.get(location, accept="text/html").get_data(as_text=True)
    assert "mcp.summarize#1.create_note.0" in page and "SECRET" not in page
    markdown = alice.get(location).get_data(as_text=True)
    assert "**succeeded**" in markdown and "| `resource.this_week` | done | 1 |" in markdown


def _full_id(app: Flask, short: str) -> str:
    from app.workflows import runs

    with app.app_context():
        return runs.find(short)["id"].hex

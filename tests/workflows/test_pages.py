"""The workflow pages, the run page, the run_workflow action and the MCP events resource."""

from __future__ import annotations

import json
import uuid

from flask import Flask

from tests.workflows.conftest import drain


def test_catalog_lists_the_examples_with_their_validation(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    text = bob.get("/workflows").get_data(as_text=True)
    for name in ("weekly-note", "studio-check", "two-turns"):
        assert f"[{name}](/workflows/{name})" in text
    assert "problem" not in text
    assert bob.client.get("/workflows").status_code in (302, 401)  # signed-in only


def test_workflow_page_shows_compiled_steps_and_offers_run(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    md = bob.get("/workflows/weekly-note").get_data(as_text=True)
    assert "name: run_workflow" in md and "Valid." in md
    assert "| `resource.this_week` (hidden) | resource | page `this_week` |" in md
    assert "| `mcp.summarize#n.create_note` (hidden) | tool | mcp `create_note` |" in md
    html = bob.get("/workflows/weekly-note", accept="text/html").get_data(as_text=True)
    assert 'data-step="mcp.summarize"' in html and 'data-action="run_workflow"' in html
    missing = bob.get("/workflows/nope")
    assert missing.status_code == 404
    schema = bob.client.get("/workflows/schema.json").get_json()
    # Ours, and NoETL's current DSL, chosen by apiVersion; metadata names it when present.
    assert schema["else"]["required"] == ["apiVersion", "kind"]
    assert schema["then"]["required"] == ["apiVersion", "kind", "workflow"]
    assert schema["if"]["properties"]["apiVersion"]["enum"] == ["noetl.io/v2", "noetl.io/v10"]


def test_run_workflow_rejects_unknown_inputs(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    response = bob.act("/workflows/studio-check", "run_workflow", inputs={"studoi": "x"})
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert "unknown input studoi (workload defines: studio, welcome)" in error["message"]


def test_a_run_is_visible_to_its_starter_only(app: Flask, studio, make_agent, wf_settings) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    started = alice.act("/workflows/studio-check", "run_workflow", inputs={"studio": "team"})
    assert started.status_code == 201
    path = started.get_json()["location"]
    with app.app_context():
        from app.workflows import runs

        run_id = runs.find(path.rsplit("/", 1)[1])["id"]
    assert drain(app, run_id)["status"] == "succeeded"
    md = alice.get(path).get_data(as_text=True)
    assert "| `welcome` | done | 1 |" in md  # the studio had no notes: the branch was taken
    assert "`end`" in md and "execution_completed" in md
    html = alice.get(path, accept="text/html").get_data(as_text=True)
    assert 'data-status="succeeded"' in html and 'data-type="step_completed"' in html
    assert make_agent("mallory").get(path).status_code == 403
    # Its side effect: the welcome note.
    assert "Welcome" in alice.get("/studios/team").get_data(as_text=True)


def test_mcp_resource_lists_events_and_notifies_on_change(app: Flask, studio, wf_settings) -> None:  # type: ignore[no-untyped-def]
    from app.core import changes
    from app.core.identity import Identity
    from app.mcp.context import SessionState
    from app.mcp.registry import REGISTRY
    from app.mcp.server import McpServer
    from app.workflows import runs
    from tests.workflows.conftest import user_id

    seen: list[str] = []
    changes.listen(seen.append)
    try:
        alice = user_id(app, "alice")
        with app.app_context():
            text = open("examples/workflows/studio-check.yaml").read()
            run_id = runs.start(text, {}, alice)
        uri = f"harmonic://runs/{run_id.hex[:8]}/events"
        drain(app, run_id)
        assert uri in seen  # every commit of events told the listeners
        server = McpServer(REGISTRY)
        session = SessionState("t")
        session.initialized = True

        class Quiet:
            def notify(self, message): ...  # type: ignore[no-untyped-def]

        with app.app_context():
            reply = server.handle({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                                   "params": {"uri": uri}}, session, Quiet(),
                                  Identity(user_id=alice, via="mcp"))
            other = server.handle({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                                   "params": {"uri": uri}}, session, Quiet(),
                                  Identity(user_id=uuid.uuid4(), via="mcp"))
        lines = [json.loads(line) for line in
                 reply["result"]["contents"][0]["text"].splitlines()]
        types = [e["type"] for e in lines]
        assert types[0] == "execution_started" and types[-1] == "execution_completed"
        assert "error" in other or other["result"].get("isError")
    finally:
        changes.unlisten(seen.append)


def test_embedded_default_runs_one_worker_thread_per_process(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """SQLite + WORKFLOWS_WORKER=on: the first request starts the thread, once; it runs jobs."""
    from flask_migrate import upgrade

    from app.extensions import db
    from app.models import User
    from app.services import accounts, studios
    from app.workflows import queue, runs
    from app.workflows.worker import ensure_thread
    from tests.conftest import make_app

    embedded = make_app(f"sqlite:///{tmp_path / 'e.db'}", tmp_path / "instance",
                        WORKFLOWS_WORKER="on", WORKFLOWS_POLL_SECONDS="0.05")
    with embedded.app_context():
        upgrade(revision="heads")
        user = accounts.create_user("erin", "Erin")
        studios.create_studio(user, handle="team", name="Team", join_policy="open",
                              heartbeats_required=False)
        db.session.commit()
        erin = db.session.query(User.id).filter(User.handle == "erin").one()[0]
    embedded.test_client().get("/healthz")
    worker = ensure_thread(embedded)
    try:
        assert worker is not None and ensure_thread(embedded) is worker
        import threading
        import time

        assert sum(t.name == "workflows-worker" for t in threading.enumerate()) >= 1
        with embedded.app_context():
            run_id = runs.start(open("examples/workflows/studio-check.yaml").read(), {}, erin)
        deadline = time.monotonic() + 30
        status = ""
        while time.monotonic() < deadline and status not in ("succeeded", "failed"):
            time.sleep(0.05)
            with embedded.app_context():
                status = queue.get_run(run_id)["status"]
        assert status == "succeeded"
    finally:
        worker.stop.set()
        worker.wake.set()
        with embedded.app_context():
            db.engine.dispose()

"""Playbook replays on the durable queue: ``queue_replay`` enqueues, a worker replays, the run
page shows it, and the model changes once."""

from __future__ import annotations

import uuid

from tests.playbooks.conftest import rpc
from tests.workflows.conftest import drain, events_of


def teach_wall_recipe(alice) -> str:  # type: ignore[no-untyped-def]
    short = alice.act("/playbooks", "start_teach", name="walls").get_json()["result"]["id"]
    rpc(alice, "update_wall_parameter", {"selector": {"category": "OST_Walls",
                                                      "typeName": "RC150", "levelName": "1FL"},
                                         "param": "Comments", "value": "Taught"})
    alice.act(f"/playbooks/{short}", "stop_teach")
    assert alice.act(f"/playbooks/{short}", "generate_recipe").status_code == 200
    return short


def comments_of_rc150(alice) -> set[str]:  # type: ignore[no-untyped-def]
    walls = rpc(alice, "get_walls", {"skip": 0, "count": 100, "typeName": "RC150"})
    ids = [w["elementId"] for w in walls["result"]["walls"]]
    return {rpc(alice, "get_element_info", {"elementId": i})["result"]["element"]["parameters"]
            ["Comments"]["value"] for i in ids}


def test_queued_replay_runs_on_a_worker(app, studio, demo, wf_settings) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    short = teach_wall_recipe(alice)
    # Governance first: no dry run of these arguments yet, so the queue refuses at once.
    early = alice.act(f"/playbooks/{short}", "queue_replay", args={"param_value": "Queued"})
    assert early.status_code == 409 and early.get_json()["error"]["rule"] == "dry_run_first"
    with app.app_context():  # the refusal is audited, though the request itself was refused
        from sqlalchemy import select

        from app.extensions import db
        from app.models.playbooks import PlaybookAudit

        refused = [row.detail for row in db.session.scalars(select(PlaybookAudit))
                   if row.event == "replay" and row.detail.get("door") == "queue"]
        assert refused and refused[-1]["rule"] == "dry_run_first", refused
    assert alice.act(f"/playbooks/{short}", "dry_run",
                     args={"param_value": "Queued"}).status_code == 201
    queued = alice.act(f"/playbooks/{short}", "queue_replay", args={"param_value": "Queued"})
    assert queued.status_code == 201, queued.get_data(as_text=True)
    location = queued.get_json()["location"]
    assert location.startswith("/runs/")
    run = drain(app, uuid.UUID(location.removeprefix("/runs/")))
    assert run["status"] == "succeeded", run
    kinds = [e["type"] for e in events_of(app, run["id"])]
    assert kinds[0] == "execution_started" and kinds[-1] == "execution_completed"
    assert "Queued" in comments_of_rc150(alice)
    page = alice.get(location).get_data(as_text=True)
    assert "replay walls" in page


def test_queued_replay_that_fails_fails_the_run_once(app, studio, demo, wf_settings) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    short = teach_wall_recipe(alice)
    assert alice.act(f"/playbooks/{short}", "dry_run",
                     args={"param_value": "Never"}).get_json()["result"]["ok"]
    # The model drifts after the dry run: three more RC150 walls on 1FL make five, over the
    # recipe's maxUpdated 4, so the worker's preview stops the replay before it writes.
    for y in (20000, 21000, 22000):
        rpc(alice, "create_wall", {"start": {"x": 0, "y": y, "z": 0},
                                   "end": {"x": 3000, "y": y, "z": 0}, "wallTypeName": "RC150",
                                   "levelName": "1FL", "heightMm": 3000, "confirm": True})
    queued = alice.act(f"/playbooks/{short}", "queue_replay", args={"param_value": "Never"})
    run = drain(app, uuid.UUID(queued.get_json()["location"].removeprefix("/runs/")))
    assert run["status"] == "failed"
    errors = [e for e in events_of(app, run["id"]) if e["type"] == "action_error"]
    assert len(errors) == 1  # never retried: a half-done replay must not write twice
    assert "Never" not in comments_of_rc150(alice)

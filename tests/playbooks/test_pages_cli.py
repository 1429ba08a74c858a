"""Pages /playbooks, /playbooks/<id> and runs in HTML and Markdown, their actions through the
registry, and ``flask playbooks replay`` with its progress bar."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import action_names, parse_md
from tests.playbooks.conftest import rpc


def test_pages_and_actions(app, studio, demo, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    index = alice.get("/playbooks")
    assert index.status_code == 200
    assert action_names(index.get_data(as_text=True)) == ["start_teach"]

    started = alice.act("/playbooks", "start_teach", name="walls")
    assert started.status_code == 201
    short = started.get_json()["result"]["id"]
    assert started.headers["Location"].endswith(f"/playbooks/{short}")
    assert "stop_teach" in action_names(alice.get("/playbooks").get_data(as_text=True))
    page = alice.get(f"/playbooks/{short}").get_data(as_text=True)
    assert action_names(page) == ["stop_teach", "generate_recipe", "update_recipe",
                                  "share_playbook"]

    rpc(alice, "update_wall_parameter", {"selector": {"category": "OST_Walls",
                                                      "typeName": "RC150", "levelName": "1FL"},
                                         "param": "Comments", "value": "Taught"})
    assert alice.act(f"/playbooks/{short}", "stop_teach").status_code == 200
    generated = alice.act(f"/playbooks/{short}", "generate_recipe").get_json()
    step = generated["result"]["recipe"]["steps"][0]
    assert step["params"]["selector"] == {"category": "OST_Walls",
                                          "typeName": "{{target_wall_type}}",
                                          "levelName": "{{level_name}}"}
    assert step["expect"] == {"minUpdated": 1, "maxUpdated": 4}

    front, body = parse_md(alice.get(f"/playbooks/{short}").get_data(as_text=True))
    assert [a["name"] for a in front["actions"]] == ["generate_recipe", "update_recipe",
                                                     "dry_run", "replay", "share_playbook",
                                                     "retire_recipe", "queue_replay"]
    assert "`update_wall_parameter` — ok" in body and '"name": "walls"' in body
    assert "| `param_value` | `\"Taught\"` | string |  |" in body

    dry = alice.act(f"/playbooks/{short}", "dry_run", args={"param_value": "Preview"})
    assert dry.status_code == 201 and dry.get_json()["result"]["status"] == "ok"
    # The teacher replays their own session, but only with arguments they dry-ran.
    unpreviewed = alice.act(f"/playbooks/{short}", "replay", args={"param_value": "Replayed"})
    assert unpreviewed.status_code == 409
    assert unpreviewed.get_json()["error"]["rule"] == "dry_run_first"
    assert alice.act(f"/playbooks/{short}", "dry_run",
                     args={"param_value": "Replayed"}).status_code == 201
    done = alice.act(f"/playbooks/{short}", "replay", args={"param_value": "Replayed"})
    run_path = done.get_json()["location"]
    assert done.get_json()["result"]["ok"] and run_path.startswith(f"/playbooks/{short}/runs/")
    html = alice.get(run_path, accept="text/html").get_data(as_text=True)
    assert "<h1>Run " in html and "update_wall_parameter" in html
    listing = alice.get(f"/playbooks/{short}", accept="text/html").get_data(as_text=True)
    assert "<h1>Playbook: walls</h1>" in listing and run_path in listing

    bad = alice.act(f"/playbooks/{short}", "update_recipe", recipe='{"name": "x", "steps": []}')
    assert bad.status_code == 422
    assert bad.get_json()["error"]["errors"][0]["param"] == "steps"

    bob = make_agent("bob")
    assert bob.get(f"/playbooks/{short}").status_code == 404
    assert bob.get(run_path).status_code == 404
    assert alice.get("/playbooks/ffffffff").status_code == 404
    assert alice.act(f"/playbooks/{short}", "launch_rockets").status_code == 404


def test_cli_replay(app, studio, demo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    alice = studio
    started = alice.post("/teach/start?name=cli-rebar").get_json()
    rpc(alice, "create_rebar_linear", {"host": {"elementId": 4003}, "barType": "D13",
                                       "count": 4, "confirm": True})
    alice.post("/teach/stop")
    recipe = alice.act(f"/playbooks/{started['id']}",
                       "generate_recipe").get_json()["result"]["recipe"]
    runner = app.test_cli_runner()
    refused = runner.invoke(args=["playbooks", "replay", started["sessionId"], "--dry-run"])
    assert refused.exit_code == 1 and "bar_count" in refused.output
    dry = runner.invoke(args=["playbooks", "replay", started["sessionId"], "--dry-run",
                              "--arg", "bar_count=3"])
    assert dry.exit_code == 0, dry.output
    assert 'planned  create_rebar_linear  planned {"created": 3, "candidates": 3}' in dry.output
    assert "cli-rebar@1.0.0" in dry.output  # the progress bar's label
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps(recipe))
    draft = runner.invoke(args=["playbooks", "replay", str(path), "--arg", "bar_count=2"])
    assert draft.exit_code == 1 and "refused by rule approval" in draft.output
    # A file in the data folder's reviewed/ counts as approved: dry run, then for real.
    reviewed = Path(app.config["HARMONIC_DATA_DIR"]) / "playbooks" / "reviewed"
    reviewed.mkdir(parents=True, exist_ok=True)
    path = reviewed / "cli-rebar.json"
    path.write_text(json.dumps(recipe))
    first = runner.invoke(args=["playbooks", "replay", str(path), "--arg", "bar_count=2"])
    assert first.exit_code == 1 and "refused by rule dry_run_first" in first.output
    assert runner.invoke(args=["playbooks", "replay", str(path), "--arg", "bar_count=2",
                               "--dry-run"]).exit_code == 0
    real = runner.invoke(args=["playbooks", "replay", str(path), "--arg", "bar_count=2",
                               "--json"])
    assert real.exit_code == 0, real.output
    report = json.loads(real.output[real.output.index("{"):])
    assert report["details"][0]["response"]["result"]["created"] == 2


def test_person_starts_teaching_in_the_browser_and_the_agent_is_captured(
        app, client, make_agent) -> None:  # type: ignore[no-untyped-def]
    import re
    from pathlib import Path

    from app.models import User
    from tests.playbooks.conftest import capture_lines

    agent = make_agent("dana", password="a long enough password")
    with app.app_context():
        user_id = str(User.query.filter_by(handle="dana").one().id)
    with client.session_transaction() as session:
        session["_user_id"] = user_id
        session["_fresh"] = True
    html = client.get("/playbooks").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    started = client.post("/playbooks/actions/start_teach",
                          data={"csrf_token": token, "name": "from-the-browser"})
    assert started.status_code == 303
    short = started.headers["Location"].rsplit("/", 1)[-1]
    rpc(agent, "get_walls", {"level": "2FL"})  # the person's agent, with its own token
    page = client.get(f"/playbooks/{short}").get_data(as_text=True)
    assert "get_walls" in page
    stopped = client.post(f"/playbooks/{short}/actions/stop_teach",
                          data={"csrf_token": token})
    assert stopped.status_code == 303
    folder = Path(app.config["HARMONIC_DATA_DIR"]) / "playbooks"
    # The newest such session (the data folder outlives a test: the other capture store's run
    # of this test may have left one from the same second, named without the -2).
    session_dir = sorted(folder.glob("*_from-the-browser*"))[-1]
    assert [x["params"] for x in capture_lines(session_dir)] == [{"level": "2FL"}]

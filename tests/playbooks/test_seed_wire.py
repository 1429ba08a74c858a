"""Seed 000's wire surface, driven by real curl processes and the seed's own Python replayer.

The seed's examples carry no token: they work on a loopback-only server with
PLAYBOOK_AUTH=off (and are refused otherwise). The wall-renaming recipe is the seed's, byte for
byte; as the seed's runbook (§3.4, §6.6) says, its mutating step needs ``"confirm": true``
before it executes — the dry run works on the recipe as printed, execution without it is
refused with a message naming the step.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from tests.playbooks.conftest import capture_lines

SEED_RECIPE = """{
  "name": "rename-walls-on-level",
  "vars": {
    "target_wall_type": "RC150",
    "level_name": "1FL",
    "param_name": "Comments",
    "param_value": "Model B"
  },
  "steps": [
    {"method":"get_walls","params":{"level":"{{level_name}}"}},
    {"method":"update_wall_parameter",
     "params":{"selector":{"category":"OST_Walls","typeName":"{{target_wall_type}}","level":"{{level_name}}"},
               "param":"{{param_name}}","value":"{{param_value}}"},
     "expect":{"minUpdated":1,"maxUpdated":500}}
  ]
}
"""

SEED_REPLAYER = '''# replay.py
import json, sys, requests
BASE = "http://127.0.0.1:5209"
recipe_path = sys.argv[1]
payload = {"RecipePath": recipe_path, "DryRun": False, "Args": {}}
r = requests.post(f"{BASE}/replay", json=payload, timeout=120)
print(r.json())
'''


def curl(*args: str) -> dict[str, Any]:
    done = subprocess.run(["curl", "-sS", "--max-time", "60", *args], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def comments(base: str, wall_type: str, level: str) -> set[str]:
    walls = curl("-X", "POST", f"{base}/rpc", "-H", "Content-Type: application/json", "-d",
                 json.dumps({"jsonrpc": "2.0", "id": 9, "method": "get_walls",
                             "params": {"level": level, "typeName": wall_type}}))
    ids = [w["elementId"] for w in walls["result"]["walls"]]
    info = curl("-X", "POST", f"{base}/rpc", "-H", "Content-Type: application/json", "-d",
                json.dumps({"jsonrpc": "2.0", "id": 10, "method": "get_element_info",
                            "params": {"elementIds": ids}}))
    return {item["parameters"]["Comments"]["value"] for item in info["result"]["items"]}


def test_seed_curl_examples(app, demo, auth_off, live_server, data_dir) -> None:  # type: ignore[no-untyped-def]
    base = live_server
    # §6.3 Teach.
    started = curl("-X", "POST", f"{base}/teach/start?name=walls-rename-1FL")
    assert started["ok"] is True and Path(started["dir"]).is_dir()
    assert Path(started["dir"]).parent == data_dir / "playbooks"
    for ident, (method, params) in enumerate([
            ("get_walls", {"level": "1FL"}),
            ("update_wall_parameter", {"selector": {"category": "OST_Walls", "typeName": "RC150",
                                                    "level": "1FL"},
                                       "param": "Comments", "value": "Model A"})]):
        answer = curl("-X", "POST", f"{base}/rpc", "-H", "Content-Type: application/json",
                      "-d", json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                        "params": params}))
        assert "result" in answer, answer
    stopped = curl("-X", "POST", f"{base}/teach/stop")
    assert stopped == {**stopped, "ok": True, "entries": 2}
    folder = Path(started["dir"])
    lines = capture_lines(folder)
    assert [line["method"] for line in lines] == ["get_walls", "update_wall_parameter"]
    assert lines[1]["result"]["updated"] == 2 and all("t" in x and "ms" in x for x in lines)
    assert (folder / "playbook.md").read_text().startswith("# Playbook: walls-rename-1FL")
    assert "entries: 2" in (folder / "summary.yaml").read_text()
    # §6.9 The playbook server's version and the upstream's (its ping_server answer).
    versions = yaml.safe_load((folder / "summary.yaml").read_text())["versions"]
    assert versions["harmonic"] and versions["upstream"].startswith("harmonic-design-model ")

    # §6.4 Save the seed's recipe in the session folder.
    recipe = folder / "recipe.json"
    recipe.write_text(SEED_RECIPE)

    # §6.5 Dry run: the upstream previews, nothing changes.
    dry = curl("-X", "POST", f"{base}/replay", "-H", "Content-Type: application/json", "-d",
               json.dumps({"RecipePath": str(recipe), "DryRun": True,
                           "Args": {"target_wall_type": "RC150", "level_name": "1FL"}}))
    assert dry["ok"] is True and dry["steps"]["total"] == 2 and dry["steps"]["failed"] == 0
    update = dry["details"][1]
    assert update["planned"] == {"updated": 2}
    assert update["targets"][0]["count"] == 2  # the selector resolved to its two walls
    assert comments(base, "RC150", "1FL") == {"Model A"}

    # §6.6 Execute: the seed's recipe has no confirm on its mutating step → refused.
    refused = curl("-X", "POST", f"{base}/replay", "-H", "Content-Type: application/json",
                   "-d", json.dumps({"RecipePath": str(recipe), "DryRun": False,
                                     "Args": {"target_wall_type": "RC150", "level_name": "1FL",
                                              "param_value": "Model C"}}))
    assert refused["ok"] is False and refused["unconfirmed"] == ["update_wall_parameter"]
    assert comments(base, "RC150", "1FL") == {"Model A"}
    confirmed = json.loads(SEED_RECIPE)
    confirmed["steps"][1]["params"]["confirm"] = True
    recipe.write_text(json.dumps(confirmed))
    # §6.7 First run is always a dry run: these arguments were never previewed.
    args = {"target_wall_type": "RC150", "level_name": "1FL", "param_value": "Model C"}
    first = curl("-X", "POST", f"{base}/replay", "-H", "Content-Type: application/json", "-d",
                 json.dumps({"RecipePath": str(recipe), "DryRun": False, "Args": args}))
    assert first["ok"] is False and first["rule"] == "dry_run_first"
    assert "DryRun: true" in first["next"]
    assert comments(base, "RC150", "1FL") == {"Model A"}
    assert curl("-X", "POST", f"{base}/replay", "-H", "Content-Type: application/json", "-d",
                json.dumps({"RecipePath": str(recipe), "DryRun": True, "Args": args}))["ok"]
    done = curl("-X", "POST", f"{base}/replay", "-H", "Content-Type: application/json", "-d",
                json.dumps({"RecipePath": str(recipe), "DryRun": False, "Args": args}))
    assert done["ok"] is True and done["steps"] == {"total": 2, "succeeded": 2, "failed": 0,
                                                    "skipped": 0}
    assert comments(base, "RC150", "1FL") == {"Model C"}

    # §8 Quick start: SessionId by the session's name, dry run then execute with args (the
    # teacher's own session replays before approval, after a dry run with the same args).
    quick = curl("-X", "POST", f"{base}/replay", "-H", "Content-Type: application/json", "-d",
                 json.dumps({"SessionId": "walls-rename-1FL", "DryRun": True,
                             "Args": {"target_wall_type": "RC150", "param_value": "Model D"}}))
    assert quick["ok"] is True
    quick = curl("-X", "POST", f"{base}/replay", "-H", "Content-Type: application/json", "-d",
                 json.dumps({"SessionId": "walls-rename-1FL", "DryRun": False,
                             "Args": {"target_wall_type": "RC150", "param_value": "Model D"}}))
    assert quick["ok"] is True
    assert comments(base, "RC150", "1FL") == {"Model D"}


def test_seed_examples_need_a_token_when_auth_is_on(app, live_server) -> None:  # type: ignore[no-untyped-def]
    for path in ("/teach/start?name=x", "/teach/stop", "/rpc", "/replay"):
        done = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X",
                               "POST", f"{live_server}{path}"], capture_output=True, text=True)
        assert done.stdout == "401", path


@contextmanager
def serve_on_seed_port(app: Any) -> Iterator[bool]:
    """Serve ``app`` on the seed's port 5209 too, if it is free (yields whether it is)."""
    from werkzeug.serving import make_server

    try:
        server = make_server("127.0.0.1", 5209, app, threaded=True)
    except (OSError, SystemExit):  # werkzeug exits (SystemExit) when the port is taken
        server = None
    if server is None:  # taken, e.g. by this test's other capture store on another worker
        yield False
        return
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield True
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_seed_python_replayer(app, demo, auth_off, live_server, data_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "replay.py"
    confirmed = json.loads(SEED_RECIPE)
    confirmed["steps"][1]["params"]["confirm"] = True
    # §6.9 A recipe outside the reviewed folder is a draft; one in it counts as approved.
    draft = data_dir / "playbooks" / "hand-made-recipes" / "recipe.json"
    approved = data_dir / "playbooks" / "reviewed" / "rename-walls.json"
    for path in (draft, approved):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(confirmed))
    # §6.7 First run is always a dry run (the replayer itself always executes).
    dry = curl("-X", "POST", f"{live_server}/replay", "-d",
               json.dumps({"RecipePath": str(approved), "DryRun": True}))
    assert dry["ok"] is True, dry
    with serve_on_seed_port(app) as on_seed_port:
        if on_seed_port:
            script.write_text(SEED_REPLAYER)  # byte for byte: BASE is the seed's port 5209
        else:  # 5209 is taken here: only the line naming the port points elsewhere
            script.write_text(SEED_REPLAYER.replace("http://127.0.0.1:5209", live_server))
        refused = subprocess.run([sys.executable, str(script), str(draft)],
                                 capture_output=True, text=True, timeout=120)
        done = subprocess.run([sys.executable, str(script), str(approved)],
                              capture_output=True, text=True, timeout=120)
    assert refused.returncode == 0, refused.stderr
    assert "'rule': 'approval'" in refused.stdout and "reviewed/" in refused.stdout
    assert "'details': []" in refused.stdout  # refused before any call
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    assert printed.startswith("{'ok': True,") and "'succeeded': 2" in printed
    assert comments(live_server, "RC150", "1FL") == {"Model B"}  # the recipe's default

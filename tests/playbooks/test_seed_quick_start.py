"""Seed 000 §8, the quick start, on a local install: its curl lines run as the seed prints them.

Steps 1 and 2 are ours: the design-model server stands in for RevitMcpServer
(``bin/model-server --upgrade --load-demo``) and ``bin/dev`` is the playbook server, forwarding
to it (``PLAYBOOK_UPSTREAM``) with ``PLAYBOOK_AUTH=off`` on loopback, as the seed's proxy has no
tokens. Both run as real processes on free ports; the only thing changed in the curl lines is
``127.0.0.1:5209``, which becomes bin/dev's port. The seed's lines are written for Windows'
``cmd`` (``^`` continues a line, and the JSON's inner quotes are not escaped for any shell): the
commands below are the seed's own, taken as the JSON they spell and handed to curl argument by
argument, so curl sends exactly the method, URL, header and body printed in §8.

"# ... operate via agent ..." is an agent's JSON-RPC calls through ``/rpc``: it reads the
catalog, lists the walls of 1FL and sets Comments on the RC150 walls there. ``teach/stop`` makes
that capture a draft recipe; the model is then edited by hand (straight at the model server),
§8's dry run plans the change back and says a real run would be allowed, the operator approves
the recipe the seed's way (§6.9: a copy in the ``reviewed/`` folder), and §8's execution
writes it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import wait_until_healthy
from tests.mcp.conftest import ROOT, free_port

pytestmark = pytest.mark.slow

# Seed 000 §8, as printed.
QUICK_START = r'''# 1) Start RevitMcpServer (assumed at port 5210)

# 2) Start Playbook Server
McpPlaybookServer.exe --forward http://127.0.0.1:5210 --port 5209

# 3) Teach (capture)
curl -X POST "http://127.0.0.1:5209/teach/start?name=my-first-session"
# ... operate via agent ...
curl -X POST "http://127.0.0.1:5209/teach/stop"

# 4) Dry-run a recipe
curl -X POST "http://127.0.0.1:5209/replay" -H "Content-Type: application/json" ^
  -d "{"SessionId":"my-first-session","DryRun":true}"

# 5) Execute with args
curl -X POST "http://127.0.0.1:5209/replay" -H "Content-Type: application/json" ^
  -d "{"SessionId":"my-first-session","DryRun":false,
       "Args":{"target_wall_type":"RC150","param_value":"Model D"}}"
'''
SEED_BASE = "http://127.0.0.1:5209"
COMMAND = re.compile(r'^curl -X (?P<method>[A-Z]+) "(?P<url>[^"]+)"'
                     r'(?: -H "(?P<header>[^"]+)")?(?: \^\n\s*-d "(?P<data>.*)")?$', re.S)


def seed_commands(base: str) -> dict[str, list[str]]:
    """§8's curl commands by step number, as argument lists, with the seed's port made ours."""
    commands: dict[str, list[str]] = {}
    step = ""
    for block in re.split(r"\n(?=curl |# )", QUICK_START):
        heading = re.match(r"# (\d)\)", block)
        step = heading.group(1) if heading else step
        if not block.startswith("curl "):
            continue
        match = COMMAND.match(block.strip())
        assert match, block
        argv = ["curl", "-X", match["method"], match["url"].replace(SEED_BASE, base)]
        if match["header"]:
            argv += ["-H", match["header"]]
        if match["data"] is not None:
            json.loads(match["data"])  # the body is the JSON the seed spells
            argv += ["-d", match["data"]]
        key = step if step not in commands else f"{step}b"
        commands[key] = argv
    return commands


def run(argv: list[str]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HARMONIC_", "PLAYBOOK_", "DATABASE_URL", "FLASK_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HARMONIC_INSTANCE=str(home), DATABASE_URL=f"sqlite:///{home / 'harmonic.db'}",
               SECRET_KEY="quick-start", PYTHONUNBUFFERED="1", **extra)
    return env


@contextmanager
def process(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[str]]:
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


def call(url: str, method: str, params: dict[str, Any], ident: int = 1) -> dict[str, Any]:
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": ident, "method": method,
                                   "params": params}, timeout=30).json()
    assert "result" in answer, answer
    result = answer["result"]
    assert isinstance(result, dict)
    return result


def comments(model: str) -> dict[int, str]:
    """Comments of 1FL's RC150 walls, read straight from the model server."""
    walls = call(model, "get_walls", {"level": "1FL"})["walls"]
    ids = [w["elementId"] for w in walls if w["typeName"] == "RC150"]
    items = call(model, "get_element_info", {"elementIds": ids})["items"]
    return {i["elementId"]: i["parameters"]["Comments"]["value"] for i in items}


def test_seed_000_quick_start_runs_as_written(tmp_path: Path) -> None:
    model_port, dev_port = free_port(), free_port()
    model = f"http://127.0.0.1:{model_port}/rpc"
    base = f"http://127.0.0.1:{dev_port}"
    steps = seed_commands(base)
    assert sorted(steps) == ["3", "3b", "4", "5"]
    # 1) and 2): the design-model server, and the playbook server forwarding to it.
    model_env = environment(tmp_path / "model")
    dev_env = environment(tmp_path / "dev", HOST="127.0.0.1", PORT=str(dev_port), WORKERS="1",
                          PLAYBOOK_AUTH="off", PLAYBOOK_UPSTREAM=model)
    with process([str(ROOT / "bin" / "model-server"), "--port", str(model_port), "--upgrade",
                  "--load-demo"], model_env, tmp_path / "model.log") as model_proc, \
            process([str(ROOT / "bin" / "dev")], dev_env, tmp_path / "dev.log") as dev_proc:
        try:
            wait_until_healthy(f"http://127.0.0.1:{model_port}/health", model_proc,
                               "bin/model-server", seconds=90)
            wait_until_healthy(f"{base}/healthz", dev_proc, "bin/dev", seconds=120)
        except RuntimeError:
            print((tmp_path / "model.log").read_text(), (tmp_path / "dev.log").read_text())
            raise
        assert set(comments(model).values()) == {""}

        # 3) Teach: start, operate via agent (JSON-RPC through /rpc), stop.
        started = run(steps["3"])
        assert started["ok"] is True and Path(started["dir"]).is_dir()
        agent = f"{base}/rpc"
        assert "methods" in call(agent, "rpc.discover", {}, 1)
        assert call(agent, "get_walls", {"level": "1FL"}, 2)["totalCount"] == 6
        assert call(agent, "update_wall_parameter", {
            "selector": {"category": "OST_Walls", "typeName": "RC150", "level": "1FL"},
            "param": "Comments", "value": "Model D"}, 3)["updated"] == 2
        assert set(comments(model).values()) == {"Model D"}
        stopped = run(steps["3b"])
        assert stopped["ok"] is True and stopped["entries"] == 3
        # The stop made the capture a draft recipe, named with the seed's own variables.
        recipe = stopped["recipe"]
        assert recipe["state"] == "draft" and recipe["steps"] == 2
        assert recipe["variables"] == ["level_name", "param_name", "param_value",
                                       "target_wall_type"]

        # Meanwhile someone edits the model by hand (straight at the model server).
        call(model, "update_wall_parameter", {"selector": {"category": "OST_Walls",
                                                           "typeName": "RC150",
                                                           "levelName": "1FL"},
                                              "param": "Comments", "value": "edited by hand"})

        # 4) Dry run: nothing is written; it plans the change and says a real run may go.
        dry = run(steps["4"])
        assert dry["ok"] is True and dry["dryRun"] is True, dry
        update = dry["details"][1]
        assert update["status"] == "planned" and update["planned"] == {"updated": 2}
        assert "Comments = 'Model D'" in update["plan"]
        assert dry["realRun"] == {"allowed": True, "basis": "teacher"}
        assert dry["caps"]["maxUpdated"] == {"value": 100, "source": "default"}
        assert set(comments(model).values()) == {"edited by hand"}

        # The operator approves it the seed's way (§6.9): a copy in the reviewed/ folder.
        reviewed = Path(started["dir"]).parent / "reviewed"
        reviewed.mkdir(exist_ok=True)
        shutil.copy(recipe["path"], reviewed / "my-first-session.json")

        # 5) Execute with args: the approved recipe writes, after its preview.
        done = run(steps["5"])
        assert done["ok"] is True and done["dryRun"] is False, done
        assert done["governance"] == {"state": "approved", "basis": "approved"}
        assert done["steps"] == {"total": 2, "succeeded": 2, "failed": 0, "skipped": 0}
        write = done["details"][1]
        assert write["preview"]["response"]["result"]["updated"] == 2
        assert write["response"]["result"]["updated"] == 2
        assert set(comments(model).values()) == {"Model D"}

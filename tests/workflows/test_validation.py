"""Validation: every kind of broken reference is reported with its path and what exists."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import app.mcp.harmonic  # noqa: F401  (registers the MCP tools a running app serves)
from app.workflows.compile import compile_document
from app.workflows.document import DocumentError, parse
from app.workflows.validate import validate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "workflows").glob("*.yaml"))

BASE: dict[str, Any] = yaml.safe_load("""
apiVersion: harmonic/v1
kind: Playbook
metadata: {name: demo, path: tests/demo}
workload: {studio: team}
workbook:
  - name: read
    type: page
    spec: {path: "/studios/{{ workload.studio }}"}
workflow:
  - step: start
    next: [look]
  - step: look
    task: read
    next: [ask]
  - step: ask
    turn: t1
    next: [end]
  - step: end
mcp:
  models: [{name: default, model: gpt-4o-mini}]
  tools:
    - name: note
      type: mcp
      spec: {tool: execute_action, arguments: {action: create_note}}
  resources:
    - name: page
      type: page
      spec: {path: /studios/team}
  prompts:
    - name: summarize
      template: "Summarize {{ args.text }}"
  turns:
    - name: t1
      model: default
      user:
        - use: resource:page
        - use: prompt:summarize
          with: {text: "{{ steps.look.markdown }}"}
      tools_allowed: [note]
""")


def problems_of(change: Any) -> list[str]:
    doc = copy.deepcopy(BASE)
    change(doc)
    return [str(p) for p in validate(doc)]


def test_the_base_document_is_valid() -> None:
    assert validate(copy.deepcopy(BASE)) == []


@pytest.mark.parametrize("change, expected", [
    (lambda d: d["mcp"]["turns"][0].update(model="gpt-5"),
     "mcp.turns[0].model: unknown model 'gpt-5' (defined: default)"),
    (lambda d: d["mcp"]["turns"][0].update(tools_allowed=["note", "search"]),
     "mcp.turns[0].tools_allowed[1]: unknown tool 'search' (defined: note)"),
    (lambda d: d["mcp"]["turns"][0]["user"][0].update(use="resource:kb"),
     "mcp.turns[0].user[0].use: unknown resource 'kb' (defined: page)"),
    (lambda d: d["mcp"]["turns"][0]["user"][1].update(use="prompt:shorten"),
     "mcp.turns[0].user[1].use: unknown prompt 'shorten' (defined: summarize)"),
    (lambda d: d["workflow"][1].update(task="fetch"),
     "workflow[1].task: unknown task 'fetch' (defined: read)"),
    (lambda d: d["workflow"][2].update(turn="t9"),
     "workflow[2].turn: unknown turn 't9' (defined: t1)"),
    (lambda d: d["workflow"][0].update(next=["look", "nowhere"]),
     "workflow[0].next[1]: unknown step 'nowhere' (defined: start, look, ask, end)"),
    (lambda d: d["mcp"]["models"].append({"name": "default"}),
     "mcp.models[1].name: duplicate model 'default' (first at mcp.models[0])"),
    (lambda d: d["mcp"]["tools"].append(dict(d["mcp"]["tools"][0])),
     "mcp.tools[1].name: duplicate tool 'note' (first at mcp.tools[0])"),
    (lambda d: d["mcp"]["resources"].append(dict(d["mcp"]["resources"][0])),
     "mcp.resources[1].name: duplicate resource 'page' (first at mcp.resources[0])"),
    (lambda d: d["mcp"]["prompts"].append(dict(d["mcp"]["prompts"][0])),
     "mcp.prompts[1].name: duplicate prompt 'summarize' (first at mcp.prompts[0])"),
    (lambda d: d["workflow"].append({"step": "look"}),
     "workflow[4].step: duplicate step 'look' (first at workflow[1])"),
    (lambda d: d["metadata"].pop("path"), "metadata.path: required (present: name)"),
    (lambda d: d.pop("kind"),
     "kind: required (present: apiVersion, mcp, metadata, workbook, workflow, workload)"),
    (lambda d: d["workflow"][3].update(next=["look"]),
     "workflow[1]: cycle: look → ask → end → look"),
    (lambda d: d["workflow"].append({"step": "orphan", "next": ["end"]}),
     "workflow[4].step: step 'orphan' is unreachable from start"),
    (lambda d: d["workflow"][0].update(step="begin"),
     "workflow: no step named 'start' (steps: begin, look, ask, end)"),
    (lambda d: d["workflow"].pop(2) and d["workflow"][1].update(next=["end"]),
     "mcp.turns[0]: turn 't1' is not used by any workflow step (add a step with 'turn: t1', "
     "or a workbook step 'mcp_t1')"),
    (lambda d: d["mcp"]["tools"][0]["spec"].update(tool="teleport"),
     "mcp.tools[0].spec.tool: unknown MCP tool 'teleport' (defined: "),
    (lambda d: d["workbook"][0]["spec"].update(path="/studios/{{ environ.key }}"),
     "workbook[0].spec.path: unknown name 'environ' in template (available: args, context, "
     "input, mcp, "),
    (lambda d: d["workbook"][0]["spec"].update(path="/studios/{{ workload.studio "),
     "workbook[0].spec.path: template syntax error:"),
    (lambda d: d["mcp"]["resources"][0].update(type="ftp"),
     "mcp.resources[0].type: 'ftp' is not one of: mcp, page, http, rpc, sql"),
    (lambda d: d["mcp"]["resources"][0].update(type="sql", spec={"query": "DELETE FROM x"}),
     "mcp.resources[0].spec.query: only SELECT queries are allowed"),
    (lambda d: d["mcp"]["resources"][0].update(type="http", spec={}),
     "mcp.resources[0].spec.url: required for type http (present: nothing)"),
    (lambda d: d["workflow"][1].update(turn="t1"),
     "workflow[1]: a step has either task or turn, not both"),
])
def test_each_broken_reference_is_named_with_its_path(change: Any, expected: str) -> None:
    found = problems_of(change)
    assert any(p.startswith(expected) for p in found), found


def test_yaml_errors_have_a_line() -> None:
    with pytest.raises(DocumentError) as err:
        parse("apiVersion: harmonic/v1\nkind: [unclosed\n")
    assert str(err.value.problems[0]).startswith("(document): not valid YAML at line")


def test_turns_without_a_workflow_compile_in_order_with_hidden_resource_steps() -> None:
    doc = copy.deepcopy(BASE)
    del doc["workflow"], doc["workbook"]
    doc["mcp"]["turns"][0]["user"] = [{"use": "resource:page"}, {"text": "go"}]
    doc["mcp"]["turns"].append({"name": "t2", "model": "default",
                                "user": [{"use": "resource:page"}, {"text": "again"}]})
    compiled = compile_document(doc)
    names = [(s["name"], s["type"], s["hidden"]) for s in compiled["steps"]]
    assert names == [("start", "noop", False), ("resource.page", "resource", True),
                     ("mcp.t1", "turn", False), ("mcp.t1#n.note", "tool", True),
                     ("mcp.t2", "turn", False), ("end", "noop", False)]
    steps = {s["name"]: s for s in compiled["steps"]}
    assert [e["step"] for e in steps["start"]["next"]] == ["resource.page"]
    assert [e["step"] for e in steps["resource.page"]["next"]] == ["mcp.t1"]
    assert [e["step"] for e in steps["mcp.t1"]["next"]] == ["mcp.t2"]  # fetched once
    assert compiled["result_step"] == "mcp.t2"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_validate_and_compile(path: Path) -> None:
    doc = parse(path.read_text())
    assert validate(doc) == []
    assert compile_document(doc)["steps"]


def test_cli_validate_prints_paths_and_fails(tmp_path: Path) -> None:
    broken = copy.deepcopy(BASE)
    broken["mcp"]["turns"][0]["model"] = "gpt-5"
    file = tmp_path / "broken.yaml"
    file.write_text(yaml.safe_dump(broken))
    env = {"FLASK_APP": "wsgi.py", "HARMONIC_INSTANCE": str(tmp_path / "instance"),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'h.db'}", "PATH": "/usr/bin:/bin"}
    flask = [sys.executable, "-m", "flask"]
    bad = subprocess.run([*flask, "workflows", "validate", str(file)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert "mcp.turns[0].model: unknown model 'gpt-5' (defined: default)" in bad.stderr
    good = subprocess.run([*flask, "workflows", "compile", str(EXAMPLES[-1])], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert good.returncode == 0, good.stderr
    assert "type: turn" in good.stdout and "&id" not in good.stdout

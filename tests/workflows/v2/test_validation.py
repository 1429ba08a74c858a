"""What is wrong with a noetl.io/v2 document is named with its path, as for ours; retired and
harmonic/v1 forms say what to write instead; credentials never come from the document."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from app.workflows.document import parse
from app.workflows.validate import validate
from tests.workflows.v2.conftest import text


def _base() -> dict[str, Any]:
    return parse(text("thermostat.yaml"))


def test_our_v2_playbooks_are_valid() -> None:
    from tests.workflows.v2.conftest import HERE

    for path in sorted(HERE.glob("*.yaml")):
        assert validate(parse(path.read_text(encoding="utf-8"))) == [], path.name


BROKEN: list[tuple[Callable[[dict[str, Any]], Any], str]] = [
    (lambda d: d["workflow"][0]["next"]["arcs"].append({"step": "nowhere"}),
     "workflow[0].next.arcs[1].step: unknown step 'nowhere' (defined: start, decide, "
     "cool_down, open_window, start_fan, check_fan, heat_up, report)"),
    (lambda d: d["workflow"][0].update(next=["decide"]),
     "workflow[0].next: must be {spec: {mode}, arcs: [{step, when, set}]} (a list of step "
     "names is the harmonic/v1 form)"),
    (lambda d: d["workflow"][2].update(type="workbook"),
     "workflow[2].type: not allowed here: 'type' is the harmonic/v1 form: a noetl.io/v2 step "
     "runs tool: {kind: …}"),
    (lambda d: d["workflow"][2].update(when="{{ true }}"),
     "workflow[2].when: not allowed here: a step has no 'when': route with next.arcs[].when, "
     "or admit it with spec.policy.admit.rules"),
    (lambda d: d["workflow"][2]["tool"].update(kind="snowflake"),
     "workflow[2].tool.kind: kind 'snowflake' is not run here (kinds: noop, python, http, "
     "postgres, duckdb, workbook, playbook, mcp, page, rpc)"),
    (lambda d: d["workflow"][1]["tool"].update(name="classifier"),
     "workflow[1].tool.name: unknown workbook entry 'classifier' (defined: classify)"),
    (lambda d: d["workflow"][2].pop("tool"),
     "workflow[2].tool: required: every step runs a tool (kind: noop to only route), or a "
     "turn of the mcp section"),
    (lambda d: d["workflow"][3]["tool"].update(code=None, kind="postgres",
                                               command="SELECT 1", dsn="postgresql://x"),
     "workflow[3].tool.auth: required for kind postgres (auth or credential)"),
    (lambda d: d["workflow"][3]["tool"].update(kind="postgres", command="SELECT 1",
                                               auth="db", dsn="postgresql://x"),
     "workflow[3].tool.dsn: a postgres task names its credential (auth: <name>, read from the "
     "operator's secrets), never a DSN"),
    (lambda d: d.update(keychain=[{"name": "api", "kind": "bearer", "token": "{{ key }}"}]),
     "keychain[0].token: a credential's material is never read from the document: the "
     "operator stores it as the secret 'api' (WORKFLOWS_SECRETS); the entry names it and says "
     "its kind"),
    (lambda d: d["workflow"][7]["tool"]["input"].update(x="{{ forecast.rain }}"),
     "workflow[7].tool.input.x: unknown name 'forecast' in template"),
    (lambda d: d["workflow"][7]["tool"]["input"].update(x="{{ celsius + }}"),
     "workflow[7].tool.input.x: template syntax error: unexpected 'end of print statement'"),
    (lambda d: d["workflow"][7]["next"].update(arcs=[{"step": "start"}])
     if "next" in d["workflow"][7] else d["workflow"][7].update(
         next={"arcs": [{"step": "start"}]}),
     "workflow[0]: cycle: start → decide → cool_down → open_window → report → start (a step "
     "runs once per run here: repeat work with a loop, or a task policy's jump)"),
    (lambda d: d["workflow"][4]["tool"].update(spec={"policy": {"rules": [
        {"when": "{{ true }}", "then": {"do": "jump", "to": "elsewhere"}}]}}),
     "workflow[4].tool.spec.policy.rules[0].then.to: jump to an unknown task 'elsewhere' "
     "(defined: start_fan)"),
    (lambda d: d["workflow"][4]["tool"].update(spec={"policy": {"rules": [
        {"when": "{{ true }}", "then": {"do": "repeat"}}]}}),
     "workflow[4].tool.spec.policy.rules[0].then.do: 'repeat' is not one of: continue, retry, "
     "break, jump, fail"),
    (lambda d: d["workflow"][4].update(loop={"cursor": {"kind": "postgres"}, "iterator": "r"}),
     "workflow[4].loop.cursor: not allowed here: cursor loops (workers claiming rows of a "
     "database) are not run here: loop over a list with loop.in"),
    (lambda d: d.update(sql_inputs=["where"]),
     "sql_inputs[0]: 'where' is not an input of this workflow (workload: celsius)"),
    (lambda d: d.update(vars={"a": 1}),
     "vars: not allowed here: root 'vars' is retired: write ctx with 'set' (arcs, steps, task "
     "policies)"),
    (lambda d: d["workflow"][3].update(turn="brief"),
     "workflow[3]: a step runs a tool or a turn, not both"),
]


@pytest.mark.parametrize(("breaks", "expected"), BROKEN, ids=[e[:60] for _, e in BROKEN])
def test_each_problem_is_named_with_its_path(breaks: Callable[[dict[str, Any]], Any],
                                             expected: str) -> None:
    doc = copy.deepcopy(_base())
    breaks(doc)
    problems = [str(p) for p in validate(yaml.safe_load(yaml.safe_dump(doc)))]
    assert any(p.startswith(expected) for p in problems), problems


def test_an_unknown_api_version_lists_the_ones_there_are() -> None:
    doc = _base()
    doc["apiVersion"] = "noetl.io/v3"
    assert [str(p) for p in validate(doc)] == [
        "apiVersion: 'noetl.io/v3' is not one of: harmonic/v1, noetl.io/v1, noetl.io/v2, "
        "noetl.io/v10"]


def test_the_published_schema_checks_both_shapes() -> None:
    from jsonschema import Draft202012Validator

    from app.workflows.web import published_schema
    from tests.workflows.v2.conftest import HERE

    checker = Draft202012Validator(published_schema())
    examples = HERE.parents[2] / "examples" / "workflows"
    for path in [*sorted(HERE.glob("*.yaml")), *sorted(examples.glob("*.yaml"))]:
        assert list(checker.iter_errors(parse(path.read_text(encoding="utf-8")))) == [], path
    wrong = _base()
    wrong["workflow"][0]["next"] = ["decide"]
    assert list(checker.iter_errors(wrong))

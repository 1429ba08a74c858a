"""What seed 004's examples rely on beyond themselves: unquoted templates, duckdb and python
tools, structured prompt templates, and clear errors for references that name nothing."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.workflows.conftest import drain, user_id
from tests.workflows.gateway import ScriptedGateway, answer

HEADER = """\
apiVersion: harmonic/v1
kind: Workflow
metadata: {name: probe, path: tests/probe}
workload: {topic: billing, text: one two three}
"""


def _doc(body: str) -> str:
    return HEADER + textwrap.dedent(body)


def _start(app: Flask, text: str) -> uuid.UUID:
    from app.workflows import runs

    with app.app_context():
        return runs.start(text, {}, user_id(app, "alice"))


def _problems(text: str) -> list[str]:
    from app.workflows.document import DocumentError, parse
    from app.workflows.validate import validate

    try:
        return [str(p) for p in validate(parse(text))]
    except DocumentError as exc:
        return [str(p) for p in exc.problems]


def test_unquoted_templates_load_and_errors_point_into_the_original_text() -> None:
    from app.workflows.document import parse

    doc = parse("a: {{ input.x }}/chat  # a comment\nb:\n  - {{ it's }}\n"
                "c: |\n  {{ stays }}: as text\n")
    assert doc == {"a": "{{ input.x }}/chat", "b": ["{{ it's }}"], "c": "{{ stays }}: as text\n"}
    broken = _problems("a: {{ x }}\nb: [1, 2\n")
    assert broken == ["(document): not valid YAML at line 3, column 1: expected ',' or ']', "
                      "but got '<stream end>'"]
    # On a line the loader quoted, columns map back to the original text.
    from app.workflows.document import quote_templates

    quoted, columns = quote_templates("k: 1\nx: {{ a }}  # c\n")
    assert quoted == "k: 1\nx: '{{ a }}'  # c\n"
    assert columns[1][quoted.splitlines()[1].index("#")] == "x: {{ a }}  # c".index("#")
    assert columns[1][3] == 3  # the opening quote stands where the value began


def test_references_that_name_nothing_are_clear_validation_errors() -> None:
    problems = _problems("""\
apiVersion: harmonic/v1
kind: Workflow
metadata: {name: probe, path: tests/probe}
mcp:
  models: [{name: gpt-4o}]
  turns: [{name: t1, model: gpt-4o, user: [{text: hi}]}]
workflow:
  - step: start
    next: [mcp_t1]
  - step: mcp_t1
    type: workbook
    task:
      type: http
      url: http://127.0.0.1/chat
      data:
        model: {{ mcp.models.gpt-5.name }}
        prompt: {{ prompts.missing.template | render({}) }}
        sql: "SELECT '{{ input.x }}'"
""")
    assert problems == [
        "workflow[1].task.data.model: unknown model 'gpt-5' in mcp.models (defined: gpt-4o)",
        "workflow[1].task.data.prompt: unknown prompt 'missing' (none defined)",
    ]
    sql = _problems(_doc("""\
        workflow:
          - step: start
            type: workbook
            task: {type: postgres, dsn: x, sql: "SELECT 1 WHERE a = '{{ input.topic }}'"}
        """))
    assert sql == ["workflow[0].task.sql: write {{ … }} outside quotes in SQL: it becomes a "
                   "bound parameter, not text pasted into a string"]


def test_a_structured_prompt_keeps_its_roles(app: Flask, studio, gateway: ScriptedGateway
                                             ) -> None:  # type: ignore[no-untyped-def]
    gateway.replies = [answer("ok")]
    run = drain(app, _start(app, _doc("""\
        mcp:
          models: [{name: gpt-4o}]
          prompts:
            - name: review
              template:
                - {role: system, content: "Review {{ args.what }} briefly."}
                - {role: user, content: "Topic: {{ input.topic }}"}
          turns:
            - name: t1
              model: gpt-4o
              user:
                - text: Before.
                - {use: "prompt:review", with: {what: notes}}
        """)))
    assert run["status"] == "succeeded", run["error"]
    assert gateway.requests[0]["messages"] == [
        {"role": "user", "content": "Before."},
        {"role": "system", "content": "Review notes briefly."},
        {"role": "user", "content": "Topic: billing"}]


def test_duckdb_reads_files_of_its_folder_only(app: Flask, studio, wf_settings, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch
                                               ) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("duckdb")
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "kb.csv").write_text("id,title,topic\n1,Refunds,billing\n2,Passwords,accounts\n")
    # A value no temporary path can hold (pytest numbers its folders: pytest-42/...).
    (tmp_path / "outside.csv").write_text("secret\nzq-canary-81\n")
    monkeypatch.setitem(app.config, "WORKFLOWS_DUCKDB_DIR", str(folder))

    def run_sql(sql: str, tables: str = "{kb: kb.csv}") -> dict[str, Any]:
        return drain(app, _start(app, _doc(f"""\
            workflow:
              - step: start
                type: workbook
                task:
                  type: duckdb
                  tables: {tables}
                  sql: {sql}
            """)))

    ok = run_sql("SELECT id, title FROM kb WHERE topic = {{ input.topic }}")
    assert ok["status"] == "succeeded", ok["error"]
    assert ok["result"] == {"columns": ["id", "title"], "rows": [{"id": 1, "title": "Refunds"}]}
    direct = run_sql(f"SELECT count(*) AS n FROM read_csv('{folder / 'kb.csv'}')")
    assert direct["result"] == {"columns": ["n"], "rows": [{"n": 2}]}, direct["error"]
    outside = run_sql(f"SELECT * FROM read_csv('{tmp_path / 'outside.csv'}')")
    assert outside["status"] == "failed" and "duckdb: Permission Error" in outside["error"]
    assert "zq-canary-81" not in outside["error"]
    escaped = run_sql("SELECT * FROM t", "{t: ../outside.csv}")
    assert escaped["status"] == "failed"
    assert "no file '../outside.csv' in WORKFLOWS_DUCKDB_DIR" in escaped["error"]
    unlock = run_sql("SELECT current_setting('lock_configuration') AS x FROM kb "
                     "WHERE {{ 1 }} = 1; SET lock_configuration = false")
    assert unlock["status"] == "failed" and "one SELECT" in unlock["error"]


def test_python_tools_call_registered_functions_only(
        app: Flask, studio, wf_settings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    def run_function(name: str) -> dict[str, Any]:
        return drain(app, _start(app, _doc(f"""\
            workbook:
              - name: count
                type: python
                function: "{name}"
                args: {{text: "{{{{ input.text }}}}"}}
            workflow:
              - step: start
                task: count
            """)))

    refused = run_function("tests.workflows.functions:word_count")
    assert refused["status"] == "failed"
    assert "module 'tests.workflows.functions' is not allowed" in refused["error"]
    assert "WORKFLOWS_PYTHON_MODULES" in refused["error"]
    monkeypatch.setitem(app.config, "WORKFLOWS_PYTHON_MODULES", "tests.workflows.functions")
    ok = run_function("tests.workflows.functions:word_count")
    assert ok["status"] == "succeeded", ok["error"]
    assert ok["result"] == {"words": 3}
    unknown = run_function("no_such_entry_point")
    assert unknown["status"] == "failed"
    assert "no function 'no_such_entry_point' in the entry points " \
           "harmonic.workflow_functions" in unknown["error"]

"""What a run is given is data wherever it meets SQL text (checked by what DuckDB reads back):
a quoted literal, whatever a template did to it, unless the workflow lists the input in
``sql_inputs``, which only a workflow admin or the command line may then set."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.workflows.v2.conftest import run_to_end, start

ECHO = """
apiVersion: noetl.io/v2
kind: Playbook
metadata: {name: v2-echo, path: tests/v2/echo}
workload:
  word: plain
  limit: 2
  order_by: city
sql_inputs: [order_by]
workflow:
  - step: start
    tool:
      kind: duckdb
      command: |
        -- the towns' table, and what the run was given
        CREATE TABLE towns AS SELECT * FROM (VALUES ('Oslo', 3), ('Lima', 1), ('Rome', 2))
          AS t(city, rank);
        SELECT {{ word }} AS bare, '{{ word | upper }}' AS quoted, {{ 'w:' ~ word }} AS joined,
               {{ limit }} AS number, (SELECT string_agg(city, ',' ORDER BY {{ order_by }})
                                       FROM towns) AS towns
"""


def _row(app: Flask, inputs: dict[str, Any], **options: Any) -> dict[str, Any]:
    run, _events = run_to_end(app, ECHO, inputs, **options)
    assert run["status"] == "succeeded", run["error"]
    rows: list[dict[str, Any]] = run["result"]["rows"]
    return rows[0]


def test_the_documents_own_values_render_as_sql(v2: Flask) -> None:
    # The workload's defaults are the document's, which is code: pasted as they are, "plain"
    # and "w:plain" are not values here, so the statement fails as written.
    run, _events = run_to_end(v2, ECHO)
    assert run["status"] == "failed"
    assert run["error"].startswith("step start: start: duckdb: Parser Error: syntax error")


def test_a_given_value_is_a_literal_whatever_the_template_did(v2: Flask) -> None:
    sly = "x' OR '1'='1'); DROP TABLE towns; --"
    row = _row(v2, {"word": sly, "limit": 5})
    assert row == {"bare": sly, "quoted": sly.upper(), "joined": "w:" + sly, "number": 5,
                   "towns": "Lima,Oslo,Rome"}


def test_a_declared_sql_input_is_sql_and_only_an_admin_may_give_it(
        v2: Flask, make_agent, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from app.services.errors import Invalid

    make_agent("alice")
    make_agent("root")
    with pytest.raises(Invalid) as refused:
        start(v2, ECHO, {"word": "a", "order_by": "rank DESC"}, as_user="alice")
    assert refused.value.errors == [{"param": "inputs.order_by", "message":
                                     "only a workflow admin may set it (WORKFLOWS_ADMINS)"}]
    monkeypatch.setitem(v2.config, "WORKFLOWS_ADMINS", "root")
    row = _row(v2, {"word": "a", "order_by": "rank DESC"}, as_user="root")
    assert row["towns"] == "Oslo,Rome,Lima"  # pasted as SQL, by its declaration
    row = _row(v2, {"word": "a", "order_by": "rank"}, operator=True)
    assert row["towns"] == "Lima,Rome,Oslo"


def test_a_given_value_may_not_decide_the_shape_of_the_sql(v2: Flask) -> None:
    shaped = ECHO.replace("SELECT {{ word }} AS bare",
                          "SELECT {% if word == 'all' %}*, {% endif %}{{ word }} AS bare")
    run, _events = run_to_end(v2, shaped, {"word": "all"})
    assert run["status"] == "failed"
    assert "a value given when the run started decides the shape of this SQL" in run["error"]


def test_a_given_value_may_not_go_into_an_identifier_or_a_comment(v2: Flask) -> None:
    for place in ('"{{ word }}"', "1 /* {{ word }} */", "$$ {{ word }} $$"):
        document = ECHO.replace("SELECT {{ word }} AS bare", f"SELECT {place} AS bare")
        run, _events = run_to_end(v2, document, {"word": "a"})
        assert run["status"] == "failed", place
        assert "a value given when the run started may not go into a quoted identifier, a " \
               "dollar-quoted string or a comment of SQL" in run["error"]

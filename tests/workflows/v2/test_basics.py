"""noetl.io/v2 playbooks of our own, each to its end state: workload values read by name,
python steps, results read by step name."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.workflows.v2.conftest import of_type, run_to_end, steps_run, text


def test_a_greeting_reads_its_workload_value_by_name(v2: Flask) -> None:
    run, events = run_to_end(v2, text("greeting.yaml"))
    assert run["status"] == "succeeded", run["error"]
    assert steps_run(events) == ["start", "greet", "end"]
    assert run["result"] == {"status": "done", "words": 2}
    said = next(e for e in of_type(events, "call.done") if e["step"] == "greet")
    assert said["data"]["printed"] == "saying Good morning\n"


def test_a_workbook_tool_and_exclusive_arcs_pick_the_warm_branch(v2: Flask) -> None:
    run, events = run_to_end(v2, text("thermostat.yaml"))
    assert run["status"] == "succeeded", run["error"]
    done = steps_run(events)
    # The inclusive router started both; report waited for both and ran once, last.
    assert set(done) == {"start", "decide", "cool_down", "open_window", "start_fan",
                         "check_fan", "report"}
    assert done[-1] == "report" and done.count("report") == 1
    assert run["result"] == {"done": ["window", "fan checked"]}
    decided = next(e for e in of_type(events, "next.evaluated") if e["step"] == "decide")
    assert decided["data"] == {"mode": "exclusive", "taken": ["cool_down"]}
    fanned = next(e for e in of_type(events, "next.evaluated") if e["step"] == "cool_down")
    assert fanned["data"] == {"mode": "inclusive", "taken": ["open_window", "start_fan"]}


def test_the_cold_branch_is_taken_for_a_cold_input(v2: Flask) -> None:
    run, events = run_to_end(v2, text("thermostat.yaml"), {"celsius": 12})
    assert run["status"] == "succeeded", run["error"]
    assert steps_run(events) == ["start", "decide", "heat_up", "report"]
    assert run["result"] == {"done": ["heater"]}


def test_an_inclusive_arc_whose_when_is_false_is_not_taken(v2: Flask) -> None:
    run, events = run_to_end(v2, text("thermostat.yaml"), {"celsius": 26})
    assert run["status"] == "succeeded", run["error"]
    assert "start_fan" not in steps_run(events)
    assert run["result"] == {"done": ["window"]}


def test_values_passed_through_ctx_keep_their_types(v2: Flask) -> None:
    run, _events = run_to_end(v2, text("handoff.yaml"))
    assert run["status"] == "succeeded", run["error"]
    assert run["result"] == {"total": 450.0, "members": ["ada", "grace"], "owner": "ada",
                             "urgent": True, "note": "budget 100 for 2 people"}
    # A value given when the run starts keeps its type the same way.
    run, _events = run_to_end(v2, text("handoff.yaml"), {"budget": 300})
    assert run["result"]["total"] == 750.0


def test_sequential_and_parallel_loops_give_results_and_stats(v2: Flask) -> None:
    run, events = run_to_end(v2, text("loops.yaml"))
    assert run["status"] == "succeeded", run["error"]
    assert run["result"] == {"sum": 28, "indexes": [0, 1, 2, 3, 4], "lengths": [5, 4, 5],
                             "stats": {"total": 3, "done": 3, "succeeded": 3, "failed": 0}}
    items = [(e["step"], e["data"]["index"]) for e in of_type(events, "loop.item")]
    assert items[:5] == [(f"double_each[{i}]", i) for i in range(5)]
    assert sorted(items[5:]) == [("measure_words[0]", 0), ("measure_words[1]", 1),
                                 ("measure_words[2]", 2)]
    done = [(e["step"], e["data"]["items"]) for e in of_type(events, "loop.done")]
    assert done == [("double_each#done", 5), ("measure_words#done", 3)]
    started = {e["step"]: e["data"] for e in of_type(events, "loop.started")}
    assert started["double_each"]["at_once"] == 1 and started["measure_words"]["at_once"] == 2
    # The sequential loop never had two items open at once: each started after the last ended.
    order = [(e["type"], e["step"]) for e in events if e["step"] and
             e["step"].startswith("double_each[") and e["type"] in ("step_started",
                                                                      "step_completed")]
    assert order == [(kind, f"double_each[{i}]") for i in range(5)
                     for kind in ("step_started", "step_completed")]


def test_a_task_pipeline_pages_with_set_jump_and_break(v2: Flask) -> None:
    run, events = run_to_end(v2, text("pages.yaml"))
    assert run["status"] == "succeeded", run["error"]
    colours = ["red", "orange", "yellow", "green", "blue", "indigo", "violet"]
    # The step's result is its last _prev: what `keep` returned on the last page.
    assert run["result"] == {"count": 7, "pages": 3, "last_of_start": colours}
    tasks = [e["data"]["task"] for e in of_type(events, "call.done")]
    assert tasks == ["first_page", "fetch", "keep", "fetch", "keep", "fetch", "keep",
                     "summary"]


GATED = """
apiVersion: noetl.io/v2
kind: Playbook
metadata: {name: v2-gated, path: tests/v2/gated}
workload:
  enabled: false
workflow:
  - step: start
    tool: {kind: noop}
    next:
      arcs:
        - step: maybe
  - step: maybe
    spec:
      policy:
        admit:
          rules:
            - when: "{{ workload.enabled }}"
              then: {allow: true}
            - else:
                then: {allow: false}
    tool:
      kind: noop
      input: {ran: true}
    next:
      arcs:
        - step: after
  - step: after
    tool: {kind: noop, input: {after: true}}
"""


def test_a_step_its_admission_refuses_ends_its_branch(v2: Flask) -> None:
    run, events = run_to_end(v2, GATED)
    assert run["status"] == "succeeded", run["error"]
    assert steps_run(events) == ["start", "maybe"]
    assert [e["step"] for e in of_type(events, "step.skipped")] == ["maybe"]
    run, events = run_to_end(v2, GATED, {"enabled": True})
    assert steps_run(events) == ["start", "maybe", "after"]
    assert run["result"] == {"after": True}


SLOW_ITEMS = """
apiVersion: noetl.io/v2
kind: Playbook
metadata: {name: v2-slow, path: tests/v2/slow}
workload:
  items: [a, b, c, d]
workflow:
  - step: start
    loop:
      in: "{{ items }}"
      iterator: it
      spec: {mode: MODE, max_in_flight: 2}
    tool:
      kind: python
      input: {it: "{{ it }}"}
      code: |
        import time
        time.sleep(0.6)
        result = it.upper()
"""


def _with_two_workers(app: Flask, run_id: Any) -> dict[str, Any]:
    """Two workers (threads) drain the queue together until the run has ended."""
    import threading
    import time

    from app.workflows import queue
    from app.workflows.worker import Worker

    finished = threading.Event()

    def work(name: str) -> None:
        worker = Worker(app, name)
        while not finished.is_set():
            if not worker.run_once():
                time.sleep(0.02)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in (1, 2)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with app.app_context():
                run = queue.get_run(run_id)
            assert run is not None
            if run["status"] in ("succeeded", "failed"):
                return run
            time.sleep(0.05)
        raise AssertionError("the run did not end")
    finally:
        finished.set()
        for thread in threads:
            thread.join(timeout=60)


def _most_at_once(events: list[dict[str, Any]]) -> int:
    running, most = 0, 0
    for event in events:
        if event["step"] and event["step"].startswith("start["):
            running += {"step_started": 1, "step_completed": -1}.get(event["type"], 0)
            most = max(most, running)
    return most


@pytest.mark.parametrize(("mode", "most"), [("parallel", 2), ("sequential", 1)])
def test_a_parallel_loop_runs_its_items_at_once_on_two_workers(v2: Flask, mode: str,
                                                              most: int) -> None:
    from tests.workflows.conftest import events_of
    from tests.workflows.v2.conftest import start

    run_id = start(v2, SLOW_ITEMS.replace("MODE", mode))
    run = _with_two_workers(v2, run_id)
    assert run["status"] == "succeeded", run["error"]
    assert run["result"]["results"] == ["A", "B", "C", "D"]
    events = events_of(v2, run_id)
    assert _most_at_once(events) == most
    # Two workers recording events of one run at once number them one after another, and
    # every job ran once (none had to be taken back after a failed recording).
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["data"]["attempt"] for e in events if e["type"] == "step_started"} == {1}


def test_the_final_step_named_by_the_executor_gives_the_runs_result(v2: Flask) -> None:
    document = text("loops.yaml").replace(
        "workflow:\n", "executor:\n  spec:\n    final_step: measure_words\nworkflow:\n", 1)
    run, _events = run_to_end(v2, document)
    assert run["status"] == "succeeded", run["error"]
    assert run["result"]["results"] == [5, 4, 5]

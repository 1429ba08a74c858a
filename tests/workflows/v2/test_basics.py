"""noetl.io/v2 playbooks of our own, each to its end state: workload values read by name,
python steps, results read by step name."""

from __future__ import annotations

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

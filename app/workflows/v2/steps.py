"""One job of a ``noetl.io/v2`` run: a step, a loop's item or end, or a step resumed.

The jobs of a step ``X``:

- ``X``: admits the step (``spec.policy.admit.rules``; a step refused ends its branch), then
  runs its pipeline, or, for a ``loop``, evaluates the list and starts its items: one job
  ``X[i]`` per item, ``max_in_flight`` at a time for a parallel loop (each item that ends starts
  the next), one at a time for a sequential one; and ``X#done``, which waits for them all.
- ``X[i]``: the pipeline for item ``i`` (``iter`` holds it); its result is the item's.
- ``X#done``: the loop's result ``{results: [each item's, in order], stats}``.
- ``X#r<n>`` (or ``X[i]#r<n>``): the pipeline continued after the sub-run its ``playbook``
  task started (a waiting job, queued when the sub-run ends).

The job that ends the step records its result (``closes``) and what it set in ``ctx``, then
applies the step's ``set`` and follows ``next``: the arcs whose ``when`` holds (the first
one, or every one with ``mode: inclusive``), each applying its own ``set``. A step that more
than one arc leads to is a join: it is enqueued waiting for the steps it can be reached from
(``compiled["joins"]``) and runs once, after those of them that run.

Events (beside the queue's own, ``step_started`` … ``step_completed``): ``call.done`` and
``call.error`` per task run, ``loop.item`` per item, ``loop.done``, ``step.skipped``, and
``next.evaluated`` with the arcs taken.
"""

from __future__ import annotations

import uuid
from typing import Any

from app.workflows import admission, catalog, queue, run_context, step_kinds
from app.workflows.compile import steps_by_name
from app.workflows.queue import Event, JobSpec, Leased, base_step
from app.workflows.templating import RESULTS_ENV, RenderError, render_value, truthy
from app.workflows.tools import Call, StepError
from app.workflows.v2 import pipeline, scope
from app.workflows.v2.pipeline import State, StepFailed, Suspended

PARALLEL_DEFAULT = 8  # items of a parallel loop that run at once when it does not say
ITEM_IN_EVENT = 300  # characters of a loop's item its loop.item event shows


class Outcome:
    """What the runner records for a v2 job (see ``app.workflows.step_kinds.Outcome``)."""

    def __init__(self, result: Any, events: list[Event], spawn: list[JobSpec],
                 record: dict[str, Any], action: dict[str, Any]) -> None:
        self.result, self.events, self.spawn = result, events, spawn
        self.record, self.action = record, action


def execute(job: Leased, run: dict[str, Any], done: list[dict[str, Any]],
            call: Call) -> Outcome:
    compiled = run["compiled"]
    steps = steps_by_name(compiled)
    step = steps.get(base_step(job.step))
    if step is None:
        raise StepError(f"step '{job.step}' is not in the compiled workflow")
    base = scope.base(run, done)
    given = scope.given(run)
    payload = job.payload
    if payload.get("collect"):
        return _collect(step, run, done, base, call)
    if "resume" in payload:
        return _resume(job, step, run, done, base, given, call)
    if "item" in payload:
        return _item(job, step, run, done, base, given, call)
    events: list[Event] = []
    if step["type"] in ("turn", "resource") and ("round" in payload or "base" in payload):
        return _ours(job, step, run, done, base, call)  # a later round of a turn
    if step.get("admit") and not _admitted(step["admit"], base):
        events.append(Event("step.skipped", job.step, {"reason": "not admitted"}))
        return Outcome(None, events, [], {"closes": True, "skipped": True},
                       {"skipped": True})
    if step.get("loop"):
        return _loop(job, step, run, base, call, events)
    if step["type"] in ("turn", "resource"):
        return _ours(job, step, run, done, base, call)
    state = State()
    return _pipeline(job, step, run, base, given, call, state, events, None, None)


def _admitted(rules: list[dict[str, Any]], names: dict[str, Any]) -> bool:
    for rule in rules:
        if "else" in rule:
            then = (rule["else"] or {}).get("then") or rule["else"]
            return bool(then.get("allow", True))
        if truthy(rule.get("when", True), names, RESULTS_ENV):
            return bool((rule.get("then") or {}).get("allow", True))
    return True


# Pipelines -----------------------------------------------------------------------------------

Item = tuple[int, Any, int, int]  # a loop's item: its index, value, the loop's length, at once


def _pipeline(job: Leased, step: dict[str, Any], run: dict[str, Any], base: dict[str, Any],
              given: frozenset[str], call: Call, state: State, events: list[Event],
              item: Item | None, child: dict[str, Any] | None) -> Outcome:
    """Run (or continue) the step's pipeline in this job; end the step or the item."""
    names = base
    if item is not None:
        index, value, length, _at_once = item
        names = scope.iteration(base, step["loop"]["iterator"], value, index, length,
                                state.iter)
    finished = pipeline.run(step["tasks"], step, names, given, call, state, events, child)
    if isinstance(finished, Suspended):
        return _start_sub_run(job, step, run, finished, events, item)
    action = {"tasks": len(step["tasks"]), "runs": finished.runs}
    if item is not None:
        return _item_done(step, item, finished, events, action)
    return finish(job.step, step, run, base, finished.prev, finished.ctx, events, "step.exit",
                  action)


def finish(job_step: str, step: dict[str, Any], run: dict[str, Any], base: dict[str, Any],
           result: Any, ctx: dict[str, Any], events: list[Event], event: str,
           action: dict[str, Any]) -> Outcome:
    """End the step: its ``set``, then its arcs."""
    compiled = run["compiled"]
    state = State(ctx=dict(ctx))
    view = {**base, **ctx, "ctx": {**base["ctx"], **ctx}, step["name"]: result,
            "output": scope.outcome(result), "result": result,
            "event": {"name": event, "step": step["name"]}}
    try:
        if step.get("set"):
            pipeline.apply_set(step["set"], view, state)
            view = {**view, **state.ctx, "ctx": {**base["ctx"], **state.ctx}}
        taken: list[dict[str, Any]] = []
        for arc in step.get("next") or []:
            if "when" in arc and not truthy(arc["when"], view, RESULTS_ENV):
                continue
            taken.append(arc)
            if arc.get("set"):
                pipeline.apply_set(arc["set"], view, state)
            if step.get("mode") != "inclusive":
                break
    except RenderError as exc:
        raise StepFailed(f"{step['name']}: {exc}", events) from None
    joins = compiled.get("joins") or {}
    spawn = [JobSpec(arc["step"], {"kind": "v2"},
                     wait={"upstream": joins[arc["step"]]} if arc["step"] in joins else None)
             for arc in taken]
    if step.get("next"):
        events.append(Event("next.evaluated", job_step, {
            "mode": step.get("mode", "exclusive"), "taken": [a["step"] for a in taken]}))
    return Outcome(result, events, spawn, {"closes": True, "ctx": state.ctx},
                   {**action, "next": [a["step"] for a in taken]})


# Loops ---------------------------------------------------------------------------------------

def _loop(job: Leased, step: dict[str, Any], run: dict[str, Any], base: dict[str, Any],
          call: Call, events: list[Event]) -> Outcome:
    loop = step["loop"]
    try:
        items = render_value(loop["in"], base, RESULTS_ENV)
        spec = loop.get("spec") or {}
        wanted = render_value(spec.get("max_in_flight"), base, RESULTS_ENV)
    except RenderError as exc:
        raise StepFailed(f"{step['name']}: loop.in: {exc}", events) from None
    if isinstance(items, dict):
        items = list(items.values())
    if not isinstance(items, list):
        raise StepFailed(f"{step['name']}: loop.in is not a list ({type(items).__name__})",
                         events)
    if not items:
        events.append(Event("loop.done", job.step, {"items": 0}))
        return finish(job.step, step, run, base, {"results": [], "stats": _stats([], 0)}, {},
                      events, "loop.done", {"items": 0})
    parallel = spec.get("mode") == "parallel"
    try:
        at_once = int(wanted) if wanted not in (None, "") else PARALLEL_DEFAULT
    except (TypeError, ValueError):
        raise StepFailed(f"{step['name']}: loop.spec.max_in_flight is not a number "
                         f"({wanted!r})", events) from None
    at_once = max(1, min(at_once if parallel else 1, len(items)))
    spawn = [JobSpec(f"{step['name']}[{i}]", {"kind": "v2", "item": i})
             for i in range(at_once)]
    spawn.append(JobSpec(f"{step['name']}#done", {"kind": "v2", "collect": True},
                         wait={"upstream": [step["name"]]}))
    events.append(Event("loop.started", job.step, {
        "items": len(items), "mode": "parallel" if parallel else "sequential",
        "at_once": at_once}))
    return Outcome(None, events, spawn, {"loop": {"items": items, "at_once": at_once}},
                   {"items": len(items), "at_once": at_once})


def _collection(step: dict[str, Any], done: list[dict[str, Any]]) -> dict[str, Any]:
    """What the loop's first job recorded: its items and how many run at once."""
    for row in done:
        if row["step"] == step["name"] and "loop" in (row.get("payload") or {}):
            loop: dict[str, Any] = row["payload"]["loop"]
            return loop
    raise StepError(f"{step['name']}: the loop's items were not recorded")


def _item(job: Leased, step: dict[str, Any], run: dict[str, Any], done: list[dict[str, Any]],
          base: dict[str, Any], given: frozenset[str], call: Call) -> Outcome:
    loop = _collection(step, done)
    index = int(job.payload["item"])
    items = loop["items"]
    value = items[index]
    shown = str(value)
    events = [Event("loop.item", job.step, {
        "index": index, "item": shown if len(shown) <= ITEM_IN_EVENT
        else shown[:ITEM_IN_EVENT] + "…"})]
    return _pipeline(job, step, run, base, given, call, State(), events,
                     (index, value, len(items), int(loop["at_once"])), None)


def _item_done(step: dict[str, Any], item: Item, state: State, events: list[Event],
               action: dict[str, Any]) -> Outcome:
    """An item ended: the next one not yet started starts (``at_once`` items are running)."""
    index, _value, length, at_once = item
    spawn = []
    following = index + at_once
    if following < length:
        spawn.append(JobSpec(f"{step['name']}[{following}]", {"kind": "v2", "item": following}))
    return Outcome(state.prev, events, spawn,
                   {"ctx": state.ctx, "item": index, "failed": state.failed},
                   {**action, "item": index})


def _stats(rows: list[dict[str, Any]], total: int) -> dict[str, int]:
    failed = sum(1 for r in rows if (r.get("payload") or {}).get("failed"))
    return {"total": total, "done": len(rows), "succeeded": len(rows) - failed,
            "failed": failed}


def _collect(step: dict[str, Any], run: dict[str, Any], done: list[dict[str, Any]],
             base: dict[str, Any], call: Call) -> Outcome:
    loop = _collection(step, done)
    items: dict[int, dict[str, Any]] = {}
    for row in done:
        payload = row.get("payload") or {}
        if base_step(row["step"]) == step["name"] and "item" in payload \
                and payload.get("ended", True):
            items[int(payload["item"])] = row
    rows = [items[i] for i in sorted(items)]
    stats = _stats(rows, len(loop["items"]))
    result = {"results": [r["result"] for r in rows], "stats": stats}
    events = [Event("loop.done", call.step, {"items": len(rows), **stats})]
    return finish(call.step, step, run, base, result, {}, events, "loop.done",
                  {"items": len(rows)})


# Sub-runs ------------------------------------------------------------------------------------

def _start_sub_run(job: Leased, step: dict[str, Any], run: dict[str, Any],
                   suspended: Suspended, events: list[Event], item: Item | None) -> Outcome:
    """Start the sub-run a ``playbook`` task asks for; a job waits for it to end."""
    wanted = str(suspended.conf.get("path"))
    entry = next((e for e in catalog.entries() if e.compiled is not None and wanted in (
        e.compiled.get("path"), e.name)), None)
    if entry is None or entry.compiled is None:
        raise StepFailed(f"{suspended.task['name']}: no valid workflow at path '{wanted}' in "
                         f"the catalog (see /workflows)", events)
    rounds = int(job.payload.get("round") or 0) + 1
    waiting = f"{job.step.split('#', 1)[0]}#r{rounds}"
    # The same id on every attempt of this job: a retried job finds the run it started.
    child_id = uuid.uuid5(uuid.NAMESPACE_URL, f"harmonic:{run['id']}:{waiting}")
    inputs = {k: v for k, v in suspended.input.items() if k in (
        entry.compiled.get("workload") or {}) or k in (entry.compiled.get("inputs_required")
                                                       or [])}
    try:
        child = admission.start_sub_run(entry.compiled, inputs, run, child_id, (run["id"], waiting))
    except StepError as exc:
        raise StepFailed(f"{suspended.task['name']}: {exc.message}", events) from None
    events.append(Event("call.started", job.step, {"task": suspended.task["name"],
                                                   "kind": "playbook", "run": child.hex[:8],
                                                   "workflow": entry.name}))
    payload: dict[str, Any] = {"kind": "v2", "resume": suspended.state.to_json(),
                               "child": str(child), "round": rounds}
    if item is not None:
        payload["item"] = item[0]
    record: dict[str, Any] = {"ctx": {}}
    if item is not None:
        record.update(item=item[0], ended=False)
    return Outcome(None, events, [JobSpec(waiting, payload, wait={"run": str(child)})], record,
                   {"sub_run": child.hex[:8]})


def _resume(job: Leased, step: dict[str, Any], run: dict[str, Any],
            done: list[dict[str, Any]], base: dict[str, Any], given: frozenset[str],
            call: Call) -> Outcome:
    child_run, child_done = queue.load_run(uuid.UUID(job.payload["child"]))
    if child_run is None:
        raise StepError("the sub-run this step waited for no longer exists")
    child = {**child_run, "done": child_done}
    state = State.from_json(job.payload["resume"])
    item = None
    if "item" in job.payload:
        loop = _collection(step, done)
        index = int(job.payload["item"])
        item = (index, loop["items"][index], len(loop["items"]), int(loop["at_once"]))
    return _pipeline(job, step, run, base, given, call, state, [], item, child)


# Our own step types in a v2 run: a turn, the resource a turn reads ---------------------------

def _ours(job: Leased, step: dict[str, Any], run: dict[str, Any], done: list[dict[str, Any]],
          base: dict[str, Any], call: Call) -> Outcome:
    names = {**base, **run_context.build_context(run, done)}
    if step["type"] == "resource":
        done_call = step_kinds.tool_step(step, names, call, job)
    else:
        done_call = step_kinds.turn_step(step, job, names)
    if not done_call.follow_edges:  # a model round that asked for tools: more jobs follow
        return Outcome(done_call.result, list(done_call.extra_events), list(done_call.spawn),
                       {}, done_call.action)
    return finish(job.step, step, run, base, done_call.result, {},
                  list(done_call.extra_events), "step.exit", done_call.action)

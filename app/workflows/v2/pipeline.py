"""A step's tasks, one after another in one job: ``_prev``, policies, ``set``, jumps.

Each task renders its ``input`` (the step's input, then its own) and its configuration in the
step's names plus the pipeline's own: ``_prev`` (the last task's result), ``_task``,
``_attempt``, ``output`` (the last outcome), ``results`` and every finished task by its name.
It runs (``kinds``), and its outcome ``{status: ok | error, data, error}`` is handed to:

1. its own ``set`` (``set: {extracted: "{{ output }}"}``), then
2. its policy, ``spec.policy.rules``: the first rule whose ``when`` holds (or the ``else``)
   says what to do: ``continue`` (the next task), ``retry`` (this task again, up to
   ``attempts`` in all, waiting ``delay`` seconds, ``linear``/``exponential`` backoff),
   ``jump`` (to the task named ``to``), ``break`` (end the pipeline: the step is done) or
   ``fail`` (the step fails); its ``set`` is applied first. Without a matching rule an ok
   outcome continues and an error fails, as in NoETL.

``set`` keys: ``ctx.<k>`` (and a bare ``<k>``, and ``step.<k>``) write the run's ``ctx``
(kept when the job is recorded, seen by every later job); ``iter.<k>`` the current loop
item's own names. The pipeline's result, the step's, is the last ``_prev``.

A ``playbook`` task suspends the pipeline: the step starts the sub-run, its job ends, and a
job waiting for the sub-run continues the pipeline at that task with the sub-run's outcome
(``State`` is what the waiting job carries).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from app.workflows.queue import Event
from app.workflows.templating import RESULTS_ENV, RenderError, render_value, truthy
from app.workflows.tools import Call, StepError
from app.workflows.v2 import kinds
from app.workflows.v2.scope import outcome, results_of
from app.workflows.v2.validate import then_of

MAX_TASK_RUNS = 1000  # task runs one step may make (a jump that never ends fails the step)
MAX_WAIT = 60.0  # seconds one retry waits at most


@dataclass
class State:
    """Where a pipeline is: what a job that continues it needs."""

    index: int = 0
    prev: Any = None
    results: dict[str, Any] = field(default_factory=dict)
    ctx: dict[str, Any] = field(default_factory=dict)  # what it set in the run's ctx
    iter: dict[str, Any] = field(default_factory=dict)  # what it set in its loop item
    attempts: dict[str, int] = field(default_factory=dict)
    runs: int = 0
    output: dict[str, Any] | None = None
    failed: bool = False  # the last outcome was an error the policy let pass

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> State:
        return cls(**data)


@dataclass
class Suspended:
    """The pipeline waits for a sub-run the ``playbook`` task at ``state.index`` asks for."""

    state: State
    task: dict[str, Any]
    conf: dict[str, Any]
    input: dict[str, Any]


class StepFailed(StepError):
    """The step failed at one of its tasks; ``events`` are the calls made until then."""

    def __init__(self, message: str, events: list[Event]) -> None:
        super().__init__(message)
        self.events = events


def apply_set(values: dict[str, Any], scope: dict[str, Any], state: State) -> None:
    """Render ``set`` in ``scope`` and write each key to its place (see the module doc)."""
    rendered = render_value(values, scope, RESULTS_ENV)
    for key, value in rendered.items():
        where, _, rest = str(key).partition(".")
        if where == "iter" and rest:
            state.iter[rest] = value
        elif where in ("ctx", "step") and rest:
            state.ctx[rest] = value
        else:
            state.ctx[str(key)] = value


def names(scope: dict[str, Any], state: State, step_input: dict[str, Any]) -> dict[str, Any]:
    """``scope`` with what the pipeline has made so far."""
    ctx = {**(scope.get("ctx") or {}), **state.ctx}
    out = {**scope, **state.ctx, **state.results, "ctx": ctx,
           "_prev": state.prev, "results": dict(state.results),
           "output": state.output or {}}
    if "iter" in scope or state.iter:
        out["iter"] = {**(scope.get("iter") or {}), **state.iter}
    out["input"] = step_input
    return out


def _decide(task: dict[str, Any], here: dict[str, Any], error: bool) -> dict[str, Any]:
    """The action the task's policy takes on this outcome (NoETL's defaults without one)."""
    rules = ((task.get("spec") or {}).get("policy") or {}).get("rules") or []
    for rule in rules:
        if "else" in rule or truthy(rule["when"], here, RESULTS_ENV):
            return then_of(rule)
    return {"do": "fail" if error else "continue"}


def _wait(action: dict[str, Any], attempt: int) -> float:
    delay = float(action.get("delay", 1.0))
    backoff = action.get("backoff", "none")
    if backoff == "none":
        return 0.0
    if backoff == "linear":
        delay *= attempt
    elif backoff == "exponential":
        delay *= 2 ** (attempt - 1)
    return min(delay, MAX_WAIT)


def run(tasks: list[dict[str, Any]], step: dict[str, Any], scope: dict[str, Any],
        given: frozenset[str], call: Call, state: State, events: list[Event],
        child: dict[str, Any] | None = None) -> State | Suspended:
    """Run the tasks from ``state.index`` on; the finished state, or Suspended. ``child``: the
    finished sub-run the task at ``state.index`` waited for. StepFailed when the step fails."""
    by_name = {t["name"]: i for i, t in enumerate(tasks)}
    while state.index < len(tasks):
        task = tasks[state.index]
        name, kind = task["name"], task["kind"]
        state.runs += 1
        if state.runs > MAX_TASK_RUNS:
            raise StepFailed(f"{name}: more than {MAX_TASK_RUNS} task runs in one step (a "
                             f"jump that never ends?)", events)
        attempt = state.attempts.get(name, 0) + 1
        here = names(scope, state, {})
        here.update(_task=name, _attempt=attempt)
        started = time.monotonic()
        try:
            data_in = render_value({**(step.get("input") or {}), **(task.get("input") or {})},
                                   here, RESULTS_ENV)
            here = {**here, **data_in, "input": data_in}
            conf = kinds.config(task, here, given)
            if kind == "playbook":
                if child is None:
                    return Suspended(state, task, conf, data_in)
                data, summary = _child_outcome(child, conf), {"run": child["short_id"]}
                child = None
            else:
                # One key per task run, the same on every attempt of this job.
                task_call = Call(run_id=call.run_id, step=call.step, identity=call.identity,
                                 key=f"{call.key}:{name}:{state.runs}")
                data, summary = kinds.run(task, conf, data_in, here, task_call)
            state.output = outcome(data=data, kind=kind, meta={"attempt": attempt})
            error = False
            events.append(Event("call.done", call.step, {
                "task": name, "kind": kind, "attempt": attempt,
                "duration_ms": round((time.monotonic() - started) * 1000, 1), **summary}))
        except (kinds.TaskFailed, RenderError) as exc:
            problem = exc.error if isinstance(exc, kinds.TaskFailed) else {
                "kind": "template", "message": str(exc), "retryable": False}
            data = None
            state.output = outcome(error=problem, kind=kind, meta={"attempt": attempt})
            error = True
            events.append(Event("call.error", call.step, {
                "task": name, "kind": kind, "attempt": attempt, "error": problem["message"],
                "duration_ms": round((time.monotonic() - started) * 1000, 1)}))
        after = {**names(scope, state, {}), "_task": name, "_attempt": attempt,
                 "result": data}
        try:
            if task.get("set"):
                apply_set(task["set"], after, state)
                after = {**names(scope, state, {}), "_task": name, "_attempt": attempt,
                         "result": data}
            action = _decide(task, after, error)
            if action.get("set"):
                apply_set(action["set"], after, state)
        except RenderError as exc:
            raise StepFailed(f"{name}: {exc}", events) from None
        do = action.get("do", "continue")
        if error:
            events[-1].data["then"] = do
        if not error:
            state.prev = data
            state.results[name] = data
        state.failed = error
        if do == "continue":
            state.index += 1
            state.attempts.pop(name, None)
        elif do == "retry":
            if attempt >= int(action.get("attempts", 3)):
                message = state.output.get("error", {}).get("message") if error else "retried"
                raise StepFailed(f"{name}: gave up after {attempt} attempts: {message}", events)
            state.attempts[name] = attempt
            time.sleep(_wait(action, attempt))
        elif do == "jump":
            state.index = by_name[str(action.get("to"))]
        elif do == "break":
            break
        else:
            message = (state.output.get("error") or {}).get("message") if error else \
                "its policy said fail"
            raise StepFailed(f"{name}: {message}", events)
    return state


def _child_outcome(child: dict[str, Any], conf: dict[str, Any]) -> Any:
    """The sub-run's result (its ``return_step``'s, when the task names one), or TaskFailed."""
    if child["status"] != "succeeded":
        raise kinds.TaskFailed({"kind": "playbook", "retryable": False,
                                "message": f"sub-run {child['short_id']} of "
                                           f"{child['workflow']} {child['status']}: "
                                           f"{child.get('error') or ''}".strip()})
    wanted = conf.get("return_step")
    if wanted:
        results = results_of(child.get("done") or [])
        if wanted not in results:
            raise kinds.TaskFailed({"kind": "playbook", "retryable": False,
                                    "message": f"sub-run {child['short_id']} has no result "
                                               f"of step '{wanted}'"})
        return results[wanted]
    return child.get("result")

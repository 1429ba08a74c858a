"""Executing one leased job: build the context, run the step, record the outcome.

The runner never decides *whether* it may run a job (the lease did) and never writes the
outcome unless it still holds the lease (``queue.complete`` checks). Step kinds:

- ``noop``: start/end and plain junctions;
- ``task`` and ``resource``: one tool call (see ``tools``);
- ``turn``: one model round; when the model asks for tools, the round enqueues one job per
  call (``<step>#<round>.<tool>.<n>``, run one after another) and then the next round
  (``<step>#<round+1>``), which sends the tool results back; an answer follows the step's edges;
- ``call``: a registered callable (``calls``).

Everything a step hands back to be recorded (its result, the events, the jobs it spawns, an
error message) passes through ``secrets.redact`` first: a secret's value is never stored.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from app.core.config import app_object
from app.core.identity import act_as
from app.workflows import queue, secrets, settings, step_kinds, tools
from app.workflows.compile import steps_by_name
from app.workflows.queue import Event, JobSpec, Leased
from app.workflows.run_context import build_context, identity_for
from app.workflows.templating import (
    RenderError,
    truthy,
)
from app.workflows.tools import StepError
from app.workflows.v2 import steps as v2_steps

log = logging.getLogger("harmonic.workflows")
log.addFilter(secrets.LogFilter())


class Heartbeat:
    """Keeps a job's lease alive while it runs: one shared thread per process renews every
    registered lease when a third of it has passed (no thread is started per job)."""

    _lock = threading.Lock()
    _active: dict[int, Heartbeat] = {}
    _thread: threading.Thread | None = None
    _pid = 0

    def __init__(self, job: Leased, lease_seconds: float) -> None:
        self.job, self.lease_seconds = job, lease_seconds
        self.lost = False
        self.renewed = time.monotonic()

    def __enter__(self) -> Heartbeat:
        app = app_object()
        cls = type(self)
        with cls._lock:
            cls._active[self.job.id] = self
            if cls._thread is None or not cls._thread.is_alive() or cls._pid != os.getpid():
                cls._pid = os.getpid()
                cls._thread = threading.Thread(target=cls._loop, args=(app,), daemon=True,
                                               name="workflows-heartbeat")
                cls._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        with type(self)._lock:
            type(self)._active.pop(self.job.id, None)

    @classmethod
    def _loop(cls, app: Any) -> None:
        with app.app_context():
            while True:
                time.sleep(0.05)
                with cls._lock:
                    due = [b for b in cls._active.values()
                           if time.monotonic() - b.renewed >= b.lease_seconds / 3]
                for beat in due:
                    try:
                        if queue.heartbeat(beat.job, beat.lease_seconds):
                            beat.renewed = time.monotonic()
                        else:
                            beat.lost = True
                            with cls._lock:
                                cls._active.pop(beat.job.id, None)
                    except Exception:  # a database hiccup: try again next round
                        log.warning("heartbeat for job %s failed", beat.job.id, exc_info=True)


def _execute(job: Leased, run: dict[str, Any], done: list[dict[str, Any]],
             call: tools.Call) -> tuple[step_kinds.Outcome, dict]:
    if run["compiled"].get("dsl") == "v2" and "turn_step" not in job.payload:
        out = v2_steps.execute(job, run, done, call)
        return step_kinds.Outcome(result=out.result, action=out.action, spawn=out.spawn,
                       follow_edges=False, extra_events=out.events, record=out.record,
                       release=True), {}
    ctx = build_context(run, done)
    if run["kind"] == "call":
        return step_kinds.call_step(job, run, call, ctx), {}
    steps = steps_by_name(run["compiled"])
    if "turn_step" in job.payload:
        return step_kinds.model_tool_call(job, steps, ctx, call), {}
    step = steps.get(job.payload.get("base") or job.step)
    if step is None:
        raise StepError(f"step '{job.step}' is not in the compiled workflow")
    if step["type"] == "noop":
        outcome = step_kinds.Outcome(result=None)
    elif step["type"] in ("task", "resource"):
        outcome = step_kinds.tool_step(step, ctx, call, job)
    elif step["type"] == "turn":
        outcome = step_kinds.turn_step(step, job, ctx)
    else:
        raise StepError(f"step '{job.step}' has type {step['type']}, which does not run")
    return outcome, {"step": step, "ctx": ctx}


def _edges(step: dict[str, Any], ctx: dict[str, Any], result: Any,
           steps: dict[str, Any]) -> list[JobSpec]:
    out = []
    for edge in step.get("next") or []:
        if edge.get("when") and not truthy(edge["when"], {**ctx, "result": result}):
            continue
        out.append(JobSpec(edge["step"], {"kind": steps[edge["step"]]["type"]}))
    return out


def _max_attempts_of(compiled: dict[str, Any]) -> dict[str, int]:
    return {s["name"]: s["retries"] + 1 for s in compiled.get("steps") or []
            if s.get("retries") is not None}


def inline(job: Leased) -> queue.Completion | None:
    """The completion of a no-op step (start, end, a junction), to record in its lease.

    Such a step does nothing outside the database, so the transaction that leases it may as
    well complete it: no lease to keep alive, and if the worker dies first the transaction
    rolls back and the job is still queued. None for anything else, or when following its
    edges fails (the ordinary path then runs it and records the failure).
    """
    run, done = job.run, job.done
    if (run is None or done is None or run["kind"] != "workflow"
            or run["compiled"].get("dsl") == "v2"  # its steps record what they set
            or run["status"] in ("failed", "succeeded", "cancelled")
            or job.attempts > job.max_attempts
            or "turn_step" in job.payload):
        return None
    step = steps_by_name(run["compiled"]).get(job.payload.get("base") or job.step)
    if step is None or step["type"] != "noop":
        return None
    outcome = step_kinds.Outcome(result=None)
    try:
        spawn = _next_jobs(run, step, build_context(run, done), outcome)
    except Exception:  # an edge's condition failed: the ordinary path records why
        return None
    return _completion(job, run, outcome, spawn, 0.0)


def _next_jobs(run: dict[str, Any], step: dict[str, Any], ctx: dict[str, Any],
               outcome: step_kinds.Outcome) -> list[JobSpec]:
    """The jobs a finished step starts: those it asked for, then its edges' targets."""
    spawn = list(outcome.spawn)
    if outcome.follow_edges:
        limits = _max_attempts_of(run["compiled"])
        for spec in _edges(step, ctx, outcome.result, steps_by_name(run["compiled"])):
            spec.max_attempts = limits.get(spec.step)
            spawn.append(spec)
    return spawn


def _completion(job: Leased, run: dict[str, Any], outcome: step_kinds.Outcome, spawn: list[JobSpec],
                ms: float) -> queue.Completion:
    then = job.payload.get("then") or []
    if then:
        nxt = then[0]
        spawn.append(JobSpec(nxt["step"], {**nxt["payload"], "then": then[1:]},
                             max_attempts=nxt.get("max_attempts")))
    events = [Event("action_completed", job.step, {**outcome.action, "duration_ms": ms}),
              *outcome.extra_events,
              Event("step_completed", job.step, {"duration_ms": ms,
                                                 "next": [s.step for s in spawn]})]
    return queue.Completion(outcome.result, events, spawn,
                            settings.get_int("WORKFLOWS_MAX_ATTEMPTS"),
                            run["compiled"].get("result_step"), outcome.record,
                            outcome.release)


def _redacted(completion: queue.Completion) -> queue.Completion:
    """The completion with every secret's value replaced, before anything of it is stored."""
    known = secrets.values()
    if not known:
        return completion
    completion.result = secrets.redact(completion.result, known)
    for item in completion.events:
        item.data = secrets.redact(item.data, known)
    for spec in completion.spawn:
        spec.payload = secrets.redact(spec.payload, known)
    return completion


def execute(job: Leased) -> str:
    """Run a leased job to its recorded end; returns done | queued | dead | lost | skipped."""
    run: dict[str, Any] | None
    if job.run is not None and job.done is not None:  # read when it was leased
        run, done = job.run, job.done
    else:
        run, done = queue.load_run(job.run_id)
    if run is None or run["status"] in ("failed", "succeeded", "cancelled"):
        queue.discard(job, "the run is already finished")
        return "skipped"
    lease_seconds = settings.get_float("WORKFLOWS_LEASE_SECONDS")
    retry_seconds = settings.get_float("WORKFLOWS_RETRY_SECONDS")
    if job.attempts > job.max_attempts:  # its leases kept expiring: a worker keeps dying on it
        return queue.fail(job, f"gave up after {job.max_attempts} attempts (leases expired)",
                          [Event("action_error", job.step, {})], True, retry_seconds)
    identity = identity_for(run)
    act_as(identity)  # what the step makes is recorded as made by the run's starter
    call = tools.Call(run_id=run["id"], step=job.step, identity=identity,
                      key=f"{run['id']}:{job.step}")
    started = time.monotonic()
    with Heartbeat(job, lease_seconds) as beat:
        try:
            outcome, info = _execute(job, run, done, call)
            spawn = (_next_jobs(run, info["step"], info["ctx"], outcome) if info
                     else list(outcome.spawn))
        except (StepError, RenderError) as exc:
            message = exc.message if isinstance(exc, StepError) else str(exc)
            permanent = exc.permanent if isinstance(exc, StepError) else True
            # What the step did before it failed (a v2 pipeline's calls) is recorded with it.
            made = [Event(e.type, e.step, secrets.redact(e.data))
                    for e in getattr(exc, "events", [])]
            return queue.fail(job, secrets.redact(message),
                              [*made, Event("action_error", job.step, {})], permanent,
                              retry_seconds)
        except Exception as exc:  # a bug or an unexpected library error: retry, then dead
            log.exception("step %s of run %s failed", job.step, job.run_id)
            return queue.fail(job, f"internal error: {type(exc).__name__}",
                              [Event("action_error", job.step, {})], False, retry_seconds)
    if beat.lost:
        return "lost"
    ms = round((time.monotonic() - started) * 1000, 1)
    ok = queue.complete(job, _redacted(_completion(job, run, outcome, spawn, ms)))
    return "done" if ok else "lost"


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"

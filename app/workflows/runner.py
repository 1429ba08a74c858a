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

import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from app.core.identity import Identity, act_as
from app.workflows import calls, gateway, queue, secrets, settings, tools
from app.workflows.compile import steps_by_name
from app.workflows.queue import Event, JobSpec, Leased
from app.workflows.templating import (
    RenderError,
    bind_sql,
    render_text,
    render_url,
    render_value,
    truthy,
)
from app.workflows.tools import StepError

log = logging.getLogger("harmonic.workflows")
log.addFilter(secrets.LogFilter())


@dataclass
class Outcome:
    result: Any
    action: dict[str, Any] = field(default_factory=dict)  # summary for action_completed
    spawn: list[JobSpec] = field(default_factory=list)
    follow_edges: bool = True
    extra_events: list[Event] = field(default_factory=list)
    record: dict[str, Any] | None = None  # added to the job's payload (noetl.io/v2: its ctx)
    release: bool = False  # the run's waiting joins may be queued once this is recorded


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
        import os

        from app.core.config import app_object

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


def identity_for(run: dict[str, Any]) -> Identity | None:
    if run.get("user_id") is None:
        return None
    # The kind, token and grant of whoever started it: a run never acts as more than they may.
    return Identity(user_id=run["user_id"], scopes=("read", "write"), via="workflow",
                    kind=run.get("caller_kind") or "person", token_id=run.get("made_by_token_id"),
                    grant_id=run.get("made_by_grant_id"))


def build_context(run: dict[str, Any], done: list[dict[str, Any]]) -> dict[str, Any]:
    compiled = run["compiled"]
    workload = {**(compiled.get("workload") or {}), **(run.get("inputs") or {})}
    declarations = compiled.get("declarations") or {}
    ctx: dict[str, Any] = {"workload": workload, "input": workload, "steps": {},
                           "resources": {}, "turns": {},
                           "run": {"id": str(run["id"]), "short_id": run["short_id"]},
                           "secrets": secrets.Secrets(), "mcp": declarations,
                           "prompts": declarations.get("prompts") or {}}
    steps = steps_by_name(compiled) if compiled.get("steps") else {}
    for row in done:
        result, payload = row["result"], row["payload"] or {}
        ctx["steps"][row["step"]] = result
        base = payload.get("base") or row["step"]
        step = steps.get(base) or {}
        if step.get("type") == "resource":
            ctx["resources"][step["resource"]] = result
        if step.get("type") == "turn" and isinstance(result, dict) and "answer" in result:
            ctx["steps"][base] = result
            ctx["turns"][step["turn"]["name"]] = result
    ctx["context"] = dict(ctx)  # NoETL's spelling: context.input, context.steps, ...
    return ctx


def _as_text(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("markdown"), str):
        return value["markdown"]
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


# Steps -----------------------------------------------------------------------------------------

def prepare_spec(tool: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    """The tool's spec rendered for this call. The ``sql`` of postgres and duckdb tools is not
    rendered: each of its templates becomes a bound parameter (``params``)."""
    spec = dict(tool["spec"])
    sql = spec.pop("sql", None) if tool["type"] in tools.BOUND_SQL else None
    # In the spec's own order, so the first failing template is the one written first.
    rendered: dict[str, Any] = {key: render_url(value, ctx)
                if key == "url" and tool["type"] == "http" and isinstance(value, str)
                else render_value(value, ctx) for key, value in spec.items()}
    if sql is not None:
        statement, bound = bind_sql(str(sql), ctx, tools.BOUND_SQL[tool["type"]])
        rendered["sql"] = statement
        rendered["params"] = {**(rendered.get("params") or {}), **bound}
    return rendered


def tool_step(step: dict[str, Any], ctx: dict[str, Any], call: tools.Call,
               job: Leased) -> Outcome:
    args = render_value(step.get("args") or {}, ctx)
    spec = prepare_spec(step["tool"], {**ctx, "args": args})
    out = tools.run(step["tool"], spec, call)
    if out.is_error:
        raise StepError(f"{step['tool']['name']}: {out.text[:500]}")
    extra = []
    if step.get("save"):
        extra.append(Event("result_saved", job.step, {"save": step["save"], "result": out.value}))
    return Outcome(result=out.value, action={"tool": step["tool"]["name"],
                                             "type": step["tool"]["type"], **out.summary},
                   extra_events=extra)


def _tool_schema(tool: dict[str, Any]) -> dict[str, Any]:
    if tool.get("input_schema"):
        return tool["input_schema"]
    if tool["type"] == "mcp" and "arguments" not in tool["spec"]:
        from app.workflows import mcp_bridge

        schema = mcp_bridge.tool_schema(str(tool["spec"].get("tool")))
        if schema:
            return schema
    return {"type": "object", "additionalProperties": True}


def _first_messages(turn: dict[str, Any], ctx: dict[str, Any]) -> list[dict[str, Any]]:
    messages = []
    if turn.get("system"):
        messages.append({"role": "system", "content": render_text(turn["system"], ctx)})
    parts: list[str] = []

    def flush() -> None:
        if parts:
            messages.append({"role": "user", "content": "\n\n".join(parts)})
            parts.clear()

    for part in turn["user"]:
        if "text" in part:
            parts.append(render_text(part["text"], ctx))
        elif "resource" in part:
            parts.append(f"Resource {part['resource']}:\n\n"
                         f"{_as_text(ctx['resources'].get(part['resource']))}")
        elif "prompt" in part and isinstance(part["template"], list):
            # Structured messages keep their roles, in place among the user's parts.
            args = render_value(part.get("with") or {}, ctx)
            flush()
            for item in part["template"]:
                messages.append({"role": item["role"],
                                 "content": render_text(item["content"], {**ctx, "args": args})})
        elif "prompt" in part:
            args = render_value(part.get("with") or {}, ctx)
            parts.append(render_text(part["template"], {**ctx, "args": args}))
    flush()
    return messages


def turn_step(step: dict[str, Any], job: Leased, ctx: dict[str, Any]) -> Outcome:
    turn = step["turn"]
    round_no = int(job.payload.get("round") or 1)
    if round_no == 1:
        messages = _first_messages(turn, ctx)
    else:
        messages = list(job.payload.get("messages") or [])
        for item in job.payload.get("calls") or []:
            done = ctx["steps"].get(item["step"]) or {}
            messages.append({"role": "tool", "tool_call_id": item["id"],
                             "content": str(done.get("text") or item.get("error") or "")})
    offered = [{"type": "function",
                "function": {"name": t["name"],
                             "description": t.get("description") or f"{t['type']} tool",
                             "parameters": _tool_schema(t)}} for t in turn["tools"]]
    model = turn["model"]
    message = gateway.complete(model["model"], messages, offered, model.get("params") or {})
    asked = message.get("tool_calls") or []
    action = {"model": model["name"], "round": round_no}
    if not asked:
        answer = message.get("content") or ""
        result = {"answer": answer, "model": model["name"], "rounds": round_no}
        extra = []
        if turn.get("save"):
            extra.append(Event("result_saved", job.step,
                               {"turn": turn["name"], "save": turn["save"], "answer": answer}))
        return Outcome(result=result, action={**action, "answer_chars": len(answer)},
                       extra_events=extra)
    if round_no >= turn["max_rounds"]:
        raise StepError(f"turn {turn['name']}: still asking for tools after "
                        f"{turn['max_rounds']} rounds (max_rounds)")
    allowed = {t["name"] for t in turn["tools"]}
    chain: list[JobSpec] = []
    pending = []
    for n, item in enumerate(asked):
        function = item.get("function") or {}
        name = str(function.get("name") or "")
        call_id = str(item.get("id") or f"call_{n}")
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = None
        if name not in allowed or not isinstance(args, dict):
            why = (f"tool '{name}' is not allowed here (allowed: {', '.join(sorted(allowed))})"
                   if name not in allowed else "arguments were not a JSON object")
            pending.append({"id": call_id, "step": "", "error": why})
            continue
        job_step = f"{step['name']}#{round_no}.{name}.{n}"
        pending.append({"id": call_id, "step": job_step})
        chain.append(JobSpec(job_step, {"turn_step": step["name"], "tool": name,
                                        "args": args, "call_id": call_id}))
    assistant = {"role": "assistant", "content": message.get("content"),
                 "tool_calls": asked}
    chain.append(JobSpec(f"{step['name']}#{round_no + 1}",
                         {"base": step["name"], "round": round_no + 1,
                          "messages": messages + [assistant], "calls": pending}))
    first = chain[0]
    first.payload["then"] = [{"step": c.step, "payload": c.payload} for c in chain[1:]]
    return Outcome(result={"round": round_no, "tool_calls": [
        {"id": p["id"], "name": (a.get("function") or {}).get("name")}
        for p, a in zip(pending, asked, strict=True)]},
        action={**action, "tool_calls": len(asked)}, spawn=[first], follow_edges=False)


def _model_tool_call(job: Leased, steps: dict[str, Any], ctx: dict[str, Any],
                     call: tools.Call) -> Outcome:
    turn = steps[job.payload["turn_step"]]["turn"]
    tool = next(t for t in turn["tools"] if t["name"] == job.payload["tool"])
    args = job.payload.get("args") or {}
    if tool["type"] == "mcp" and "arguments" not in tool["spec"]:
        spec = {**tool["spec"], "arguments": args}
    else:
        spec = prepare_spec(tool, {**ctx, "args": args})
    try:
        out = tools.run(tool, spec, call)
        value = {"text": out.text, "is_error": out.is_error, "value": out.value}
    except StepError as exc:
        if not exc.permanent:
            raise
        # The model asked for something that cannot work: tell it, let it answer anyway.
        value = {"text": f"error: {exc.message}", "is_error": True, "value": None}
        out = tools.Output(value=None, text=value["text"], is_error=True)
    return Outcome(result=value, action={"tool": tool["name"], "type": tool["type"],
                                         "is_error": value["is_error"], **out.summary},
                   follow_edges=False)


def _call_step(job: Leased, run: dict[str, Any], call: tools.Call,
               ctx: dict[str, Any]) -> Outcome:
    name = job.payload.get("function")
    fn = calls.CALLABLES.get(str(name))
    if fn is None:
        raise StepError(f"unknown callable '{name}' (registered: "
                        f"{', '.join(sorted(calls.CALLABLES)) or 'none'})")
    done = list(ctx["steps"].values())
    previous = done[-1] if done else None
    result = fn(calls.CallContext(run_id=run["id"], step=job.step, key=call.key,
                                  attempt=job.attempts, identity=call.identity,
                                  previous=previous), job.payload.get("args") or {})
    return Outcome(result=json.loads(json.dumps(result, default=str)),
                   action={"function": name}, follow_edges=False)


def _execute(job: Leased, run: dict[str, Any], done: list[dict[str, Any]],
             call: tools.Call) -> tuple[Outcome, dict]:
    if run["compiled"].get("dsl") == "v2" and "turn_step" not in job.payload:
        from app.workflows.v2 import steps as v2_steps

        out = v2_steps.execute(job, run, done, call)
        return Outcome(result=out.result, action=out.action, spawn=out.spawn,
                       follow_edges=False, extra_events=out.events, record=out.record,
                       release=True), {}
    ctx = build_context(run, done)
    if run["kind"] == "call":
        return _call_step(job, run, call, ctx), {}
    steps = steps_by_name(run["compiled"])
    if "turn_step" in job.payload:
        return _model_tool_call(job, steps, ctx, call), {}
    step = steps.get(job.payload.get("base") or job.step)
    if step is None:
        raise StepError(f"step '{job.step}' is not in the compiled workflow")
    if step["type"] == "noop":
        outcome = Outcome(result=None)
    elif step["type"] in ("task", "resource"):
        outcome = tool_step(step, ctx, call, job)
    elif step["type"] == "turn":
        outcome = turn_step(step, job, ctx)
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
    outcome = Outcome(result=None)
    try:
        spawn = _next_jobs(run, step, build_context(run, done), outcome)
    except Exception:  # an edge's condition failed: the ordinary path records why
        return None
    return _completion(job, run, outcome, spawn, 0.0)


def _next_jobs(run: dict[str, Any], step: dict[str, Any], ctx: dict[str, Any],
               outcome: Outcome) -> list[JobSpec]:
    """The jobs a finished step starts: those it asked for, then its edges' targets."""
    spawn = list(outcome.spawn)
    if outcome.follow_edges:
        limits = _max_attempts_of(run["compiled"])
        for spec in _edges(step, ctx, outcome.result, steps_by_name(run["compiled"])):
            spec.max_attempts = limits.get(spec.step)
            spawn.append(spec)
    return spawn


def _completion(job: Leased, run: dict[str, Any], outcome: Outcome, spawn: list[JobSpec],
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
    import os
    import socket

    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"

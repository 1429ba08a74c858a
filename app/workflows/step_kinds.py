"""The step kinds both DSLs run the same way: a tool call (``tool_step``, for ``task`` and
``resource`` steps), a model round (``turn_step``) and a tool the model asked for
(``model_tool_call``), a registered callable (``call_step``), each answering an ``Outcome``.
Below the runner, so that a ``noetl.io/v2`` run's own turns and resources
(``app.workflows.v2.steps``) run them without importing it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from app.workflows import calls, gateway, mcp_bridge, tools
from app.workflows.queue import Event, JobSpec, Leased
from app.workflows.templating import (
    bind_sql,
    render_text,
    render_url,
    render_value,
)
from app.workflows.tools import StepError


@dataclass
class Outcome:
    result: Any
    action: dict[str, Any] = field(default_factory=dict)  # summary for action_completed
    spawn: list[JobSpec] = field(default_factory=list)
    follow_edges: bool = True
    extra_events: list[Event] = field(default_factory=list)
    record: dict[str, Any] | None = None  # added to the job's payload (noetl.io/v2: its ctx)
    release: bool = False  # the run's waiting joins may be queued once this is recorded


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


def model_tool_call(job: Leased, steps: dict[str, Any], ctx: dict[str, Any],
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


def call_step(job: Leased, run: dict[str, Any], call: tools.Call,
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

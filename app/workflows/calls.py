"""Enqueue any registered callable as durable steps: the queue without the YAML.

Feature packages register a function by name and enqueue runs of it; a worker leases each step,
calls the function in an app context and records the result. Steps of one run execute in order.
Playbook replays use this: register ``@callable_step("playbooks.replay_step")`` and enqueue one
step per recipe step with ``enqueue_calls``; each step gets ``ctx.key`` (stable across retries)
to make its effect idempotent.

Names, not import paths, travel through the database: a row can only ever name a function some
module in the worker registered on purpose.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.identity import Identity
from app.workflows import queue, settings

CALLABLES: dict[str, Callable[..., Any]] = {}


@dataclass
class CallContext:
    run_id: uuid.UUID
    step: str
    key: str  # idempotency key of this step: the same on every attempt
    attempt: int
    identity: Identity | None  # the run's user, or None
    previous: Any  # the result of the step before this one in the run


@dataclass
class CallStep:
    name: str  # unique within the run
    function: str  # a registered callable
    args: dict[str, Any]
    max_attempts: int | None = None
    delay: float = 0.0  # seconds from now before it may run (the first step's counts)


def callable_step(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(ctx: CallContext, args: dict) -> JSON-able`` under ``name``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in CALLABLES and CALLABLES[name] is not fn:
            raise ValueError(f"callable step {name!r} is already registered")
        CALLABLES[name] = fn
        return fn

    return register


def enqueue_calls(title: str, steps: list[CallStep], user_id: uuid.UUID | None = None,
                  inputs: dict[str, Any] | None = None, by: Identity | None = None) -> uuid.UUID:
    """Start a run whose steps call the named functions one after another."""
    if not steps:
        raise ValueError("a run needs at least one step")
    names = [s.name for s in steps]
    if len(set(names)) != len(names):
        raise ValueError("step names must be unique within a run")
    compiled = {"name": title, "path": "", "entry": names[0], "result_step": names[-1],
                "steps": [{"name": s.name, "type": "call", "function": s.function,
                           "hidden": False, "next": [], "desc": ""} for s in steps]}
    specs = [queue.JobSpec(s.name, {"function": s.function, "args": s.args},
                           max_attempts=s.max_attempts, delay=s.delay) for s in steps]
    first = specs[0]
    first.payload["then"] = [{"step": s.step, "payload": s.payload,
                              "max_attempts": s.max_attempts} for s in specs[1:]]
    return queue.create_run(kind="call", workflow=title, path="", inputs=inputs or {},
                            compiled=compiled, user_id=user_id, first=[first], by=by,
                            max_attempts=settings.get_int("WORKFLOWS_MAX_ATTEMPTS"))

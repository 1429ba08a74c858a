"""Callable steps for the fault tests, loaded by ``bin/worker --import tests.workflows.probe``.

``probe.record`` appends one line per execution (run, step, attempt, pid, start, end) to a file
opened with O_APPEND, so every execution is recorded by the executor itself, independently of
the queue's own bookkeeping.
"""

from __future__ import annotations

import os
import time
from typing import Any

from app.workflows.calls import CallContext, callable_step


@callable_step("probe.record")
def record(ctx: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    started = time.time()
    if args.get("mark"):  # tells a test the step is running now
        open(args["mark"], "w").close()  # noqa: SIM115
    if args.get("sleep"):
        time.sleep(float(args["sleep"]))
    line = f"{ctx.run_id} {ctx.step} {ctx.attempt} {os.getpid()} {started:.6f} {time.time():.6f}\n"
    fd = os.open(args["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return {"step": ctx.step, "pid": os.getpid()}

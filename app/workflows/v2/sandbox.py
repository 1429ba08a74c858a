"""Inline python code of a ``noetl.io/v2`` task, run in a separate, limited process.

A document's ``code`` runs only when the operator turns it on (``WORKFLOWS_PYTHON_INLINE``);
otherwise the run is refused before it starts and the task fails, each saying how to turn it
on. When on, each task runs in a fresh ``python -I`` process (``sandbox_child``) in an empty
folder of its own, with an environment that holds nothing of the server's (no database URL,
no secret), a wall-clock and CPU limit (``WORKFLOWS_PYTHON_SECONDS``), an address-space limit
(``WORKFLOWS_PYTHON_MEMORY_MB``), and an audit hook that refuses connections and name lookups
beyond ``WORKFLOWS_HTTP_ALLOW``, new processes, signals, ctypes, and writing outside its
folder. Its input and the context it reads go in as JSON; its result comes back as JSON.

This contains accidents and keeps a task's reach to what the operator allowed; it is not a
boundary against code written to escape a Python interpreter (that is what the operator's
setting is for: workflow files are code the operator installed).
"""

from __future__ import annotations

import json
import os
import secrets as random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.workflows import settings
from app.workflows.tools import StepError

CHILD = Path(__file__).with_name("sandbox_child.py")
NETPOLICY = Path(__file__).resolve().parents[2] / "core" / "netpolicy.py"
RESULT_BYTES = 8 * 1024 * 1024  # the largest result a task may hand back


class CodeError(StepError):
    """The task's code raised (its exception and line), or ran out of time or memory."""

    def __init__(self, message: str, exception: str, line: int | None = None) -> None:
        super().__init__(message)
        self.exception, self.line = exception, line


def run(code: str, data: dict[str, Any], context: dict[str, Any],
        libs: Any = None) -> tuple[Any, str]:
    """(the code's result, what it printed); CodeError for the code's own failure, StepError
    when inline code is off."""
    if not settings.inline_python():
        raise StepError(f"inline python code is off on this server: "
                        f"{settings.INLINE_PYTHON_HOW}")
    seconds = max(1, settings.get_int("WORKFLOWS_PYTHON_SECONDS"))
    nonce = random.token_hex(8)
    request = {"nonce": nonce, "code": code, "input": data, "context": context, "libs": libs,
               "allow": settings.get_list("WORKFLOWS_HTTP_ALLOW"),
               "memory_mb": max(64, settings.get_int("WORKFLOWS_PYTHON_MEMORY_MB")),
               "seconds": seconds, "netpolicy": str(NETPOLICY)}
    environment = {"PATH": os.defpath, "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
                   "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/nonexistent"}
    with tempfile.TemporaryDirectory(prefix="harmonic-task-") as folder:
        environment["TMPDIR"] = folder
        try:
            done = subprocess.run(  # noqa: S603 - our own interpreter and script
                [sys.executable, "-I", str(CHILD)], input=json.dumps(request, default=str),
                capture_output=True, text=True, timeout=seconds + 1, cwd=folder,
                env=environment)
        except subprocess.TimeoutExpired:
            raise CodeError(f"python: stopped after {seconds} s (WORKFLOWS_PYTHON_SECONDS)",
                            "TimeoutError") from None
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(nonce)), None)
    if line is None:
        if done.returncode < 0 or done.returncode in (137, 152):
            raise CodeError(f"python: stopped by its limits ({seconds} s of CPU, "
                            f"WORKFLOWS_PYTHON_MEMORY_MB)", "ResourceLimit")
        raise CodeError(f"python: the task's process ended without a result (exit "
                        f"{done.returncode}): {done.stderr[-300:].strip()}", "ProcessError")
    if len(line) > RESULT_BYTES:
        raise CodeError("python: the result is larger than 8 MB", "ResultTooLarge")
    answer = json.loads(line[len(nonce):])
    printed = str(answer.get("printed") or "")
    if not answer.get("ok"):
        error = answer.get("error") or {}
        where = f" (line {error['line']})" if error.get("line") else ""
        raise CodeError(f"python: {error.get('exception')}{where}: {error.get('message')}",
                        str(error.get("exception")), error.get("line"))
    return answer.get("result"), printed

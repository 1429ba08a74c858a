"""Work every worker does every few seconds besides leasing jobs (a due-items sweep).

A feature registers ``every(name, seconds, fn)``; each worker loop (``bin/worker`` and the
in-process thread) calls ``run_due`` between leases and sleeps no longer than until the next
one is due. Any number of workers run the same function: it must be safe to run concurrently
(claim each item with a conditional UPDATE that one transaction wins), so there is no leader
to elect and no single worker to lose.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("harmonic.workflows")


@dataclass
class Periodic:
    name: str
    seconds: Callable[[], float]  # read each time: settings may change under tests
    fn: Callable[[], Any]


TASKS: dict[str, Periodic] = {}


def every(name: str, seconds: Callable[[], float], fn: Callable[[], Any]) -> None:
    """Run ``fn()`` in every worker about every ``seconds()`` seconds (registered once by
    name; registering the name again replaces it)."""
    TASKS[name] = Periodic(name, seconds, fn)


@dataclass
class Clock:
    """One worker's record of when each task last ran."""

    last: dict[str, float] = field(default_factory=dict)

    def run_due(self) -> None:
        now = time.monotonic()
        for task in list(TASKS.values()):
            if now - self.last.get(task.name, float("-inf")) < max(task.seconds(), 0.05):
                continue
            self.last[task.name] = now
            try:
                task.fn()
            except Exception:  # the database went away for a moment: the next round retries
                log.exception("periodic task %s failed", task.name)

    def next_in(self, longest: float) -> float:
        """Seconds until the next task is due, at most ``longest``."""
        now = time.monotonic()
        waits = [self.last.get(t.name, float("-inf")) + max(t.seconds(), 0.05) - now
                 for t in TASKS.values()]
        return max(0.0, min([longest, *waits]))

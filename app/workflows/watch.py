"""Telling this process about events written by other processes (bin/worker on another host).

Every queue transaction records its run's change in the change-event outbox, and this process's
listeners hear of it after the commit (``app.core.changes``); MCP HTTP sessions read the outbox
wherever the run is executed. A run executed elsewhere is not heard by this process's listeners
(stdio sessions, listen streams), so when someone reads a running run's events resource we poll
that run's newest sequence number until it finishes, and fire ``on_new`` listeners.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from flask import Flask, current_app
from sqlalchemy import func, select

from app.services.listeners import Listeners
from app.workflows import queue
from app.workflows.engine import reading

POLL_SECONDS = 0.5
_lock = threading.Lock()
_watched: dict[uuid.UUID, int] = {}
_listeners: Listeners[Callable[[uuid.UUID], None]] = Listeners()
_state: dict[str, Any] = {"thread": None}
on_new = _listeners.add


def follow(run_id: uuid.UUID) -> None:
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    with _lock:
        _watched.setdefault(run_id, -1)
        thread = _state["thread"]
        if thread is None or not thread.is_alive():
            thread = threading.Thread(target=_poll, args=(app,), daemon=True,
                                      name="workflows-watch")
            _state["thread"] = thread
            thread.start()


def _poll(app: Flask) -> None:
    stop = threading.Event()
    with app.app_context():
        while True:
            with _lock:
                ids = dict(_watched)
            if not ids:
                with _lock:
                    _state["thread"] = None
                return
            for run_id, seen in ids.items():
                try:
                    with reading() as conn:
                        last = conn.execute(select(func.max(queue.EVENTS.c.seq))
                                            .where(queue.EVENTS.c.run_id == run_id)
                                            ).scalar() or 0
                        status = conn.execute(select(queue.RUNS.c.status)
                                              .where(queue.RUNS.c.id == run_id)).scalar()
                except Exception:
                    continue
                if seen >= 0 and last > seen:
                    for listener in list(_listeners):
                        listener(run_id)
                with _lock:
                    if status in ("succeeded", "failed", "cancelled", None):
                        _watched.pop(run_id, None)
                    else:
                        _watched[run_id] = last
            stop.wait(POLL_SECONDS)

"""One JSON line per design-model call: time, method, duration, outcome, error code."""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

_lock = threading.Lock()
_log = logging.getLogger(__name__)


def record(path: str | None, method: str | None, ms: float, code: int | None,
           via: str) -> None:
    """Append a line to ``path`` (no-op when unset); a failing log never fails the call."""
    if not path:
        return
    line = json.dumps({"t": datetime.now(UTC).isoformat(timespec="milliseconds"),
                       "method": method, "ms": round(ms, 3), "ok": code is None,
                       "code": code, "via": via}, separators=(",", ":"))
    try:
        with _lock:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            # O_APPEND keeps whole lines intact when several processes share one file.
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
    except OSError as exc:
        _log.warning("design-model call log %s not writable: %s", path, exc)

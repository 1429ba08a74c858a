"""The capture folder: ``capture.jsonl``, ``playbook.md`` and ``summary.yaml``.

Every entry is one JSON line ``{t, method | tool, params, result | error, ms}`` written with a
single unbuffered ``write`` under an exclusive lock (a thread lock for this process, ``flock``
for other processes), so concurrent writers never interleave. Once ``append`` returns, the line
is in the operating system's hands: a crash of the process (kill -9 included) loses at most the
line being written. A kill can land inside a write that spans pages and leave part of that
line (the kernel stops copying at a page): readers skip such a torn tail, and the next writer
(or ``finish``) cuts it off, so every line that was ever whole stays whole and readable.

Only a crash of the machine (power loss, kernel panic) can lose lines the disk has not yet
been told to keep (``fsync``); when that happens is the operator's choice
(``PLAYBOOK_CAPTURE_FSYNC``):

- ``interval`` (the default): a flusher thread of each process fsyncs the files it appended to
  off the request path, once per ``FSYNC_INTERVAL`` (0.1 s) at most — a machine crash loses at
  most the lines of about that last tenth of a second. An fsync costs several milliseconds on
  ordinary disks, far more than the proxied call it would be added to, and one fsync covers
  every line appended since the previous one (group commit).
- ``always``: every line is fsynced before ``append`` returns, under the lock.

Either way, ``finish`` (stopping a teach session, which recipe generation does first) fsyncs
the capture before reading it back, so a stopped session's capture is always on disk.

Where the lines live is the capture store (``PLAYBOOK_CAPTURE_STORE``): ``folder`` (the
default, above: the seed's layout, one POSIX folder every host must share) or ``database``
(``app.playbooks.capture_db``: append-only rows, for hosts that share a database but no disk).
Either way ``export`` gives the same ``capture.jsonl`` bytes and ``read`` the same entries;
``summary.yaml``, ``playbook.md`` and ``recipe.json`` stay files in the session folder of the
host that writes them (they are derived from the capture and written again when needed).
"""

from __future__ import annotations

import atexit
import fcntl
import json
import logging
import os
import platform
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from app.core.config import app_config, app_version, in_app
from app.playbooks import capture_db

CAPTURE = "capture.jsonl"
RECIPE = "recipe.json"
SUMMARY = "summary.yaml"
README = "playbook.md"
FORMAT_VERSION = 1
FSYNC_MODES = ("interval", "always")
FSYNC_INTERVAL = 0.1  # seconds between group fsyncs in "interval" mode
log = logging.getLogger(__name__)

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _thread_lock(path: Path) -> threading.Lock:
    key = str(path)
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def encode(entry: dict[str, Any]) -> bytes:
    # ensure_ascii keeps every line free of raw newlines or separators a reader could split on.
    return (json.dumps(entry, separators=(",", ":"), ensure_ascii=True, default=str) + "\n"
            ).encode("ascii")


def _repair_tail(fd: int) -> None:
    """Cut a torn last line (no trailing newline) left by a writer killed mid-line."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    last = os.pread(fd, 1, size - 1)
    if last == b"\n":
        return
    start = max(0, size - 1024 * 1024)
    chunk = os.pread(fd, size - start, start)
    cut = chunk.rfind(b"\n")
    os.ftruncate(fd, start + cut + 1 if cut >= 0 else start)


STORES = ("folder", "database")


def store() -> str:
    """The capture store in use: ``database`` when PLAYBOOK_CAPTURE_STORE says so (in an app
    context), else ``folder``."""
    if not in_app():
        return "folder"
    value = app_config().get("PLAYBOOK_CAPTURE_STORE") or os.environ.get(
        "PLAYBOOK_CAPTURE_STORE") or "folder"
    return "database" if str(value).strip().lower() == "database" else "folder"


def append(folder: Path, entry: dict[str, Any], fsync: str = "always") -> None:
    """Append one entry to ``folder/capture.jsonl``: locked, whole-line, written to the OS.

    ``fsync="always"`` fsyncs the line before returning; ``"interval"`` leaves that to this
    process's flusher thread (see the module docstring). On the database store: one row,
    committed before this returns."""
    path = folder / CAPTURE
    data = encode(entry)
    if store() == "database":
        capture_db.append(folder.name, data)
        return
    with _locked(path) as fd:
        _repair_tail(fd)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if fsync != "interval":
            os.fsync(fd)
    if fsync == "interval":
        _flusher.mark(path)  # after the write: a flush taken before it would not cover it


@contextmanager
def _locked(path: Path) -> Iterator[int]:
    """An appending descriptor of ``path``, held under the thread lock and ``flock``."""
    with _thread_lock(path):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # closing releases the flock


def _whole(path: Path) -> None:
    """Cut a torn tail now rather than at the next append (a stopped capture gets none)."""
    if store() == "database":
        return  # a row is written whole or not at all
    try:
        with open(path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) == b"\n":
                return
    except OSError:  # gone, or empty (a seek before the start)
        return
    with _locked(path) as fd:
        _repair_tail(fd)


def sync(folder: Path) -> None:
    """Fsync ``folder/capture.jsonl`` now, whichever process appended to it (OSError if not)."""
    if store() == "database":
        return  # committed row by row
    path = folder / CAPTURE
    _flusher.forget(path)
    _fsync_path(path)


def _fsync_path(path: Path) -> None:
    # fsync flushes the file, not one descriptor's writes: a fresh read-only descriptor covers
    # every line any process appended (and works in a folder that has become read-only). The
    # writer's own descriptor cannot be kept for this: it carries the writer's flock.
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return  # nothing to keep: the capture (or its folder) is gone
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Flusher:
    """This process's group commit: fsyncs the capture files appended to since the last round."""

    def __init__(self) -> None:
        self._dirty: set[Path] = set()
        self._wake = threading.Condition()
        self._pid = 0  # a forked child (gunicorn worker) starts its own thread

    def mark(self, path: Path) -> None:
        with self._wake:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="capture-fsync", daemon=True).start()
            self._dirty.add(path)
            self._wake.notify()

    def forget(self, path: Path) -> None:
        with self._wake:
            self._dirty.discard(path)

    def flush(self) -> None:
        with self._wake:
            paths, self._dirty = self._dirty, set()
        for path in paths:
            try:
                _fsync_path(path)
            except OSError:
                log.exception("capture %s could not be fsynced", path)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._dirty:
                    self._wake.wait()
            time.sleep(FSYNC_INTERVAL)  # lines arriving meanwhile share the next fsync
            self.flush()


_flusher = _Flusher()
atexit.register(_flusher.flush)  # a clean exit keeps nothing waiting for the next round


def check_writable(folder: Path) -> None:
    """Raise ``OSError`` unless an entry could be appended to ``folder/capture.jsonl`` now
    (the database store: a failed INSERT raises at ``append`` instead)."""
    if store() == "database":
        return
    os.close(os.open(folder / CAPTURE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))


def _raw_lines(folder: Path) -> Iterator[bytes]:
    """The whole lines of the capture (a torn tail left by a crash is not one)."""
    if store() == "database":
        for line in capture_db.lines(folder.name):
            yield line.encode("ascii")
        return
    path = folder / CAPTURE
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                return
            yield raw


def read(folder: Path) -> list[dict[str, Any]]:
    """Every complete entry; a torn or unparsable line is skipped, never fatal."""
    entries = []
    for raw in _raw_lines(folder):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            entries.append(value)
    return entries


def export(folder: Path) -> bytes:
    """``capture.jsonl`` as it is kept: every whole line, byte for byte, from either store."""
    return b"".join(_raw_lines(folder))


def last_written(folder: Path) -> float | None:
    """Unix time of the newest line (None when nothing was recorded, or no file)."""
    if store() == "database":
        return capture_db.last_written(folder.name)
    try:
        return (folder / CAPTURE).stat().st_mtime
    except OSError:
        return None


def write_atomic(path: Path, text: str) -> None:
    """``text`` as ``path``'s whole content, or the file as it was: a fsynced temporary file
    renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _previous_upstream_version(folder: Path) -> str | None:
    try:
        data = yaml.safe_load((folder / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    versions = data.get("versions") if isinstance(data, dict) else None
    value = versions.get("upstream") if isinstance(versions, dict) else None
    return str(value) if value else None


def start(folder: Path, name: str, session_id: str, upstream: str, owner_label: str,
          upstream_version: str | None = None) -> None:
    if store() == "folder":
        (folder / CAPTURE).touch(mode=0o600)
    created = datetime.now(UTC).replace(microsecond=0).isoformat()
    write_summary(folder, {"session": session_id, "name": name, "created": created,
                           "owner": owner_label, "upstream": upstream, "entries": 0},
                  upstream_version or "")
    write_atomic(folder / README, f"# Playbook: {name}\n\nCreated: {created}\n\n"
                                   "Recording… (stop teaching to see the summary)\n")


def write_summary(folder: Path, fields: dict[str, Any],
                  upstream_version: str | None = None) -> None:
    """summary.yaml; ``versions`` holds this server's version and the upstream's (seed 000
    §6.9), the latter kept from the summary written at the start when not given again."""
    versions = {"harmonic": app_version(), "python": platform.python_version()}
    if upstream_version is None:
        upstream_version = _previous_upstream_version(folder)
    if upstream_version:
        versions["upstream"] = upstream_version
    data = {"formatVersion": FORMAT_VERSION, "versions": versions, **fields}
    write_atomic(folder / SUMMARY, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def finish(folder: Path, name: str, session_id: str, upstream: str, owner_label: str,
           created: str) -> int:
    """Fsync the capture, write the final summary.yaml and playbook.md; returns the entries."""
    _whole(folder / CAPTURE)  # a writer killed mid-line cannot leave its torn tail behind
    sync(folder)
    entries = read(folder)
    methods = Counter(entry_name(e) for e in entries)
    errors = sum(1 for e in entries if "error" in e)
    stopped = datetime.now(UTC).replace(microsecond=0).isoformat()
    write_summary(folder, {"session": session_id, "name": name, "created": created,
                           "stopped": stopped, "owner": owner_label, "upstream": upstream,
                           "entries": len(entries), "errors": errors,
                           "methods": dict(methods)})
    lines = [f"# Playbook: {name}", "", f"Created: {created}  ", f"Stopped: {stopped}  ",
             f"Upstream: {upstream}  ", f"Entries: {len(entries)} ({errors} failed)", "",
             "## Steps", ""]
    for i, entry in enumerate(entries, 1):
        outcome = "error: " + str((entry.get("error") or {}).get("message", "")) \
            if "error" in entry else "ok"
        lines.append(f"{i}. `{entry_name(entry)}` — {outcome} ({entry.get('ms', 0)} ms)")
    write_atomic(folder / README, "\n".join(lines) + "\n")
    return len(entries)


def entry_name(entry: dict[str, Any]) -> str:
    """``method`` for upstream JSON-RPC entries, ``mcp:<tool>`` for MCP tool calls."""
    if entry.get("tool"):
        return f"mcp:{entry['tool']}"
    return str(entry.get("method") or "?")

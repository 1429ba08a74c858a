"""Teach sessions: who is recording, into which folder, and recording one entry.

A session belongs to an *owner key* derived from the caller's identity — ``token:<id>`` for an
API token (and a stateless MCP 2026-07-28 client), ``user:<id>`` for a browser session,
``mcp:<session id>`` for an MCP 2025-11-25 session (each ``bin/mcp-server`` process has its own)
and ``local`` for a token-less loopback operator — so any number of owners record at once and
never into each other's capture, and one owner's start or stop never touches another's session.
State lives in the ``playbooks`` table, so every process sees it.

A session whose client went away (a stdio agent that exited mid-teach) would otherwise stay
"teaching" for ever: after ``PLAYBOOK_TEACH_IDLE`` seconds without a recorded call (the capture
file's modification time, or the start) it is stopped, checked lazily on the teach paths at
most every few seconds, and its owner can stop it from its playbook page at any time.

A capture folder that cannot be written (read-only, full, gone) never loses a call silently:
the proxy refuses to forward while its owner teaches into such a folder (the upstream is not
touched, so the capture still tells the whole story), and starting or stopping fails with 503
and the reason. Only if the folder breaks *during* a forwarded call does the caller still get
the upstream's answer (its effect happened) while the missing line is logged as an error. MCP
tool calls on Harmonic itself are recorded after they ran, so they are not refused: a line that
cannot be written is logged, and the call is still in the MCP audit (agent activity).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
import weakref
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, select

from app.core import changes
from app.core.identity import Identity
from app.db import read, rows_of, writing
from app.extensions import db
from app.models.base import utcnow
from app.models.playbooks import Playbook
from app.playbooks import capture, names, settings, upstream
from app.playbooks.redact import redactor
from app.services.errors import DomainError

LOCAL = "local"
log = logging.getLogger(__name__)


class CaptureUnwritable(DomainError):
    """The capture folder cannot be written; nothing was recorded or forwarded."""

    http_status = 503
    kind = "capture_unwritable"
    error_code = "CAPTURE_UNWRITABLE"  # data.code of the proxy's JSON-RPC error


def _unwritable(playbook_or_path: Playbook | Path, exc: OSError) -> CaptureUnwritable:
    where = playbook_or_path if isinstance(playbook_or_path, Path) else folder(playbook_or_path)
    return CaptureUnwritable(f"the capture folder {where.name} cannot be written "
                             f"({exc.strerror or exc}); fix it or ask the operator, then retry")


def owner_key(identity: Identity | None, mcp_session_id: str | None = None) -> str:
    """The owner key of a caller; MCP sessions own their own teach session."""
    if mcp_session_id:  # each stdio process has its own id too (app.mcp.stdio)
        return f"mcp:{mcp_session_id}"[:120]
    if identity is None:
        return LOCAL
    if identity.token_id is not None:
        return f"token:{identity.token_id}"
    return f"user:{identity.user_id}"


def recording_keys(identity: Identity | None, mcp_session_id: str | None = None) -> list[str]:
    """Whose active session records a call: the caller's own first, then its user's.

    The user-level fallback lets a person press "start teach" on /playbooks in the browser and
    have their agent's calls (any of their tokens or MCP sessions without a session of their
    own) land in that capture.
    """
    keys = [owner_key(identity, mcp_session_id)]
    if mcp_session_id and identity is not None:
        keys.append(owner_key(identity))
    if identity is not None:
        keys.append(f"user:{identity.user_id}")
    return list(dict.fromkeys(keys))


def folder(playbook: Playbook) -> Path:
    return _session_folder(playbook.session_id, settings.current())


def _session_folder(session_id: str, conf: settings.Settings) -> Path:
    return names.playbooks_root(conf.data_dir) / session_id


# Built once: building the statement cost more than running it, and this runs on every MCP
# tool call and every proxied call. The proxy needs only the session id, so its statement
# selects two columns and loads no ORM object.
_TEACHING_WHERE = (Playbook.owner.in_(bindparam("keys", expanding=True)),
                   Playbook.teaching.is_(True))
_TEACHING = select(Playbook).where(*_TEACHING_WHERE).order_by(Playbook.created_at.desc())
_TEACHING_SESSION = select(Playbook.owner, Playbook.session_id).where(
    *_TEACHING_WHERE).order_by(Playbook.created_at.desc())


def _keys(owners: list[str] | str) -> list[str]:
    return [owners] if isinstance(owners, str) else list(owners)


def _first(keys: list[str], found: Sequence[Any]) -> Any:
    # One indexed query for all keys; the first key that teaches wins, then the newest of its
    # sessions.
    for key in keys:
        for row in found:
            if row.owner == key:
                return row
    return None


def active(owners: list[str] | str) -> Playbook | None:
    expire_idle()
    keys = _keys(owners)
    return _first(keys, db.session.scalars(_TEACHING, {"keys": keys}).all())


def _active_session(owners: list[str] | str) -> str | None:
    """The session id of ``active(owners)``, without loading the playbook."""
    expire_idle()
    keys = _keys(owners)
    found = read(rows_of(_TEACHING_SESSION, {"keys": keys}))
    row = _first(keys, found)
    return row.session_id if row is not None else None


@writing()
def start(owner: str, user_id: uuid.UUID | None, raw_name: str | None
          ) -> tuple[Playbook, str | None]:
    """Begin teaching; an owner already teaching has that session stopped first."""
    name = names.clean_name(raw_name)
    expire_idle(force=True)
    previous = active(owner)
    stopped = None
    if previous is not None:
        stop_playbook(previous)
        stopped = previous.session_id
    conf = settings.current()
    path = Path(conf.data_dir) / "playbooks"  # named in the error when even this fails
    try:
        path = names.new_session_dir(conf.data_dir, name)
        playbook = Playbook(name=name, session_id=path.name, owner=owner, user_id=user_id,
                            upstream=upstream.label(conf)[:300], teaching=True, entries=0)
        playbook.assign_ids()
        capture.start(path, name, path.name, playbook.upstream, owner,
                      upstream_version(conf))
    except OSError as exc:
        db.session.rollback()
        raise _unwritable(path, exc) from exc
    db.session.add(playbook)
    _changed(playbook)
    db.session.commit()
    return playbook, stopped


_ALL_TEACHING = select(Playbook).where(Playbook.teaching.is_(True))
# When the next sweep may run, and the limit it was planned with: a changed limit sweeps now.
_expiry: dict[str, float | None] = {"next": 0.0, "limit": None}


def last_activity(playbook: Playbook) -> float:
    """Unix time of the session's last recorded call (its start when it recorded none)."""
    started = playbook.created_at.replace(tzinfo=playbook.created_at.tzinfo or UTC).timestamp()
    return max(started, capture.last_written(folder(playbook)) or started)


def expire_idle(force: bool = False) -> list[Playbook]:
    """Stop the teach sessions idle for longer than PLAYBOOK_TEACH_IDLE; returns them.

    Runs at most once per tenth of the limit (and at least every minute) per process, so the
    per-call teach lookups stay one indexed query; a changed limit takes effect at once."""
    limit = settings.current().teach_idle
    now = time.time()
    if limit is None:
        return []
    planned = _expiry["next"]
    if not force and limit == _expiry["limit"] and planned is not None and now < planned:
        return []
    _expiry.update(next=now + min(limit / 10, 60.0), limit=limit)
    stopped = []
    for playbook in db.session.scalars(_ALL_TEACHING).all():
        if now - last_activity(playbook) > limit:
            try:
                stop_playbook(playbook)
            except CaptureUnwritable:
                log.warning("idle teach session %s could not be stopped", playbook.session_id)
                continue
            log.info("teach session %s stopped after %.0f s idle", playbook.session_id, limit)
            stopped.append(playbook)
    return stopped


def upstream_version(conf: settings.Settings) -> str | None:
    """The upstream's version when it offers one (``ping_server``, RevitMCP's meta method),
    for summary.yaml; asked briefly, never recorded, and None when it does not answer."""
    quick = dataclasses.replace(conf, timeout=min(conf.timeout, 2.0),
                                job_timeout=min(conf.job_timeout, 2.0))
    answer = upstream.call({"jsonrpc": "2.0", "id": "version", "method": "ping_server",
                            "params": {}}, quick)
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return None
    value = result.get("version") or result.get("serverVersion")
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return None
    server = result.get("server")
    return (f"{server} {value}" if isinstance(server, str) else str(value))[:120]


@writing()
def stop_playbook(playbook: Playbook) -> int:
    created = playbook.created_at.replace(microsecond=0).isoformat()
    try:
        count = capture.finish(folder(playbook), playbook.name, playbook.session_id,
                               playbook.upstream, playbook.owner, created)
    except OSError as exc:  # still teaching: stopping again once the folder is fixed works
        raise _unwritable(playbook, exc) from exc
    playbook.teaching = False
    playbook.entries = count
    playbook.stopped_at = utcnow()
    _changed(playbook)
    db.session.commit()
    return count


def _changed(playbook: Playbook) -> None:
    """Teach state changed (started, stopped): its page and its capture, for subscribers."""
    changes.record(f"/playbooks/{playbook.short_id}", f"playbook://{playbook.short_id}/capture")


def stop(owner: str) -> tuple[Playbook | None, int]:
    playbook = active(owner)
    if playbook is None:
        return None, 0
    return playbook, stop_playbook(playbook)


def entry(started: float, fields: dict[str, Any]) -> dict[str, Any]:
    """A normalized capture entry: t (unix ms), the fields, ms (duration)."""
    return {"t": int(time.time() * 1000), **fields,
            "ms": round((time.perf_counter() - started) * 1000, 3)}


class _NobodyTeaches:
    """Per process and database: that no teach session at all is open, so a tool call's
    capture check (``record``, on every MCP tools/call) runs no query while nobody teaches.

    What a query saw is believed for at most ``SECONDS``, and forgotten at once when a
    playbook changes: a start records a change event (``_changed``), which reaches this
    process's listeners right after its commit here, and from other processes through the
    change feed where it runs (``app.core.feed``). A start elsewhere is therefore seen by
    every process within ``SECONDS`` at worst. A generation counter keeps a query that ran
    across a change from vouching for the time after it."""

    SECONDS = 0.5

    def __init__(self) -> None:
        self.until: dict[str, float] = {}
        self.generation = 0
        self._listening = False

    def known(self, database: str) -> bool:
        return time.monotonic() < self.until.get(database, 0.0)

    def saw_nobody(self, database: str, generation: int, at: float) -> None:
        if generation == self.generation:
            self.until[database] = at + self.SECONDS

    def forget(self, uri: str) -> None:
        if uri.startswith(("harmonic://page/playbooks/", "playbook://")):
            self.generation += 1
            self.until.clear()

    def listen(self) -> None:
        if not self._listening:
            changes.listen(self.forget)
            self._listening = True


_nobody = _NobodyTeaches()
_ANY_TEACHING = select(Playbook.id).where(Playbook.teaching.is_(True)).limit(1)


def nobody_teaches() -> bool:
    """True when no teach session is open anywhere (``_NobodyTeaches``: ``record`` would record
    nothing); False when one may be, and then ``active`` says whose."""
    _nobody.listen()
    database = _database_key()
    if _nobody.known(database):
        return True
    generation, at = _nobody.generation, time.monotonic()
    if db.session.execute(_ANY_TEACHING).first() is not None:
        return False
    _nobody.saw_nobody(database, generation, at)
    return True


# Each engine's URL as text, made once: rendering it again on every tool call cost more than
# the rest of the "nobody teaches" check. (Weak keys: an app's engine goes with its app.)
_DATABASE_KEYS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _database_key() -> str:
    engine = db.engine
    key = _DATABASE_KEYS.get(engine)
    if key is None:
        key = _DATABASE_KEYS[engine] = str(engine.url)
    return key


def record(owners: list[str] | str, line: dict[str, Any]) -> bool:
    """Append ``line`` (redacted) to the owner's active capture; False when not teaching."""
    if nobody_teaches():
        return False
    playbook = active(owners)
    if playbook is None:
        return False
    conf = settings.current()
    _append(_session_folder(playbook.session_id, conf), line, conf)
    return True


def _append(path: Path, line: dict[str, Any], conf: settings.Settings) -> None:
    capture.append(path, redactor(conf.redact_patterns).value(line), fsync=conf.capture_fsync)


def rpc_entry(payload: dict[str, Any], response: dict[str, Any], started: float
              ) -> dict[str, Any]:
    fields: dict[str, Any] = {"method": payload.get("method"),
                              "params": payload.get("params", {})}
    if "error" in response:
        fields["error"] = response["error"]
    else:
        fields["result"] = response.get("result")
    return entry(started, fields)


def forward(payload: dict[str, Any], owners: list[str] | str) -> dict[str, Any]:
    """The recording proxy: call the upstream, record the exchange if the owner teaches.

    While the owner teaches into a folder that cannot be written, the call is refused (a
    JSON-RPC error, code ``CAPTURE_UNWRITABLE``) without reaching the upstream."""
    started = time.perf_counter()
    conf = settings.current()  # once per call: it reads the app config and the environment
    session = _active_session(owners) if isinstance(payload.get("method"), str) else None
    path = _session_folder(session, conf) if session is not None else None
    if path is not None:
        try:
            capture.check_writable(path)
        except OSError as exc:
            refusal = _unwritable(path, exc)
            return upstream.error_response(payload.get("id"), f"Not forwarded: {refusal.message}",
                                           code=refusal.error_code)
    response = upstream.call(payload, conf)
    if path is not None:
        try:
            _append(path, rpc_entry(payload, response, started), conf)
        except OSError:
            log.exception("teach session %s: a forwarded %s call could not be recorded",
                          session, payload.get("method"))
    return response

"""One JSON-RPC call to the upstream: the embedded design-model server or an allow-listed URL.

``PLAYBOOK_UPSTREAM`` unset: the request runs in-process through the design-model dispatcher.
Set: it must pass the allow-list (``PLAYBOOK_UPSTREAMS``, loopback by default) and is POSTed
with a timeout; redirects are never followed and no cookies are kept. A plain-http upstream
(the usual loopback one) is called over keep-alive connections of the standard library's client
(``_Plain``): per call it costs less CPU than the pooled httpx client, and the proxy's hot path
makes many calls. HTTPS upstreams and job polling use the shared httpx client.

When the upstream only queues the call (``{queued: true, jobId}``, as RevitMcpServer does), the
job is polled at ``/job/<id>`` until it ends, so callers and the capture see the real outcome
rather than a receipt. Every failure — refused URL, a request that is not JSON (NaN), timeout,
connection error, HTTP error, bad JSON, a job that fails or never ends — becomes a JSON-RPC
error object with code -32000 and a message that says what happened.

The upstream's catalog (``rpc.discover``, an OpenRPC document) is the embedded server's own, or
a remote upstream's answer, asked once per process through ``call`` and cached by URL (an
unreachable upstream is asked again after ``RETRY_SECONDS``). ``previewable`` reads it: a write
may be previewed (sent with ``dryRun: true``, writing nothing) on the embedded server, and on a
remote one for the methods ``PLAYBOOK_DRYRUN_METHODS`` lists or whose params its catalog lists
``dryRun`` for — the upstream's own declaration.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from app.core import jsonrpc, outbound
from app.design_model import handle_rpc, openrpc_document
from app.design_model import rpc_url as checked_url
from app.playbooks.settings import Settings

APP_ERROR = jsonrpc.SERVER_ERROR_MAX  # -32000, with data.code saying what failed
TERMINAL_OK = {"SUCCEEDED", "COMPLETED", "DONE", "OK"}
TERMINAL_FAILED = {"FAILED", "DEAD", "TIMEOUT", "CANCELLED", "ERROR"}


def error_response(ident: Any, message: str, **data: Any) -> dict[str, Any]:
    return jsonrpc.error_response(ident, APP_ERROR, message, data or None)


def label(conf: Settings) -> str:
    return conf.upstream or "embedded design-model server"


def rpc_url(conf: Settings) -> str:
    """The allow-listed /rpc URL of the configured upstream (ValueError when refused)."""
    try:
        return checked_url(conf.upstream or "", conf.allowed, "PLAYBOOK_UPSTREAM",
                           "PLAYBOOK_UPSTREAMS")
    except jsonrpc.RpcError as exc:
        raise ValueError(exc.message) from exc


def call(payload: dict[str, Any], conf: Settings,
         should_stop: Callable[[], bool] | None = None,
         headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The upstream's JSON-RPC response object to ``payload`` (never raises for upstream faults)."""
    ident = payload.get("id")
    if not conf.upstream:
        return handle_rpc(payload, via="playbook")
    try:
        url = rpc_url(conf)
    except ValueError as exc:
        return error_response(ident, f"Upstream refused: {exc}", code="UPSTREAM_NOT_ALLOWED")
    try:
        # As httpx encodes JSON: NaN and Infinity are not JSON, so they are never sent.
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode("utf-8")
    except ValueError as exc:
        return error_response(ident, f"Not forwarded: the request cannot be sent as JSON "
                                     f"({exc})", code="INVALID_JSON")
    send = _PLAIN.post if url.startswith("http://") else _post_httpx
    try:
        status, content = send(url, data, conf.timeout, headers)
    except (httpx.TimeoutException, TimeoutError):
        return error_response(ident, f"Upstream {url} did not answer within {conf.timeout:g} s",
                              code="UPSTREAM_TIMEOUT")
    except (httpx.HTTPError, http.client.HTTPException, OSError) as exc:
        return error_response(ident, f"Upstream {url} unreachable: {type(exc).__name__}",
                              code="UPSTREAM_DOWN")
    if status != 200:
        return error_response(ident, f"Upstream {url} answered HTTP {status}",
                              code="UPSTREAM_HTTP", status=status)
    try:
        body = json.loads(content)
    except ValueError:
        return error_response(ident, f"Upstream {url} answered with invalid JSON",
                              code="UPSTREAM_BAD_JSON")
    if not isinstance(body, dict):
        return error_response(ident, f"Upstream {url} answered with a non-object",
                              code="UPSTREAM_BAD_JSON")
    result = body.get("result")
    if isinstance(result, dict) and result.get("queued") and result.get("jobId") is not None:
        return follow_job(url, ident, str(result["jobId"]), conf, should_stop)
    return body


def _post_httpx(url: str, data: bytes, timeout: float, headers: dict[str, str] | None
                ) -> tuple[int, bytes]:
    response = outbound.fetch("POST", url, content=data, seconds=timeout, headers={
        **(headers or {}), "Content-Type": "application/json"})
    return response.status_code, response.content


class _Plain:
    """Keep-alive connections to plain-http upstreams, shared by the threads of a process.

    Never follows a redirect (the standard library's client does not) and keeps no cookies.
    An idle connection the upstream has closed meanwhile is noticed before it is reused (its
    socket reads as ready: end of stream), as httpx's pool does; a forked process starts with
    none, since a connection must not be shared across processes.
    """

    MAX_IDLE = 20  # per upstream; more are closed after use

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def post(self, url: str, data: bytes, timeout: float, headers: dict[str, str] | None
             ) -> tuple[int, bytes]:
        parts = urlsplit(url)
        key = (parts.hostname or "", parts.port or 80)
        conn = self._take(key) or http.client.HTTPConnection(*key, timeout=timeout)
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        try:
            # Bytes: the head and the body leave in one segment.
            conn.request("POST", parts.path or "/", body=data, headers={
                **(headers or {}), "Content-Type": "application/json"})
            response = conn.getresponse()
            content = response.read()
        except BaseException:
            conn.close()
            raise
        if response.will_close:
            conn.close()
        else:
            self._give(key, conn)
        return response.status, content

    def _take(self, key: tuple[str, int]) -> http.client.HTTPConnection | None:
        with self._lock:
            if self._pid != os.getpid():
                self._idle, self._pid = {}, os.getpid()
            idle = self._idle.get(key) or []
            while idle:
                conn = idle.pop()
                if conn.sock is not None and not _readable(conn.sock):
                    return conn
                conn.close()
        return None

    def _give(self, key: tuple[str, int], conn: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < self.MAX_IDLE and self._pid == os.getpid():
                idle.append(conn)
                return
        conn.close()


def _readable(sock: Any) -> bool:
    # poll, not select: a busy process may hold descriptors above select's limit of 1024.
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


_PLAIN = _Plain()


def _job_outcome(row: dict[str, Any]) -> tuple[str, Any]:
    state = str(row.get("state") or row.get("status") or "").upper()
    value = row.get("result_json", row.get("result"))
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, dict) and value.get("jsonrpc") == "2.0":
        value = value.get("result", value.get("error"))
    return state, value


def follow_job(rpc: str, ident: Any, job_id: str, conf: Settings,
               should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Poll ``<base>/job/<id>`` until the job ends or ``job_timeout`` passes."""
    base = rpc[: -len("/rpc")] if rpc.endswith("/rpc") else rpc
    # The id comes from the upstream's answer: one path segment, so it cannot pick the path.
    url = f"{base}/job/{quote(job_id, safe='')}"
    deadline = time.monotonic() + conf.job_timeout
    delay = 0.02
    while True:
        try:
            response = outbound.fetch("GET", url, seconds=conf.timeout)
            row = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            row = None
        if isinstance(row, dict):
            state, value = _job_outcome(row)
            if state in TERMINAL_OK:
                return {"jsonrpc": "2.0", "id": ident, "result": value}
            if state in TERMINAL_FAILED:
                message = str(row.get("error_msg") or row.get("error") or f"job {state}")
                return error_response(ident, f"Upstream job {job_id} {state}: {message}",
                                      code=str(row.get("error_code") or state), jobId=job_id,
                                      state=state)
        if time.monotonic() >= deadline:
            return error_response(ident, f"Upstream job {job_id} did not finish within "
                                         f"{conf.job_timeout:g} s", code="JOB_TIMEOUT",
                                  jobId=job_id)
        if should_stop is not None and should_stop():
            return error_response(ident, f"Stopped waiting for upstream job {job_id}",
                                  code="CANCELLED", jobId=job_id)
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


# ------------------------------------------------------------------ the upstream's catalog

DISCOVER = "rpc.discover"
RETRY_SECONDS = 60.0
_catalog_lock = threading.Lock()
# upstream URL → (document or None when it has none, monotonic time, final?)
_remote: dict[str, tuple[dict[str, Any] | None, float, bool]] = {}


def catalog(conf: Settings, fetch: bool = True) -> dict[str, Any] | None:
    """The configured upstream's OpenRPC document, or None when it has none (or, with
    ``fetch`` false, when a remote one has not been asked yet)."""
    if not conf.upstream:
        return openrpc_document()
    url = conf.upstream
    with _catalog_lock:
        cached = _remote.get(url)
    if cached is not None and (cached[2] or time.monotonic() - cached[1] < RETRY_SECONDS):
        return cached[0]
    if not fetch:
        return None
    response = call({"jsonrpc": "2.0", "id": "catalog", "method": DISCOVER}, conf)
    result = response.get("result")
    error = response.get("error") if isinstance(response.get("error"), dict) else None
    document = result if isinstance(result, dict) and isinstance(
        result.get("methods"), list) else None
    # An answer (a document, or the upstream's own error) is final; a transport failure of
    # ours (data.code UPSTREAM_*) is not.
    transient = error is not None and str((error.get("data") or {}).get("code", "")).startswith(
        "UPSTREAM")
    with _catalog_lock:
        _remote[url] = (document, time.monotonic(), not transient)
    return document


def previewable(method: str, conf: Settings) -> bool:
    """May a write of ``method`` be sent with ``dryRun: true`` and nothing be written?"""
    if not conf.upstream or method in conf.dryrun_methods:
        return True
    document = catalog(conf)
    for entry in document.get("methods", []) if document is not None else []:
        if isinstance(entry, dict) and entry.get("name") == method:
            params = entry.get("params")
            return isinstance(params, list) and any(
                isinstance(p, dict) and p.get("name") == "dryRun" for p in params)
    return False

"""One JSON-RPC call to the upstream: the embedded design-model server or an allow-listed URL.

``PLAYBOOK_UPSTREAM`` unset: the request runs in-process through the design-model dispatcher.
Set: it must pass the allow-list (``PLAYBOOK_UPSTREAMS``, loopback by default) and is POSTed
with a timeout; redirects are never followed. When the upstream only queues the call
(``{queued: true, jobId}``, as RevitMcpServer does), the job is polled at ``/job/<id>`` until it
ends, so callers and the capture see the real outcome rather than a receipt. Every failure —
refused URL, timeout, connection error, HTTP error, bad JSON, a job that fails or never ends —
becomes a JSON-RPC error object with code -32000 and a message that says what happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

from app.playbooks.settings import Settings
from app.services import outbound

APP_ERROR = -32000
TERMINAL_OK = {"SUCCEEDED", "COMPLETED", "DONE", "OK"}
TERMINAL_FAILED = {"FAILED", "DEAD", "TIMEOUT", "CANCELLED", "ERROR"}


def error_response(ident: Any, message: str, **data: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": APP_ERROR, "message": message}
    if data:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": ident, "error": error}


def label(conf: Settings) -> str:
    return conf.upstream or "embedded design-model server"


def rpc_url(conf: Settings) -> str:
    """The allow-listed /rpc URL of the configured upstream (ValueError when refused)."""
    from app.design_model.protocol import RpcError
    from app.design_model.upstream import rpc_url as checked_url

    try:
        return checked_url(conf.upstream or "", conf.allowed, "PLAYBOOK_UPSTREAM")
    except RpcError as exc:
        raise ValueError(exc.message) from exc


def call(payload: dict[str, Any], conf: Settings,
         should_stop: Callable[[], bool] | None = None,
         headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The upstream's JSON-RPC response object to ``payload`` (never raises for upstream faults)."""
    ident = payload.get("id")
    if not conf.upstream:
        from app.design_model import rpc

        return rpc.handle(payload, via="playbook")
    try:
        url = rpc_url(conf)
    except ValueError as exc:
        return error_response(ident, f"Upstream refused: {exc}", code="UPSTREAM_NOT_ALLOWED")
    try:
        response = outbound.client().post(url, json=payload, timeout=conf.timeout,
                                          headers=headers)
    except httpx.TimeoutException:
        return error_response(ident, f"Upstream {url} did not answer within {conf.timeout:g} s",
                              code="UPSTREAM_TIMEOUT")
    except httpx.HTTPError as exc:
        return error_response(ident, f"Upstream {url} unreachable: {type(exc).__name__}",
                              code="UPSTREAM_DOWN")
    if response.status_code != 200:
        return error_response(ident, f"Upstream {url} answered HTTP {response.status_code}",
                              code="UPSTREAM_HTTP", status=response.status_code)
    try:
        body = response.json()
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


def _job_outcome(row: dict[str, Any]) -> tuple[str, Any]:
    state = str(row.get("state") or row.get("status") or "").upper()
    value = row.get("result_json", row.get("result"))
    if isinstance(value, str):
        import json

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
            response = outbound.client().get(url, timeout=conf.timeout)
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

"""The JSON-RPC 2.0 dispatcher shared by bin/model-server, /design-model/rpc and in-process use.

``handle(payload)`` takes one request object and returns its response object; it must run in
an app context. ``handle_body(bytes)`` is the HTTP form: parse errors, batches, notifications.
Plain code rather than jsonrpcserver: the error messages and ``data.param`` are ours to shape,
and it costs a few µs per call instead of ~160 µs.

Transactions: a call that wrote commits before it answers; a call that failed after writing
rolls back. A read-only call leaves the session alone, so an in-process caller's own pending
work is untouched by reads (a write commits the shared session, as a request would).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm.exc import StaleDataError

from app.design_model import calllog, rebar, revit_methods, rhino_methods, settings
from app.design_model.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Params,
    RpcError,
    app_error,
)
from app.design_model.registry import EFFECTS, METHODS, Ctx
from app.extensions import db

# Importing the method modules fills METHODS; keep the names referenced for linters.
_MODULES = (revit_methods, rebar, rhino_methods)
_log = logging.getLogger(__name__)


def _error(ident: Any, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": error.as_error()}


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _call(method: str, params: dict[str, Any]) -> dict[str, Any]:
    conf = settings.current()
    ctx = Ctx(model=conf.model, session=db.session, allowed_upstreams=conf.allowed_upstreams,
              upstream_timeout=conf.upstream_timeout)
    try:
        result = METHODS[method](ctx, Params(params))
        if ctx.wrote:
            db.session.commit()
        return result
    except RpcError:
        if ctx.wrote:
            db.session.rollback()
        raise
    except StaleDataError as exc:
        db.session.rollback()
        raise app_error("CONFLICT", "Another call changed the same object; retry") from exc
    except IntegrityError as exc:
        db.session.rollback()
        raise app_error("CONFLICT", "A concurrent call created the same id; retry") from exc
    except OperationalError as exc:
        db.session.rollback()
        _log.warning("design-model database error in %s: %s", method, exc)
        raise app_error("DATABASE_BUSY", "The database is busy or unavailable; retry") from exc
    except SQLAlchemyError as exc:
        db.session.rollback()
        _log.warning("design-model database error in %s: %s", method, exc)
        raise app_error("DATABASE_ERROR", "The database refused the change") from exc


def handle(payload: Any, via: str = "inproc", can_write: bool = True) -> dict[str, Any]:
    """One JSON-RPC request in, its response out (also for notifications).

    ``can_write=False`` (a read-only token) allows what the method's declared effect says
    reads, and dry runs (``dryRun: true``) of the rest.
    """
    started = time.perf_counter()
    ident = payload.get("id") if isinstance(payload, dict) else None
    method_name = None
    try:
        if not isinstance(payload, dict):
            raise RpcError(INVALID_REQUEST, "Invalid Request: expected a JSON object")
        if not _valid_id(ident):
            ident = None
            raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string, number or "
                                            "null")
        if payload.get("jsonrpc") != "2.0":
            raise RpcError(INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"")
        method_name = payload.get("method")
        if not isinstance(method_name, str) or not method_name:
            method_name = None
            raise RpcError(INVALID_REQUEST, "Invalid Request: method must be a non-empty string")
        params = payload.get("params", {})
        if params is None:
            params = {}
        if isinstance(params, list):
            raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object (named "
                                           "parameters)", {"param": "params"})
        if not isinstance(params, dict):
            raise RpcError(INVALID_REQUEST, "Invalid Request: params must be an object")
        if method_name not in METHODS:
            raise RpcError(METHOD_NOT_FOUND, f"Unknown method: {method_name}")
        if not can_write and EFFECTS[method_name].writes and params.get("dryRun") is not True:
            raise app_error("FORBIDDEN", f"{method_name} changes the model and this token "
                                         "lacks the 'write' scope (dryRun: true is allowed)")
        response = {"jsonrpc": "2.0", "id": ident, "result": _call(method_name, params)}
        code = None
    except RpcError as exc:
        response, code = _error(ident, exc), exc.code
    except Exception:  # a bug must still answer in JSON-RPC, never as a 500
        _log.exception("design-model method %s failed", method_name)
        db.session.rollback()
        response = _error(ident, RpcError(INTERNAL_ERROR, "Internal error"))
        code = INTERNAL_ERROR
    calllog.record(settings.current().log_path, method_name,
                   (time.perf_counter() - started) * 1000, code, via)
    return response


def handle_body(body: bytes, via: str = "http", can_write: bool = True) -> str:
    """The HTTP body of the answer to ``body``: '' when it held only notifications."""
    try:
        payload = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        calllog.record(settings.current().log_path, None, 0.0, PARSE_ERROR, via)
        return json.dumps(_error(None, RpcError(PARSE_ERROR, f"Parse error: {exc}")))
    if isinstance(payload, list):
        if not payload:
            return json.dumps(_error(None, RpcError(INVALID_REQUEST,
                                                    "Invalid Request: empty batch")))
        answers = [(item, handle(item, via, can_write)) for item in payload]
        out = [resp for item, resp in answers if not _is_notification(item)]
        return json.dumps(out) if out else ""
    response = handle(payload, via, can_write)
    return "" if _is_notification(payload) else json.dumps(response)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _is_notification(item: Any) -> bool:
    return isinstance(item, dict) and "id" not in item and isinstance(item.get("method"), str) \
        and item.get("jsonrpc") == "2.0"

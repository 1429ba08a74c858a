"""The design-model server's JSON-RPC dispatch, shared by bin/model-server, /design-model/rpc
and in-process use, built on ``jsonrpcserver``.

``handle(payload)`` takes one request object and returns its response object (also for a
notification, for in-process callers); it must run in an app context. ``handle_body(bytes)`` is
the HTTP form: parse errors, batches and notifications, framed by ``app.core.jsonrpc``.

The framing is the core's rather than jsonrpcserver's: its jsonschema validator answers a whole
batch with one -32600 when one item is bad, refuses any member it does not know, and costs more
than the call itself (see bench/jsonrpc_dispatch.py). So every request is checked by
``app.core.jsonrpc.check_request`` (and its params by ``check_text``: a NUL character is
-32602 naming the param on both databases) and then handed to
``jsonrpcserver.dispatch_to_response`` with its validator off; jsonrpcserver looks the method
up, binds the named params and passes the call's context (``_Call``) first. Methods answer
``Success`` or ``Error``, never raise, so no exception text reaches the wire. Seed 001's
messages are kept: an unknown method is "Unknown method: X", followed by the method names
(``_Table.__missing__``; also in ``data.methods``), and positional params are -32602 with
``data.param``. Before a method runs, its params are checked against its declaration
(``validate``): a refusal lists every problem in ``data.errors``. ``rpc.discover`` answers
the catalog (``catalog``, OpenRPC).

Transactions: a call that wrote commits before it answers; a call that failed after writing
rolls back. A read-only call leaves the session alone, so an in-process caller's own pending
work is untouched by reads (a write commits the shared session, as a request would).
"""

from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, cast

from jsonrpcserver import Error, Success, dispatch_to_response
from jsonrpcserver.response import to_serializable_one
from jsonrpcserver.sentinels import NODATA
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm.exc import StaleDataError

from app.core import authorization, jsonrpc
from app.core.identity import Identity
from app.db import writing
from app.design_model import (
    calllog,
    catalog,
    methods,  # noqa: F401  (registers every method)
    settings,
    validate,
)
from app.design_model.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Params,
    RpcError,
    app_error,
)
from app.design_model.registry import EFFECTS, METHODS, SPECS, Ctx, Handler, call_effect
from app.extensions import db

_log = logging.getLogger(__name__)
Result = Any  # jsonrpcserver's Either[ErrorResult, SuccessResult]


@dataclass(frozen=True)
class _Call:
    """What jsonrpcserver passes every method first (its ``context``): the caller, None for an
    in-process call that came through a door which asked already, or ``bin/model-server``
    (loopback, no token)."""

    identity: Identity | None


def _failure(exc: RpcError) -> Result:
    return Error(exc.code, exc.message, NODATA if exc.data is None else exc.data)


def _call(method: str, handler: Handler, params: dict[str, Any]) -> dict[str, Any]:
    conf = settings.current()
    ctx = Ctx(model=conf.model, session=db.session(), allowed_upstreams=conf.allowed_upstreams,
              upstream_timeout=conf.upstream_timeout)
    try:
        with writing() if EFFECTS[method].writes else nullcontext():
            result = handler(ctx, Params(params))
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


# Every method's: jsonrpcserver binds each call's arguments to it, and ``inspect.signature``
# answers a function's ``__signature__`` at once instead of working it out on every call.
_SIGNATURE = inspect.signature(lambda call, /, **params: None)


def _bind(name: str, handler: Handler) -> Callable[..., Result]:
    """``handler`` as a jsonrpcserver method: the context first, then the named params."""

    def method(call: _Call, /, **params: Any) -> Result:
        # The one authorization question, from what this call does (a dry run only reads),
        # before its params are checked.
        refused = authorization.refusal(call.identity, call_effect(name, params), name)
        if refused is not None:
            dry = " (dryRun: true is allowed)" if EFFECTS[name].writes else ""
            return _failure(app_error("FORBIDDEN", f"{name}: {refused.message}{dry}"))
        try:
            spec = SPECS.get(name)
            if spec is not None:
                validate.check_call(spec, params)  # every problem at once, before any work
            return Success(_call(name, handler, params))
        except RpcError as exc:
            return _failure(exc)
        except Exception:  # a bug must still answer in JSON-RPC, never as a 500
            _log.exception("design-model method %s failed", name)
            db.session.rollback()
            return _failure(RpcError(INTERNAL_ERROR, "Internal error"))

    method.__signature__ = _SIGNATURE  # type: ignore[attr-defined]
    return method


def _discover(call: _Call, /, **params: Any) -> Result:
    """``rpc.discover``: the OpenRPC document of every method (any token may read it)."""
    return Success(catalog.document())


class _Table(dict[str, Callable[..., Result]]):
    """The methods jsonrpcserver dispatches to; an unknown name answers seed 001's message
    followed by the valid names (also in ``data.methods``), so a caller need not guess."""

    def __missing__(self, name: str) -> Callable[..., Result]:
        def unknown(call: _Call, /, **params: Any) -> Result:
            names = catalog.method_names()
            # Seed 001's message first, then the names: a caller reading only the message
            # (many clients show nothing else) still learns what it may call.
            message = (f"Unknown method: {name}. Methods: {', '.join(names)} "
                       f"({catalog.DISCOVER} describes each)")
            return _failure(RpcError(METHOD_NOT_FOUND, message, {
                "methods": names,
                "hint": f"call {catalog.DISCOVER} for every method's params and result"}))

        return unknown


TABLE = _Table({name: _bind(name, handler) for name, handler in METHODS.items()})
TABLE[catalog.DISCOVER] = _discover


def _as_is(request: Any) -> Any:
    return request  # the request arrives parsed and checked


def _checked(request: Any) -> Any:
    return request  # app.core.jsonrpc.check_request ran already, item by item


def dispatch(payload: dict[str, Any], identity: Identity | None = None) -> dict[str, Any]:
    """The response to one checked request object, through jsonrpcserver."""
    if isinstance(payload.get("params"), list):
        raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object (named "
                                       "parameters)", {"param": "params"})
    # A notification is dispatched with id null so in-process callers still get its outcome.
    request = payload if "id" in payload else {**payload, "id": None}
    # jsonrpcserver types the request as JSON text; with the identity deserializer it is parsed.
    response = dispatch_to_response(request, TABLE,  # type: ignore[arg-type]
                                    context=_Call(identity), deserializer=_as_is,
                                    validator=_checked)
    # One request object (never a batch) answers one response object; jsonrpcserver's
    # annotations (its oslash Either) cannot say so.
    return cast(dict[str, Any], to_serializable_one(response))  # type: ignore[arg-type]


def handle(payload: Any, via: str = "inproc",
           identity: Identity | None = None) -> dict[str, Any]:
    """One JSON-RPC request in, its response out (also for notifications).

    ``identity`` is asked the one authorization question per call (``app.core.authorization``):
    a read-only token runs what the method's declared effect says reads, and dry runs
    (``dryRun: true``) of the rest.
    """
    started = time.perf_counter()
    method = payload.get("method") if isinstance(payload, dict) else None
    try:
        checked = jsonrpc.check_request(payload)
        jsonrpc.check_text(checked.get("params"))  # before any method looks a string up
        response = dispatch(checked, identity)
    except RpcError as exc:
        response = jsonrpc.error(jsonrpc.readable_id(payload), exc)
    error = response.get("error")
    calllog.record(settings.current().log_path, method if isinstance(method, str) else None,
                   (time.perf_counter() - started) * 1000,
                   error["code"] if isinstance(error, dict) else None, via)
    return response


def handle_body(body: bytes, via: str = "http", identity: Identity | None = None) -> str:
    """The HTTP body of the answer to ``body``: '' when it held only notifications."""
    try:
        payload = jsonrpc.decode(body)
    except RpcError as exc:
        calllog.record(settings.current().log_path, None, 0.0, exc.code, via)
        return json.dumps(jsonrpc.error(None, exc))

    def one(item: Any) -> dict[str, Any] | None:
        response = handle(item, via, identity)
        return None if jsonrpc.is_notification(item) else response

    answer = jsonrpc.answer(payload, one)
    return "" if answer is None else json.dumps(answer)

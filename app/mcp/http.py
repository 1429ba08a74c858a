"""Streamable HTTP transport: ``POST/GET/DELETE /mcp``, MCP 2025-11-25 and 2026-07-28.

A POST whose body carries a modern ``_meta`` (or whose ``MCP-Protocol-Version`` is 2026-07-28
and that names no session) is stateless: after the shared Origin, Host and token checks it
meets the 2026 header checks (``app.mcp.http_2026``), is served without any session row, and
its errors carry the 2026 HTTP statuses (404 unknown method, 400 for -32020/-32021/-32022).
``subscriptions/listen`` answers with a long-lived event stream. Everything below describes
the 2025 era, which is chosen by ``initialize`` and the ``Mcp-Session-Id`` it returns.

Every check a request meets, in order: the app-wide hook (app.web.auth) refuses a declared body
over the limit (413) and a Bearer token over its rate limit (429 with Retry-After); then Origin
and Host against the allow-list (403), the Bearer token (401; both refusals carry a JSON-RPC
error ``-32001`` whose ``data.reason`` says why: missing, unknown, revoked, expired,
origin_not_allowed…), the body size as read (413), JSON (400
with -32700), MCP-Protocol-Version (400), the Mcp-Session-Id (400 when missing, 404 when
unknown, ended or someone else's). The 429 and 413 carry a JSON-RPC error ``-32029`` whose
``data.reason`` is rate_limited (with ``retryAfter``, seconds) or body_too_large (with the
``limit`` in bytes). JSON-RPC errors of a well-formed request travel with HTTP 200, as clients
expect.

A ``tools/call`` that may need its stream while it runs (the client asked for progress, or
declared a capability a tool could send it a request for) runs on a worker thread; if it sends
anything before its result (progress, log messages, an elicitation request) the POST is
answered as an SSE stream, otherwise as plain JSON. Any other call runs on the request's own
thread, and the log messages it sends open an SSE stream just before its result. The session,
pending client requests and cancellations are rows, so another process can take the client's
answer or a cancellation.

``GET /mcp`` answers 405 here: the standalone stream is served by ``app.mcp.stream`` on an event
loop, which holds no thread per client (``bin/serve``'s gunicorn worker, ``app.mcp.stream_worker``,
hands it the request before Flask sees it; or a separate endpoint on ``HARMONIC_STREAM_PORT``).
Notifications not tied to a request (notifications/resources/updated) open the event stream of
that session's next request instead: the session reads the change events recorded since the
last one it saw (``app.core.changes``, ``store.take_updates``), whichever process made them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, current_app, g, request
from werkzeug.datastructures import MIMEAccept
from werkzeug.exceptions import RequestEntityTooLarge, TooManyRequests
from werkzeug.http import parse_accept_header
from werkzeug.sansio.utils import get_current_url

from app.core import authorization, changes, config, feed, jsonrpc, netpolicy, resource
from app.core.identity import Identity, bearer_token, identity_only
from app.core.jsonrpc import INVALID_REQUEST, RpcError
from app.core.token_cache import identity_from_token
from app.extensions import db
from app.mcp import era_2026, http_2026, store, wire
from app.mcp.context import ClientRequestFailed, ToolContext
from app.mcp.hearing import Gone, Hearing
from app.mcp.info import SUPPORTED_VERSIONS
from app.mcp.jsonrpc import LIMITED, UNAUTHORIZED
from app.mcp.server import McpServer
from app.services.errors import DomainError, Unauthorized

log = logging.getLogger("harmonic.mcp.http")

bp = Blueprint("mcp", __name__)
identity_only(bp.name)  # the dispatched pages load the person; the transport needs none

STREAMING_METHODS = frozenset({"tools/call"})
LISTEN_SECONDS = 600  # a listen stream ends after this; the client simply listens again
KEEPALIVE_SECONDS = 15  # an SSE comment this often keeps proxies from closing a quiet stream
_pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="mcp-call")


def auth_required(app: Flask,
                  remote_addr: str | None | netpolicy.BindOnly = netpolicy.BIND_ONLY) -> bool:
    """Whether /mcp needs a token: HARMONIC_MCP_AUTH=off only counts on a loopback bind, and
    (given a request's ``remote_addr``) for a caller on loopback."""
    return not netpolicy.auth_may_be_off(not app.config.get("HARMONIC_MCP_AUTH", True),
                                         app.config.get("HARMONIC_HOST"), remote_addr)


def engine() -> McpServer:
    return current_app.extensions["mcp"]


# -- responses -------------------------------------------------------------------------------

def _json(message: dict[str, Any] | None, status: int = 200,
          headers: dict[str, str] | None = None) -> Response:
    if message is not None:
        wire.message("http", "out", message)
    body = jsonrpc.encode(message) if message is not None else ""
    response = Response(body, status=status,
                        mimetype="application/json" if message is not None else None)
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _refuse(status: int, code: int, message: str, **headers: str) -> Response:
    return _json(jsonrpc.error(None, RpcError(code, message)), status, headers)


@bp.after_request
def _cors(response: Response) -> Response:
    # Browser clients (Inspector's web UI) must be able to read the session id.
    origin = request.environ.get("HTTP_ORIGIN")
    if origin and _origin_allowed(origin):
        response.headers["Access-Control-Allow-Origin"] = origin
        # WWW-Authenticate too: a browser client must read the 401's resource_metadata.
        response.headers["Access-Control-Expose-Headers"] = "Mcp-Session-Id, WWW-Authenticate"
        response.headers["Vary"] = "Origin"
    return response


# -- checks ----------------------------------------------------------------------------------

def _base_netloc() -> str:
    return urlsplit(current_app.config.get("HARMONIC_BASE_URL") or "").netloc.lower()


def _host_allowed(host: str) -> bool:
    host = host.lower()
    # The whole authority must be loopback, not just what urlsplit reads as its host: it
    # reads "[::1].evil" as ::1, which would let a rebinding name through.
    if netpolicy.authority_is_loopback(host) or host == _base_netloc():
        return True
    allowed = [h.lower() for h in current_app.config.get("HARMONIC_ALLOWED_HOSTS", [])]
    return host in allowed or (urlsplit(f"//{host}").hostname or "") in allowed


def _origin_allowed(origin: str) -> bool:
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    allowed = [o.rstrip("/").lower() for o in current_app.config.get("HARMONIC_ALLOWED_ORIGINS",
                                                                     [])]
    return (netpolicy.authority_is_loopback(parts.netloc) or origin.rstrip("/").lower() in allowed
            or (bool(_base_netloc()) and parts.netloc.lower() == _base_netloc()))


def _here() -> tuple[Any, Flask]:
    """The request and the app themselves: each use of their proxies looks them up again, and
    a trivial call used them some twenty times."""
    return (request._get_current_object(),  # type: ignore[attr-defined]
            current_app._get_current_object())  # type: ignore[attr-defined]


class Refused(Exception):
    """A /mcp request refused by the checks every door of /mcp shares (``caller``,
    ``session_of``): the answer's HTTP status, message and ``data.reason``."""

    def __init__(self, status: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason


def caller(app: Flask, origin: str | None, host: str, authorization: str | None,
           remote: str | None, origin_url: Callable[[], str], known: Any = None
           ) -> Identity | None:
    """The checks of every /mcp request, POST, DELETE or the GET stream: Origin, then Host
    (DNS rebinding), then the Bearer token and whom it was minted for. The caller's identity,
    or None on loopback with auth off; Refused, or the token's own Unauthorized. ``origin_url``
    gives this request's own scheme://host, asked for only when a token names its audience;
    ``known``: the identity app.web.auth already resolved for this request, if any."""
    if origin is not None and not _origin_allowed(origin):
        raise Refused(403, "Forbidden: this Origin is not allowed (see "
                           "HARMONIC_ALLOWED_ORIGINS)", "origin_not_allowed")
    if not _host_allowed(host):
        raise Refused(403, "Forbidden: this Host is not allowed (see HARMONIC_ALLOWED_HOSTS)",
                      "host_not_allowed")
    plaintext = bearer_token(authorization)
    if plaintext is None and not auth_required(app, remote):
        return None  # loopback development with auth off: anonymous
    if plaintext is None:
        raise Refused(401, "Unauthorized: send Authorization: Bearer <token>", "missing")
    identity = (known if isinstance(known, Identity) and known.via == "token"
                else identity_from_token(plaintext))
    if identity.audience is not None and not resource.is_own(
            identity.audience, (origin_url(), app.config.get("HARMONIC_BASE_URL") or "")):
        # RFC 8707: a token minted for another resource is not ours to honour.
        raise Refused(401, f"Unauthorized: this token was issued for {identity.audience}, "
                           f"not {resource.mcp_url(config.base_url())}", "wrong_audience")
    return identity


def session_of(app: Flask, session_id: str | None, identity: Identity | None,
               remote: str | None) -> store.DbSession:
    """The 2025-11-25 session a request names, if it is the caller's; Refused otherwise."""
    if not session_id:
        raise Refused(400, "Bad Request: Mcp-Session-Id header is required", "no_session")
    session = store.find_session(session_id)
    owner = identity.user_id if identity is not None else None
    if session is None or (auth_required(app, remote) and session.user_id != owner):
        raise Refused(404, "Session not found: initialize a new one", "no_session")
    return session


def _gate() -> tuple[Response | None, Identity | None]:
    """``caller`` for this request: (refusal, identity)."""
    req, app = _here()
    environ = req.environ  # the headers as the server gave them (what req.headers reads)
    try:
        return None, caller(app, environ.get("HTTP_ORIGIN"), req.host,
                            environ.get("HTTP_AUTHORIZATION"), req.remote_addr, _origin,
                            g.get("identity"))
    except Refused as refused:
        return _auth_refusal(refused.status, refused.message, refused.reason), None
    except Unauthorized as exc:
        return _domain_refusal(exc), None


def _step_up(message: Any, identity: Identity | None) -> Response | None:
    """403 insufficient_scope for an app that signed in (an OAuth grant's token) calling a tool
    the one authorization question (``app.core.authorization``) refuses for want of a scope:
    the challenge names the scope, so the client can ask the person for more (MCP step-up
    authorization). Any other refusal (a pasted token's scope; what only the person may do,
    which no scope grants) is the tool's own error, from the same decision."""
    if identity is None or identity.kind != "grant":
        return None
    tool = _called_tool(message)
    if tool is None:
        return None
    params = message["params"]
    refused = authorization.refusal(identity, tool.call_effect(params.get("arguments")),
                                    params["name"])
    scope = refused.details.get("scope") if refused is not None else None
    if refused is None or not isinstance(scope, str):
        return None
    error = RpcError(UNAUTHORIZED, f"Forbidden: {refused.message}",
                     {"reason": "insufficient_scope", "scope": scope})
    request_id = message.get("id") if jsonrpc.valid_id(message.get("id")) else None
    return _json(jsonrpc.error(request_id, error), 403, {
        "WWW-Authenticate": resource.challenge(config.base_url(), "insufficient_scope", scope)})


def _request_id() -> jsonrpc.RequestId:
    """The id of the refused request when its body can be read (else null, as JSON-RPC says)."""
    try:
        message = jsonrpc.decode(request.get_data(cache=True))
    except (RpcError, RequestEntityTooLarge):
        return None
    return jsonrpc.readable_id(message)


def _auth_refusal(status: int, message: str, reason: str, scope: str | None = None) -> Response:
    """A 401/403 whose body is a JSON-RPC error (clients such as the MCP SDK surface its
    message and ``data.reason``), beside the WWW-Authenticate challenge: where to discover how
    to sign in (``resource_metadata``, RFC 9728) and the scope needed."""
    headers: dict[str, str] = {}
    if status == 401:
        headers["WWW-Authenticate"] = resource.challenge(
            config.base_url(), None if reason == "missing" else "invalid_token")
    elif reason == "insufficient_scope":
        headers["WWW-Authenticate"] = resource.challenge(config.base_url(),
                                                         "insufficient_scope", scope)
    error = RpcError(UNAUTHORIZED, message, {"reason": reason})
    return _json(jsonrpc.error(_request_id(), error), status, headers)


def _domain_refusal(exc: DomainError) -> Response:
    """A domain error met before /mcp could read the request (the token resolved by
    ``app.web.auth``, the scope): as a JSON-RPC error, with the reason the service gave."""
    reason = exc.details.get("reason")
    if not isinstance(reason, str):
        reason = "insufficient_scope" if exc.http_status == 403 else "unknown"
    prefix = "Unauthorized" if exc.http_status == 401 else "Forbidden"
    if exc.http_status in (401, 403):
        scope = exc.details.get("scope")
        return _auth_refusal(exc.http_status, f"{prefix}: {exc.message}", reason,
                             scope if isinstance(scope, str) else None)
    return _json(jsonrpc.error(_request_id(), jsonrpc.domain_error(exc)), exc.http_status)


@bp.errorhandler(DomainError)
def _domain_error(exc: DomainError) -> Response:
    # Raised by the app-wide before-request hook (app.web.auth resolves a Bearer token before
    # this blueprint's views run): /mcp answers JSON-RPC whatever refused the request.
    db.session.rollback()
    return _domain_refusal(exc)


def _too_large() -> Response:
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    error = RpcError(LIMITED, f"Request too large: the body is over the limit of {limit} bytes",
                     {"reason": "body_too_large", "limit": limit})
    return _json(jsonrpc.error(None, error), 413)


@bp.errorhandler(RequestEntityTooLarge)
def _body_too_large(exc: RequestEntityTooLarge) -> Response:
    # Raised by app.web.limits before the body is read, so the request id is unknown: null.
    db.session.rollback()
    return _too_large()


@bp.errorhandler(TooManyRequests)
def _rate_limited(exc: TooManyRequests) -> Response:
    # Raised by app.web.ratelimit (via app.web.auth's before-request hook). The body is a
    # JSON-RPC error so that clients (the MCP SDK) surface the reason and the wait, not only
    # the status; Retry-After stays for HTTP-level retries.
    db.session.rollback()
    retry_after = exc.retry_after
    seconds = int(retry_after) if isinstance(retry_after, (int, float)) else 1
    error = RpcError(LIMITED, f"Too Many Requests: {exc.description}",
                     {"reason": "rate_limited", "retryAfter": seconds})
    return _json(jsonrpc.error(_request_id(), error), 429, {"Retry-After": str(seconds)})


def _session(identity: Identity | None) -> tuple[Response | None, store.DbSession | None]:
    req, app = _here()
    try:
        session = session_of(app, req.environ.get("HTTP_MCP_SESSION_ID"), identity,
                             req.remote_addr)
    except Refused as refused:
        return _refuse(refused.status, INVALID_REQUEST, refused.message), None
    store.touch(session)
    return None, session


def _version_refusal() -> Response | None:
    version = request.environ.get("HTTP_MCP_PROTOCOL_VERSION")
    if version is not None and version not in SUPPORTED_VERSIONS:
        return _refuse(400, INVALID_REQUEST,
                       f"Bad Request: unsupported MCP-Protocol-Version {version!r}; "
                       f"supported: {', '.join(SUPPORTED_VERSIONS)}")
    return None


# -- POST ------------------------------------------------------------------------------------

def _body() -> bytes:
    """The request's body, read once. With its length declared (and no transfer coding), it
    is read straight from the server's input: Werkzeug's ``get_data`` wraps the input in a
    limited stream and reads it in chunks, a twentieth of a trivial call's time. Otherwise
    ``get_data`` reads it, up to the size limit; a body sent in chunks that goes past the
    limit is refused as too large (``get_data`` alone would hand back its first part)."""
    req, app = _here()
    environ = req.environ
    length = environ.get("CONTENT_LENGTH")
    limit = app.config.get("MAX_CONTENT_LENGTH")
    if (length and length.isdigit() and "HTTP_TRANSFER_ENCODING" not in environ
            and (not limit or int(length) <= limit)):
        return environ["wsgi.input"].read(int(length))
    raw = req.get_data(cache=False)
    if limit and len(raw) >= limit and environ["wsgi.input"].read(1):
        raise RequestEntityTooLarge()
    return raw


@bp.post("/mcp")
@jsonrpc.door
def post() -> Response:
    refusal, identity = _gate()
    if refusal is not None:
        return refusal
    try:
        raw = _body()
    except RequestEntityTooLarge:
        return _too_large()
    try:
        message = jsonrpc.decode(raw)
    except RpcError as exc:
        wire.message("http", "in", raw.decode("utf-8", "replace"), _logged_headers())
        return _json(jsonrpc.error(None, exc), 400)
    wire.message("http", "in", message, _logged_headers())
    method = message.get("method") if isinstance(message, dict) else None
    refusal = _step_up(message, identity)
    if refusal is not None:
        return refusal
    if isinstance(message, dict) and http_2026.is_stateless(message, request.headers):
        return _stateless(message, identity)
    if method == "initialize" and "Mcp-Session-Id" not in request.headers:
        return _initialize(message, identity)
    refusal = _version_refusal()
    if refusal is not None:
        return refusal
    if not isinstance(message, dict):
        return _json(engine().handle(message, None, None), 400)  # type: ignore[arg-type]
    refusal, session = _session(identity)
    if refusal is not None:
        return refusal
    assert session is not None
    if jsonrpc.is_response(message):
        found = store.answer_client_request(session.id, message.get("id"), message)
        if not found:
            return _refuse(400, INVALID_REQUEST, "Bad Request: no pending request has this id")
        return Response(status=202)
    if "id" not in message:
        if method == "notifications/cancelled" and isinstance(message.get("params"), dict):
            request_id = message["params"].get("requestId")
            if jsonrpc.valid_id(request_id):
                store.record_cancel(session.id, request_id)
        response = engine().handle(message, session, _NullChannel(), identity)
        return Response(status=202) if response is None else _json(response, 400)
    sse = _accepts_sse()
    waiting = store.take_updates(session, identity) if sse else []
    if method in STREAMING_METHODS and sse and _may_converse(message, session):
        return _streamed(message, session, identity, waiting)
    channel = _HeldChannel() if sse and method in STREAMING_METHODS else _NullChannel()
    response = engine().handle(message, session, channel, identity, origin=_origin())
    held = channel.held if isinstance(channel, _HeldChannel) else []
    if (waiting or held) and response is not None:
        return _sse_response(iter([*waiting, *held, response]))
    return _json(response)


def _stateless(message: dict[str, Any], identity: Identity | None) -> Response:
    """A 2026-07-28 POST: no session is read or written, whatever the headers say."""
    if jsonrpc.is_response(message):
        return _refuse(400, INVALID_REQUEST, "Bad Request: clients send no responses in "
                                             "2026-07-28")
    if "id" not in message:
        return Response(status=202)  # e.g. notifications/cancelled: closing the stream cancels
    tool = _called_tool(message)
    refusal = http_2026.refusal(message, request.headers,
                                tool.input_schema if tool is not None else None)
    if refusal is not None:
        request_id = message["id"] if jsonrpc.valid_id(message["id"]) else None
        return _json(jsonrpc.error(request_id, refusal), 400)
    method = message.get("method")
    if method == era_2026.LISTEN:
        return _listen(message, identity)
    sse = _accepts_sse()
    if method in STREAMING_METHODS and sse and _may_converse(message, None):
        return _streamed(message, None, identity, [])
    channel = _HeldChannel() if sse and method in STREAMING_METHODS else _NullChannel()
    response = engine().handle(message, None, channel, identity, stateless=True,
                               origin=_origin())
    held = channel.held if isinstance(channel, _HeldChannel) else []
    if held and response is not None:
        return _sse_response(iter([*held, response]))
    return _json(response, http_2026.status(response))


def _called_tool(message: Any) -> Any:
    """The registered tool a tools/call names; None for another message or an unknown name."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return engine().find_tool(name) if isinstance(name, str) else None


def _listen(message: dict[str, Any], identity: Identity | None) -> Response:
    """subscriptions/listen: acknowledge the URIs the caller may read (the others are left
    out, with the reason), replay the numbered events of the watched URIs past the client's
    cursor (a run that already finished), then resources/updated for the watched URIs
    (changed by any server process: ``app.core.feed``) that the caller may still read when
    each is told (``app.mcp.hearing``), until the client goes away, its token stops working
    or LISTEN_SECONDS pass."""
    request_id = message["id"]
    params = message.get("params") or {}
    try:
        honoured, uris = era_2026.listen_filter(params)
    except RpcError as exc:
        return _json(jsonrpc.error(request_id, exc))
    refused = engine().refusals(sorted(uris), identity,
                                era_2026.session_for(params, "stateless", "http"),
                                _NullChannel(), _origin())
    uris = frozenset(u for u in uris if u not in refused)
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    hearing = _hearing_for(app, identity)

    def watch(uri: str) -> None:
        if uri in uris:
            hearing.put(uri, uri)

    # Listening before the backlog is read: an event committed in between is announced twice
    # at worst, never lost. The feed relays changes other processes commit.
    feed.ensure_started(app)
    changes.listen(watch)
    try:
        backlog = era_2026.listen_backlog(request_id, params, uris, identity)
    except BaseException:
        changes.unlisten(watch)
        raise

    def stream() -> Iterator[str]:
        try:
            yield _sse_event(era_2026.listen_acknowledged(request_id, honoured, refused))
            for note in backlog:
                yield _sse_event(note)
            deadline = time.monotonic() + LISTEN_SECONDS
            quiet_since = time.monotonic()
            while time.monotonic() < deadline:
                told: list[str] = []
                if hearing.wait(max(0.0, quiet_since + KEEPALIVE_SECONDS - time.monotonic())):
                    try:
                        told = hearing.take()
                    except Gone as gone:  # the token stopped working: the stream ends
                        yield _sse_event(jsonrpc.error(request_id, RpcError(
                            UNAUTHORIZED, f"Unauthorized: {gone}", {"reason": gone.reason})))
                        return
                for uri in told:
                    yield _sse_event(era_2026.listen_message(
                        request_id, "notifications/resources/updated", {"uri": uri}))
                if told:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
                    quiet_since = time.monotonic()  # nothing this caller may hear for a while
                    yield ":\n\n"
            yield _sse_event(era_2026.listen_ended(request_id))
        finally:
            changes.unlisten(watch)

    return _event_stream(stream())


def _hearing_for(app: Flask, identity: Identity | None) -> Hearing:
    """What this request's caller may hear: each event is checked with the token resolved
    again (a revoked token hears nothing more; the token cache's second at most)."""
    plaintext = bearer_token(request.environ.get("HTTP_AUTHORIZATION"))
    if identity is None or plaintext is None:
        return Hearing(app, lambda: identity)
    return Hearing(app, lambda: identity_from_token(plaintext))


def _logged_headers() -> dict[str, str] | None:
    """The request headers worth a debug line (wire.message redacts Authorization); None when
    messages are not logged."""
    if not wire.enabled():
        return None
    return {k: v for k, v in request.headers.items()
            if k.lower() in ("authorization", "mcp-session-id", "mcp-protocol-version",
                             "mcp-method", "mcp-name", "origin")}


def _origin() -> str:
    """This request's own scheme://host: absolute URLs there are links into this app (the
    Host already passed the allow-list)."""
    req = request._get_current_object()  # type: ignore[attr-defined]
    return _host_url(req.scheme, req.host)


@lru_cache(maxsize=64)  # the same few hosts on every request; werkzeug builds it anew each time
def _host_url(scheme: str, host: str) -> str:
    return get_current_url(scheme, host).rstrip("/")  # as request.host_url builds it


def _initialize(message: Any, identity: Identity | None) -> Response:
    session = store.DbSession.new(identity)
    response = engine().handle(message, session, _NullChannel(), identity)
    if response is None or "error" in response:
        return _json(response, 200 if response is not None and "id" in message else 400)
    store.prune()
    return _json(response, headers={"Mcp-Session-Id": session.id})


def _accepts_sse() -> bool:
    return _accept_has_sse(request.environ.get("HTTP_ACCEPT", ""))


@lru_cache(maxsize=64)  # a client sends the same Accept header with every request
def _accept_has_sse(accept: str) -> bool:
    return parse_accept_header(accept, MIMEAccept).find("text/event-stream") >= 0 or "*/*" in accept


class _NullChannel:
    """For requests answered as plain JSON: nothing can be sent before the response."""

    def notify(self, message: dict[str, Any]) -> None:
        pass

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]:
        raise ClientRequestFailed(f"cannot send {method}: the client did not accept an "
                                  f"event stream for this call")


# Client capabilities under which a 2025 tool may send the client a request mid-call.
_ASKING_CAPABILITIES = ("elicitation", "sampling", "roots")


def _may_converse(message: dict[str, Any], session: store.DbSession | None) -> bool:
    """Whether this tools/call may need its stream while it runs: progress the client asked
    for (a progressToken), or, in the 2025 era, a request to a client that declared a
    capability for one. Any other call runs on the request's own thread (a hand-off to a
    worker thread and back costs more than a trivial call): the log messages it may send are
    held and open the event stream before its result, in order, as they would have."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get("progressToken") is not None:
        return True
    if session is None:  # 2026-07-28: questions end the request (input-required), never wait
        return False
    capabilities = session.client_capabilities or {}
    return any(name in capabilities for name in _ASKING_CAPABILITIES)


class _HeldChannel:
    """For a call run on the request's thread (``_may_converse`` said it needs no stream while
    it runs): notifications wait for the response and precede it on its event stream."""

    def __init__(self) -> None:
        self.held: list[dict[str, Any]] = []

    def notify(self, message: dict[str, Any]) -> None:
        self.held.append(message)

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]:
        raise ClientRequestFailed(f"cannot send {method}: this client declared no capability "
                                  f"for requests from the server")


class _SseChannel:
    """Notifications and requests for the client, queued for this POST's event stream."""

    def __init__(self, events: queue.Queue[tuple[str, Any]], session_id: str) -> None:
        self.events, self.session_id = events, session_id
        self.closed = threading.Event()  # set when a stateless call's client went away

    def notify(self, message: dict[str, Any]) -> None:
        self.events.put(("event", message))

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]:
        request_id = f"srv-{uuid.uuid4().hex}"
        store.open_client_request(self.session_id, request_id, method)
        try:
            self.events.put(("event", jsonrpc.request(request_id, method, params)))
            deadline = time.monotonic() + timeout
            while True:
                answer = store.client_response(self.session_id, request_id)
                if answer is not None:
                    break
                if time.monotonic() > deadline:
                    raise ClientRequestFailed(f"the client did not answer {method} in time")
                ctx.sleep(0.02)
        finally:
            store.close_client_request(self.session_id, request_id)
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise ClientRequestFailed(f"{method} failed: {error.get('message', 'error')}")
        result = answer.get("result")
        return result if isinstance(result, dict) else {}


def _streamed(message: dict[str, Any], session: store.DbSession | None,
              identity: Identity | None, waiting: list[dict[str, Any]]) -> Response:
    """Run the call on a worker; plain JSON if it only answers, SSE if it says more first.

    ``waiting`` are queued notifications for this session: they open the stream. Without a
    session the call is a stateless (2026-07-28) one.
    """
    outgoing: queue.Queue[tuple[str, Any]] = queue.Queue()
    for notification in waiting:
        outgoing.put(("event", notification))
    channel = _SseChannel(outgoing, session.id if session is not None else "stateless")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    origin = _origin()  # the worker has no request to ask

    def work() -> None:
        try:
            with app.app_context():
                try:
                    response = app.extensions["mcp"].handle(
                        message, session, channel, identity, stateless=session is None,
                        origin=origin)
                finally:
                    db.session.remove()
            outgoing.put(("done", response))
        except Exception:
            log.exception("MCP call failed")
            outgoing.put(("done", jsonrpc.error(message["id"], RpcError(
                jsonrpc.INTERNAL_ERROR, "Internal error"))))

    db.session.remove()  # the worker has its own session; this thread holds no transaction
    _pool.submit(work)
    kind, first = outgoing.get()
    if kind == "done" and first is not None:
        return _json(first, 200 if session is not None else http_2026.status(first))

    def messages() -> Iterator[dict[str, Any]]:
        item: tuple[str, Any] = (kind, first)
        try:
            while True:
                kind_, payload = item
                if payload is not None:
                    yield payload
                if kind_ == "done":
                    return
                item = outgoing.get()
        finally:
            # The stream closed before the response: in 2026-07-28 that is the cancellation
            # (in 2025 a disconnect is not, and notifications/cancelled says it instead).
            if item[0] != "done" and session is None:
                channel.closed.set()

    return _sse_response(messages())


def _sse_event(payload: dict[str, Any], event_id: int | None = None) -> str:
    """One SSE event carrying one JSON-RPC message on one data line."""
    wire.message("http", "out", payload)
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: message\ndata: {jsonrpc.encode(payload)}\n\n"


def _sse_response(messages: Iterator[dict[str, Any]]) -> Response:
    """An event stream of JSON-RPC messages, one per event, each on one data line."""

    return _event_stream(_sse_event(payload, counter)
                         for counter, payload in enumerate(messages, 1))


def _event_stream(chunks: Iterator[str]) -> Response:
    response = Response(chunks, mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # proxies must not hold events back
    return response


# -- GET and DELETE --------------------------------------------------------------------------

@bp.get("/mcp")
def get() -> Response:
    refusal, _identity = _gate()
    if refusal is not None:
        return refusal
    # The standalone stream is served on an event loop, never by a worker thread here:
    # bin/serve's worker (app.mcp.stream_worker) takes GET /mcp with Accept: text/event-stream
    # before it reaches Flask, or a load balancer routes it to HARMONIC_STREAM_PORT.
    return Response("GET /mcp without Accept: text/event-stream, or on a server without the "
                    "evented stream path (bin/serve has it); POST JSON-RPC messages here.",
                    status=405,
                    headers={"Allow": "POST, DELETE"}, mimetype="text/plain")


@bp.delete("/mcp")
def delete() -> Response:
    refusal, identity = _gate()
    if refusal is not None:
        return refusal
    refusal, session = _session(identity)
    if refusal is not None:
        return refusal
    assert session is not None
    store.end_session(session)
    return Response(status=204)


@bp.route("/mcp", methods=["OPTIONS"])
def preflight() -> Response:
    origin = request.headers.get("Origin")
    if origin is None or not _origin_allowed(origin):
        return Response(status=403)
    return Response(status=204, headers={
        "Access-Control-Allow-Methods": "POST, GET, DELETE",
        "Access-Control-Allow-Headers": "Authorization, Content-Type, Accept, Mcp-Session-Id, "
                                        "MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
                                        "Last-Event-ID",
        "Access-Control-Max-Age": "600"})


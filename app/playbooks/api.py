"""Seed 000's wire surface: POST /teach/start, /teach/stop, /rpc and /replay (JSON bodies).

The body of /rpc and /replay is read as JSON whatever its Content-Type: the seed's plain
``curl -d`` sends ``application/x-www-form-urlencoded``, and its JSON must still be understood.
/teach/stop also makes the capture a draft recipe (``recipe``, and in ``message`` how to
dry-run it), as every door's stop does. A /replay refused answers the refusal's own status
(409 for governance and an upstream write that cannot be previewed, 422 for bad or missing
arguments and unconfirmed writes) with a body naming the rule and what to do next; a dry run
answers ``realRun``: whether a real run with the same arguments would be allowed, and if not,
the rule that will refuse it and what to do.

Who may call: a Bearer token (never a browser cookie: these endpoints skip CSRF checks, so a
cookie alone would let any web page drive them); without credentials only
when ``PLAYBOOK_AUTH=off``, the app binds a loopback HOST and the request comes from loopback
(``app.core.netpolicy.auth_may_be_off``) — the seed's curl examples and Python replayer then
work unchanged on the operator's machine.
What a caller may run is the one authorization question (``app.core.authorization``), from
each endpoint's declared effect: ``/teach/start`` and ``/teach/stop`` write, ``/replay`` reads
as a dry run and may destroy when it executes (the ``replay`` tool's effect), and ``/rpc`` asks
per request, from the method's effect (a refused one answers its JSON-RPC error, the others
still run).
Errors are JSON with honest codes; /rpc answers JSON-RPC errors (HTTP 200) as the seed's
upstream does. A body or request that is not JSON-RPC 2.0 is answered here with the standard
codes of ``app.core.jsonrpc`` (-32700, -32600), and params holding text no database stores
(a NUL character) are -32602 naming the param: neither reaches the upstream or a capture.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request

from app.actions.effects import IDEMPOTENT_WRITE, WRITE, Effect
from app.core import authorization, jsonrpc, netpolicy
from app.core.identity import Identity, identity_only
from app.extensions import db
from app.playbooks import service, settings, teach
from app.playbooks.recipe import method_effect
from app.playbooks.replay import replay
from app.services.errors import DomainError, Invalid, Unauthorized
from app.web import limits

bp = Blueprint("playbooks_api", __name__)
# These views read only the caller's identity (a replay's steps load the person in their own
# dispatched requests): a proxied call skips loading the person's row.
identity_only(bp.name)


def caller(effect: Effect | None = None, what: str | None = None) -> tuple[Identity | None, str]:
    """(identity or None, owner key) of this request, or Unauthorized; Forbidden when the caller
    may not run what has ``effect`` (None: the endpoint asks per call itself)."""
    identity: Identity | None = g.get("identity")
    if identity is not None and identity.via == "session":
        # These endpoints are exempt from CSRF checks, so a browser cookie must not be enough:
        # a third-party page could otherwise make a signed-in browser call /rpc or /replay.
        raise Unauthorized("send 'Authorization: Bearer <token>'; in a browser use the "
                           "actions on /playbooks")
    if identity is not None:
        if effect is not None:
            authorization.authorize(identity, effect, what)
        return identity, teach.owner_key(identity)
    if netpolicy.auth_may_be_off(not settings.current().auth,
                                 current_app.config.get("HARMONIC_HOST"), request.remote_addr):
        return None, teach.LOCAL
    raise Unauthorized("send 'Authorization: Bearer <token>' (token-less use needs "
                       "PLAYBOOK_AUTH=off on a loopback-only server)")


@bp.errorhandler(DomainError)
def _domain_error(exc: DomainError) -> Response:
    db.session.rollback()
    body: dict[str, Any] = {"ok": False, "error": {"kind": exc.kind, "message": exc.message}}
    if exc.errors:
        body["error"]["errors"] = exc.errors
    response = jsonify(body)
    response.status_code = exc.http_status
    if exc.http_status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="Harmonic"'
    return response


def _playbook_page(playbook: Any) -> str:
    return f"/playbooks/{playbook.short_id}"


@bp.post("/teach/start")
def teach_start() -> Response:
    identity, owner = caller(WRITE, "teach/start")
    playbook, stopped = teach.start(owner, identity.user_id if identity else None,
                                    request.args.get("name"))
    body: dict[str, Any] = {"ok": True, "dir": str(teach.folder(playbook)),
                            "sessionId": playbook.session_id, "id": playbook.short_id,
                            "page": _playbook_page(playbook)}
    if stopped:
        body["stopped"] = stopped
    return jsonify(body)


@bp.post("/teach/stop")
def teach_stop() -> Response:
    identity, owner = caller(IDEMPOTENT_WRITE, "teach/stop")
    playbook, entries = teach.stop(owner)
    if playbook is None:
        return jsonify({"ok": True, "entries": 0, "sessionId": None,
                        "message": "not teaching"})
    return jsonify({"ok": True, "entries": entries, "sessionId": playbook.session_id,
                    "dir": str(teach.folder(playbook)), "page": _playbook_page(playbook),
                    **service.stopped_draft(playbook, identity)})


def _body() -> bytes:
    """The raw body whatever the Content-Type says: seed 000's examples use plain `curl -d`,
    which labels JSON as a form (app.web.limits keeps the body readable after its form check)."""
    return request.get_data(cache=True, parse_form_data=False)


@bp.post("/rpc")
@jsonrpc.door
def rpc() -> Response:
    identity, _owner = caller()
    owner = teach.recording_keys(identity) if identity is not None else [teach.LOCAL]
    answer = jsonrpc.answer_body(_body(), lambda item: _one(item, owner, identity))
    return jsonify(answer) if answer is not None else Response(status=204)


def _one(payload: Any, owner: list[str], identity: Identity | None) -> dict[str, Any] | None:
    """The upstream's answer to one well-formed request (None for a notification); a
    malformed or refused one is answered here and never reaches the upstream or the capture."""
    try:
        jsonrpc.check_request(payload)
        jsonrpc.check_text(payload.get("params"))  # neither forwarded nor captured
    except jsonrpc.RpcError as exc:
        return jsonrpc.error(jsonrpc.readable_id(payload), exc)
    refused = authorization.refusal(identity, method_effect(payload["method"]),
                                    payload["method"])
    if refused is not None:
        error = jsonrpc.domain_error(refused)
        return None if jsonrpc.is_notification(payload) else jsonrpc.error(payload["id"], error)
    response = teach.forward(payload, owner)
    return None if jsonrpc.is_notification(payload) else response


def _field(body: dict[str, Any], name: str) -> Any:
    """The seed's request keys are case-insensitive (SessionId, sessionId, sessionid)."""
    for key, value in body.items():
        if key.lower() == name.lower():
            return value
    return None


@bp.post("/replay")
def replay_endpoint() -> Response:
    identity, _owner = caller()  # asked below, once the body says whether it is a dry run
    try:
        body = jsonrpc.decode(_body() or b"null")
    except jsonrpc.RpcError:
        body = None
    # Asked before the body is checked: only what is plainly a dry run counts as one.
    authorization.authorize(identity, service.replay_effect(
        isinstance(body, dict) and _field(body, "DryRun") is True), "replay")
    if not isinstance(body, dict):
        # A body like {SessionId:x,DryRun:true} is JSON whose quotes a shell took away.
        raise Invalid("the body must be a JSON object {SessionId | RecipePath, DryRun, Args} "
                      "(in a shell, quote it whole so its own quotes reach the server: "
                      "-d '{\"SessionId\": \"my-session\", \"DryRun\": true}')",
                      errors=[{"param": "(body)", "message": "must be a JSON object"}])
    limits.refuse_unstorable(body)  # (a JSON body sent as a form passed the web layer's check)
    dry_run = _field(body, "DryRun")
    args = _field(body, "Args") or {}
    if dry_run is not None and not isinstance(dry_run, bool):
        raise Invalid("DryRun must be a boolean",
                      errors=[{"param": "DryRun", "message": "must be a boolean"}])
    if not isinstance(args, dict):
        raise Invalid("Args must be an object", errors=[{"param": "Args",
                                                         "message": "must be an object"}])
    session_id, recipe_path = _field(body, "SessionId"), _field(body, "RecipePath")
    if session_id is not None and not isinstance(session_id, str):
        raise Invalid("SessionId must be a string",
                      errors=[{"param": "SessionId", "message": "must be a string"}])
    recipe, playbook, source = service.load_for_replay(identity, session_id, recipe_path)
    report, _run = replay(recipe, args, bool(dry_run), identity, playbook, source=source,
                          door="http")
    status = report.pop("httpStatus", 422)
    response = jsonify(report)
    response.status_code = status if report["status"] == "refused" else 200
    return response

"""Input-required results (MCP 2026-07-28 "multi round-trip requests") instead of
server-to-client requests.

A handler asks through ``ctx.elicit`` / ``ctx.sample`` / ``ctx.ask`` exactly as in the 2025
era. In a modern request those do not send anything: when the answer is not among the
request's ``inputResponses`` they raise ``InputRequired``, the engine answers
``{"resultType": "input_required", "inputRequests": {...}, "requestState": ...}``, and the
client retries the same request with ``inputResponses`` and the echoed ``requestState``. The
handler then runs again from the start and finds its answers. So a handler must ask before it
writes anything (the retry repeats everything before the question).

``requestState`` carries the answers of earlier rounds, bound to the request (method, name or
URI, arguments) and to the caller, signed with the app's SECRET_KEY and valid for an hour: the
retry needs no server-side storage, and a tampered, expired or transplanted state is refused
with -32602.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import current_app
from itsdangerous import BadData, URLSafeTimedSerializer

from app.core.identity import Identity
from app.core.jsonrpc import INVALID_PARAMS, RpcError

STATE_SALT = "harmonic.mcp.request-state"
STATE_MAX_AGE = 3600  # seconds a retry may come after the question


class InputRequired(Exception):
    """Raised by ctx.ask in a modern request: these questions need answers first."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(", ".join(requests))
        self.requests = requests


def _serializer(secret: str) -> Any:
    return URLSafeTimedSerializer(secret, salt=STATE_SALT)


def _secret() -> str:
    return str(current_app.config["SECRET_KEY"])


def binding(method: str, params: dict[str, Any], identity: Identity | None) -> str:
    """What a state is valid for: this request of this caller, nothing else."""
    target = params.get("name") if method != "resources/read" else params.get("uri")
    user_id = identity.user_id if identity is not None else None
    subject = [method, target, params.get("arguments") or {}, user_id]
    raw = json.dumps(subject, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


def answers(method: str, params: dict[str, Any],
            identity: Identity | None) -> tuple[dict[str, Any], bool]:
    """The answers a (re)tried request brings: earlier rounds' from its verified
    requestState, this round's from inputResponses. Also whether a state came back."""
    responses = params.get("inputResponses", {})
    if "inputResponses" in params and not isinstance(responses, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
    for key, value in responses.items():
        if not isinstance(value, dict):
            raise RpcError(INVALID_PARAMS, f"Invalid params: inputResponses[{key!r}] must be "
                                           f"an object (the client's result)")
    state = params.get("requestState")
    if state is None:
        return dict(responses), False
    if not isinstance(state, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: requestState must be a string")

    try:
        data = _serializer(_secret()).loads(state, max_age=STATE_MAX_AGE)
    except BadData:
        raise RpcError(INVALID_PARAMS, "Invalid params: requestState failed its integrity "
                                       "check (tampered or expired); send the request again "
                                       "without it") from None
    if not isinstance(data, dict) or data.get("b") != binding(method, params, identity):
        raise RpcError(INVALID_PARAMS, "Invalid params: requestState belongs to another "
                                       "request")
    earlier = data["r"] if isinstance(data.get("r"), dict) else {}
    return {**earlier, **responses}, True


def result(exc: InputRequired, method: str, params: dict[str, Any], identity: Identity | None,
           known: dict[str, Any]) -> dict[str, Any]:
    """The InputRequiredResult for the questions in ``exc``, keeping the answers so far."""
    still_open = set(exc.requests)
    kept = {k: v for k, v in known.items() if k not in still_open}
    state = _serializer(_secret()).dumps({"b": binding(method, params, identity), "r": kept})
    return {"resultType": "input_required", "inputRequests": exc.requests,
            "requestState": state}

"""Domain errors, each carrying how every door shows it.

A class says its HTTP status (``http_status``, read by the web layer and the JSON endpoints),
the word in JSON and Markdown bodies (``kind``), and its JSON-RPC error (``jsonrpc_code``, plus
``error_code`` for ``data.code``, as the design-model server's application errors do), so
no door maps errors by name or by an isinstance chain. An instance carries its data: every bad
parameter (``errors``) and details such as ``link`` (where to fix a refusal) or ``actions``
(the actions valid at a page).

The JSON-RPC codes are the standard ones (services import nothing above them, so the numbers
are written here; ``app.core.jsonrpc`` names them): -32602 invalid params for input that names
nothing or breaks a rule, -32000 (the server-error range) for refusals and conflicts.
"""

from __future__ import annotations

from typing import Any

APPLICATION_ERROR = -32000  # app.core.jsonrpc.SERVER_ERROR_MAX
INVALID_PARAMS = -32602  # app.core.jsonrpc.INVALID_PARAMS


class DomainError(Exception):
    http_status = 400
    kind = "error"
    jsonrpc_code = APPLICATION_ERROR
    error_code = "ERROR"

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None,
                 **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors or []
        self.details = details

    def data(self) -> dict[str, Any]:
        """What a JSON answer says beside the message: code, kind, errors, set details."""
        out: dict[str, Any] = {"code": self.error_code, "kind": self.kind}
        if self.errors:
            out["errors"] = self.errors
        out.update({k: v for k, v in self.details.items() if v is not None})
        return out


class NotFound(DomainError):
    """Nothing by that name here. ``actions`` (optional) lists what is valid instead."""

    http_status = 404
    kind = "not_found"
    jsonrpc_code = INVALID_PARAMS  # the request names something that does not exist
    error_code = "NOT_FOUND"


class Unauthorized(DomainError):
    http_status = 401
    kind = "unauthorized"
    error_code = "UNAUTHORIZED"


class Forbidden(DomainError):
    """Refused. ``link`` (optional detail) points where the caller can fix it, e.g. a join page."""

    http_status = 403
    kind = "forbidden"
    error_code = "FORBIDDEN"


class Invalid(DomainError):
    """Bad input. ``errors`` lists every bad parameter: [{"param": ..., "message": ...}]."""

    http_status = 422
    kind = "invalid"
    jsonrpc_code = INVALID_PARAMS
    error_code = "INVALID"


class Conflict(DomainError):
    http_status = 409
    kind = "conflict"
    error_code = "CONFLICT"


def invalid_param(param: str, message: str) -> Invalid:
    """An Invalid naming one parameter, for rules checked inside services."""
    return Invalid(f"{param}: {message}", errors=[{"param": param, "message": message}])

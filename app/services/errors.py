"""Domain errors. The web layer maps them to 404/403/422/409 and MCP to isError results."""

from __future__ import annotations


class DomainError(Exception):
    status = 400
    kind = "error"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(DomainError):
    status = 404
    kind = "not_found"


class Unauthorized(DomainError):
    status = 401
    kind = "unauthorized"


class Forbidden(DomainError):
    """Refused. ``link`` (optional detail) points where the caller can fix it, e.g. a join page."""

    status = 403
    kind = "forbidden"


class Invalid(DomainError):
    """Bad input. ``errors`` lists every bad parameter: [{"param": ..., "message": ...}]."""

    status = 422
    kind = "invalid"

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None,
                 **details: object) -> None:
        super().__init__(message, **details)
        self.errors = errors or []


class Conflict(DomainError):
    status = 409
    kind = "conflict"


def invalid_param(param: str, message: str) -> Invalid:
    """An Invalid naming one parameter, for rules checked inside services."""
    return Invalid(f"{param}: {message}", errors=[{"param": param, "message": message}])

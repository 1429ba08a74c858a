"""JSON-RPC 2.0 framing for MCP: error codes, message shapes and the parsing of one message.

Kept free of Flask and of any third-party import so the stdio server can answer ``initialize``
before the web app is loaded. Error codes follow the MCP 2025-11-25 and 2026-07-28 schemas.
"""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # MCP 2025: resources/read of an unknown URI, data {"uri": ...}
# MCP 2026-07-28 (resource not found is INVALID_PARAMS there):
HEADER_MISMATCH = -32020  # HTTP headers missing or not matching the body
MISSING_CAPABILITY = -32021  # data {"requiredCapabilities": {name: {}}}
UNSUPPORTED_VERSION = -32022  # data {"supported": [...], "requested": ...}

RequestId = str | int


class RpcError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def result(request_id: RequestId, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: RequestId | None, exc: RpcError) -> dict[str, Any]:
    # An id that could not be read is answered with id null, as JSON-RPC 2.0 says.
    return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_dict()}


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def request(request_id: RequestId, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def encode(message: dict[str, Any]) -> str:
    """Compact JSON on one line: json.dumps escapes newlines inside strings."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def decode(raw: bytes | str) -> Any:
    """Parse one message; RpcError(-32700) for bytes that are not UTF-8 JSON."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RpcError(PARSE_ERROR, "Parse error: the message is not valid UTF-8") from None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise RpcError(PARSE_ERROR, "Parse error: the message is not valid JSON") from None


def valid_id(value: Any) -> bool:
    """Request ids are strings or integers, never null, booleans or floats."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and "id" in message and ("result" in message
                                                           or "error" in message)

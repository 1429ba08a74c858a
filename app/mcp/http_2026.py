"""The 2026-07-28 rules of Streamable HTTP that the 2025 era does not have: which POST is
stateless, the header checks (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) and the
HTTP status of each error.

Pure functions over the parsed body and the request headers, so ``app.mcp.http`` keeps the
wiring and this module keeps the rules. Checks run in the order the conformance suite and the
spec imply: the body's ``_meta`` first (-32602), then the version header against it (-32020),
then whether we speak that version (-32022), then ``Mcp-Method`` and ``Mcp-Name`` (-32020).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

from werkzeug.datastructures import Headers

from app.core.jsonrpc import METHOD_NOT_FOUND, RpcError
from app.mcp import era_2026
from app.mcp.info import MODERN_VERSIONS
from app.mcp.jsonrpc import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION

# The body field each method's Mcp-Name header mirrors (SEP-2243; SEP-2663 adds tasks/*).
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
         "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
BAD_REQUEST_CODES = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})
SENTINEL = ("=?base64?", "?=")


def is_stateless(message: dict[str, Any], headers: Headers) -> bool:
    """A modern _meta, or a modern version header on a POST that names no session; a plain
    ``initialize`` always opens the 2025 era, whatever its headers say."""
    if era_2026.is_modern(message):
        return True
    if message.get("method") == "initialize":
        return False
    return (headers.get("MCP-Protocol-Version", "").strip() in MODERN_VERSIONS
            and not headers.get("Mcp-Session-Id"))


def _mismatch(message: str) -> RpcError:
    return RpcError(HEADER_MISMATCH, f"Header mismatch: {message}")


def _decoded(value: str) -> str:
    """A header value with the Base64 sentinel form undone; RpcError if it is malformed."""
    value = value.strip()
    if value.startswith(SENTINEL[0]) and value.endswith(SENTINEL[1]) and len(value) >= 11:
        try:
            return base64.b64decode(value[len(SENTINEL[0]):-len(SENTINEL[1])],
                                    validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise _mismatch("the Base64 header value is malformed") from None
    return value


def _header_params(schema: dict[str, Any], path: tuple[str, ...] = ()
                   ) -> Iterator[tuple[str, tuple[str, ...], Any]]:
    """(header name, property path, property schema) of each ``x-mcp-header`` parameter,
    reachable from the root through ``properties`` only, as the spec allows."""
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        if isinstance(prop.get("x-mcp-header"), str):
            yield prop["x-mcp-header"], (*path, name), prop
        if prop.get("type") == "object":
            yield from _header_params(prop, (*path, name))


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        arguments = arguments.get(key) if isinstance(arguments, dict) else None
    return arguments


def _as_header(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _param_refusal(params: Any, headers: Headers,
                   tool_schema: dict[str, Any]) -> RpcError | None:
    """Each ``Mcp-Param-<name>`` must be present when its argument is, and equal it."""
    arguments = params.get("arguments") if isinstance(params, dict) else None
    for header_name, path, prop in _header_params(tool_schema):
        value = _value_at(arguments, path)
        header = headers.get(f"Mcp-Param-{header_name}")
        if value is None:
            continue
        if header is None:
            return _mismatch(f"the Mcp-Param-{header_name} header is required")
        try:
            text = _decoded(header)
        except RpcError as exc:
            return exc
        if prop.get("type") == "integer" and not isinstance(value, bool):
            try:
                same = float(text) == float(value)
            except ValueError:
                same = False
        else:
            same = text == _as_header(value)
        if not same:
            return _mismatch(f"Mcp-Param-{header_name} does not match the argument")
    return None


def refusal(message: dict[str, Any], headers: Headers,
            tool_schema: dict[str, Any] | None = None) -> RpcError | None:
    """Why this stateless request must be refused with 400, or None if it may be served.

    ``tool_schema`` is the input schema of the tool a tools/call names, for its
    ``x-mcp-header`` parameters."""
    params = message.get("params")
    try:
        era_2026.read_meta(params)
        unsupported: RpcError | None = None
    except RpcError as exc:
        if exc.code != UNSUPPORTED_VERSION:
            return exc
        unsupported = exc
    version = (era_2026.meta_of(params) or {}).get(era_2026.VERSION_KEY)
    header = headers.get("MCP-Protocol-Version")
    if header is None:
        return _mismatch("the MCP-Protocol-Version header is required")
    if header.strip() != version:
        return _mismatch(f"MCP-Protocol-Version {header.strip()!r} does not match _meta "
                         f"{version!r}")
    if unsupported is not None:
        return unsupported
    method = message.get("method")
    header = headers.get("Mcp-Method")
    if header is None:
        return _mismatch("the Mcp-Method header is required")
    if header.strip() != method:
        return _mismatch(f"Mcp-Method {header.strip()!r} does not match the body's {method!r}")
    field = NAMED.get(method) if isinstance(method, str) else None
    if field is not None:
        header = headers.get("Mcp-Name")
        if header is None:
            return _mismatch(f"the Mcp-Name header is required for {method}")
        body = params.get(field) if isinstance(params, dict) else None
        try:
            named = _decoded(header)
        except RpcError as exc:
            return exc
        if named != body:
            return _mismatch(f"Mcp-Name does not match params.{field}")
    if tool_schema is not None:
        return _param_refusal(params, headers, tool_schema)
    return None


def status(response: dict[str, Any] | None) -> int:
    """The HTTP status of a stateless response: 404 for an unknown method, 400 for the
    2026 protocol errors, 200 for results and ordinary errors (a malformed _meta is refused
    with 400 by ``refusal`` before the engine sees it)."""
    error = response.get("error") if response is not None else None
    if not isinstance(error, dict):
        return 200
    code = error.get("code")
    if code == METHOD_NOT_FOUND:
        return 404
    return 400 if code in BAD_REQUEST_CODES else 200

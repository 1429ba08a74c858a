"""The one JSON-RPC 2.0 vocabulary: codes, ids, message builders, parsing and batch framing.

Every JSON-RPC door uses it — ``/mcp`` and ``bin/mcp-server`` (``app.mcp``), the playbook proxy
``/rpc`` (``app.playbooks.api``), ``/design-model/rpc`` and ``bin/model-server``
(``app.design_model``) — and adds its own codes on top: MCP's -32002 and -32020…, the design
model's -32000/-32001 with ``data.code``, the proxy's ``CAPTURE_UNWRITABLE``. So a malformed
body gets the same standard code at every door.

The rules, from the JSON-RPC 2.0 specification:

- bytes that are not UTF-8 JSON are -32700 (``NaN`` and ``Infinity`` are not JSON either);
- an empty batch, or anything that is not a request object, is -32600, answered with id null
  when the id cannot be read; each bad item of a batch gets its own -32600;
- a request without ``"id"`` is a notification and never gets an answer;
- application errors live in the server-error range -32000 to -32099.

And one rule of ours (``check_text``): params holding a string no database can store (a NUL
character, a lone surrogate) are -32602 naming where, e.g. ``options.tags[0]``. MCP's tool
arguments are the exception: a tool answers them with an ``isError`` result, as MCP asks of
input a tool cannot take.

Free of Flask and of third-party imports, so ``bin/mcp-server`` answers before the app loads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from app.core import storable

if TYPE_CHECKING:
    from app.services.errors import DomainError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Reserved for implementation-defined server errors; each door names its own inside it.
SERVER_ERROR_MAX = -32000
SERVER_ERROR_MIN = -32099

RequestId = str | int | float | None
Message = dict[str, Any]


class RpcError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_dict(self) -> dict[str, Any]:
        """The error object; ``data`` is left out when there is none."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def domain_error(exc: DomainError) -> RpcError:
    """A domain error as JSON-RPC: its class's code, its message, its data (code, errors…)."""
    return RpcError(exc.jsonrpc_code, exc.message, exc.data())


# -- ids -------------------------------------------------------------------------------------

def valid_id(value: Any) -> bool:
    """An id a response can be matched by: a string or an integer (never a boolean).

    MCP requires this form; it is also what our own outgoing requests use.
    """
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def spec_id(value: Any) -> bool:
    """Any id JSON-RPC 2.0 allows in a request: a string, a number or null."""
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def readable_id(message: Any, id_ok: Callable[[Any], bool] = spec_id) -> RequestId:
    """The id to answer ``message`` with: its own when readable, otherwise null."""
    if isinstance(message, dict) and id_ok(message.get("id")):
        return message.get("id")
    return None


# -- messages --------------------------------------------------------------------------------

def result(request_id: RequestId, value: Any) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: RequestId, exc: RpcError) -> Message:
    # An id that could not be read is answered with id null, as JSON-RPC 2.0 says.
    return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_dict()}


def error_response(request_id: RequestId, code: int, message: str, data: Any = None) -> Message:
    return error(request_id, RpcError(code, message, data))


def notification(method: str, params: dict[str, Any] | None = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def request(request_id: RequestId, method: str, params: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def is_notification(message: Any) -> bool:
    """A request without an id: it runs, and nothing is answered, not even an error."""
    return (isinstance(message, dict) and "id" not in message
            and message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str))


def is_response(message: Any) -> bool:
    return (isinstance(message, dict) and "method" not in message and "id" in message
            and ("result" in message or "error" in message))


# -- parsing and framing ---------------------------------------------------------------------

def encode(message: Any) -> str:
    """Compact JSON on one line: json.dumps escapes newlines inside strings. Text that has no
    UTF-8 form (a lone surrogate, as in a request id sent as ``"\\ud800"`` and echoed back) is
    written as JSON escapes, so every answer can be sent."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    if storable.has_lone_surrogate(text):
        return json.dumps(message, separators=(",", ":"))
    return text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode(raw: bytes | str) -> Any:
    """Parse one body; RpcError(-32700) for bytes that are not UTF-8 JSON."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RpcError(PARSE_ERROR, "Parse error: the message is not valid UTF-8") from None
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise RpcError(PARSE_ERROR, "Parse error: the message is not valid JSON") from None


def check_request(message: Any, id_ok: Callable[[Any], bool] = spec_id) -> Message:
    """``message`` itself when it is a request object; RpcError(-32600) saying why not.

    ``id_ok`` lets a door narrow the ids it takes (MCP: strings and integers only).
    """
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "Invalid Request: expected a JSON object")
    if "id" in message and not id_ok(message["id"]):
        raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or a number")
    if message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
    if not isinstance(message.get("method"), str):
        raise RpcError(INVALID_REQUEST, "Invalid Request: method must be a string")
    if not isinstance(message.get("params", {}), dict | list | None):
        raise RpcError(INVALID_REQUEST, "Invalid Request: params must be an object or an array")
    return message


_DOOR = "jsonrpc_door"
View = TypeVar("View", bound=Callable[..., Any])


def door(view: View) -> View:
    """Marks a web view whose body is JSON-RPC: the web layer's checks of request bodies
    (``app.web.limits``) leave it to the door, which refuses bad params in JSON-RPC."""
    setattr(view, _DOOR, True)
    return view


def is_door(view: Any) -> bool:
    return getattr(view, _DOOR, False) is True


def check_text(params: Any) -> None:
    """RpcError(-32602) naming each string in ``params`` that no database can store (a NUL
    character, a lone surrogate: ``app.core.storable``), so such a request is refused at the
    door, the same way at every door, instead of failing in whatever stores or looks it up."""
    found = storable.problems(params)
    if found:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {storable.describe(found)}",
                       {"param": found[0].field, "errors": [p.as_error() for p in found]})


def requests_of(payload: Any) -> tuple[list[Any], bool]:
    """(the items of a parsed body, whether it was a batch); RpcError(-32600) for ``[]``."""
    if isinstance(payload, list):
        if not payload:
            raise RpcError(INVALID_REQUEST, "Invalid Request: empty batch")
        return payload, True
    return [payload], False


def answer(payload: Any, one: Callable[[Any], Message | None]) -> Any:
    """The answer to a parsed body: ``one`` answers each item (None for no answer).

    Returns a response, a list of responses for a batch, or None when nothing is to be
    answered (a notification, or a batch of notifications only).
    """
    try:
        items, batch = requests_of(payload)
    except RpcError as exc:
        return error(None, exc)
    out = [response for response in map(one, items) if response is not None]
    if not out:
        return None
    return out if batch else out[0]


def answer_body(raw: bytes | str, one: Callable[[Any], Message | None]) -> Any:
    """``answer`` for a raw body, with -32700 for one that does not parse."""
    try:
        payload = decode(raw)
    except RpcError as exc:
        return error(None, exc)
    return answer(payload, one)

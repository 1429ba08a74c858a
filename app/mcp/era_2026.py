"""MCP 2026-07-28, the stateless era: which requests belong to it, what their ``_meta`` must
carry, and what every result gains (``resultType``, caching hints).

A request is *modern* when its ``params._meta`` names a protocol version
(``io.modelcontextprotocol/protocolVersion``) or when it is ``server/discover``; everything
else (``initialize`` and the requests of an initialized session) is the 2025 handshake era.
A modern request carries everything about its client, so it is served with a
``StatelessSession`` built from that ``_meta``: nothing is read from or written to the session
store. Like the rest of ``app.mcp`` below ``server``, this imports nothing from Flask.
"""

from __future__ import annotations

from typing import Any

from app.core import changes
from app.core.jsonrpc import INVALID_PARAMS, RpcError
from app.mcp.context import LEVELS, SessionState
from app.mcp.info import ALL_VERSIONS, MODERN_VERSIONS, capabilities, instructions, server_info
from app.mcp.jsonrpc import UNSUPPORTED_VERSION

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"

DISCOVER = "server/discover"
LISTEN = "subscriptions/listen"
# Requests whose result may be an InputRequiredResult (MRTR); no other may return one.
INTERACTIVE = frozenset({"tools/call", "prompts/get", "resources/read"})
# Cache hints: lists change only with a deploy; what a read returns is per caller and live.
TTL_MS = {DISCOVER: 300_000, "tools/list": 300_000, "prompts/list": 300_000,
          "resources/templates/list": 300_000, "resources/list": 300_000,
          "resources/read": 0, "skills/list": 300_000, "skills/get": 300_000}


class StatelessSession(SessionState):
    """The client as one modern request describes it; lives for that request only."""

    stateless = True

    def __init__(self, session_id: str, transport: str, version: str,
                 client_capabilities: dict[str, Any], client_info: dict[str, Any],
                 log_level: str | None) -> None:
        super().__init__(session_id)
        self.transport = transport
        self.initialized = True
        self.protocol_version = version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        # None: the request named no level, so no notifications/message at all.
        self.log_level = log_level  # type: ignore[assignment]


def meta_of(params: Any) -> dict[str, Any] | None:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


def is_modern(message: dict[str, Any]) -> bool:
    meta = meta_of(message.get("params"))
    return message.get("method") == DISCOVER or (meta is not None and VERSION_KEY in meta)


def unsupported(requested: Any) -> RpcError:
    return RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                    {"supported": list(ALL_VERSIONS), "requested": requested})


def read_meta(params: Any) -> tuple[str, dict[str, Any], dict[str, Any], str | None]:
    """(version, client capabilities, client info, log level) of a modern request.

    RpcError -32602 when a required field is missing or malformed, -32022 when the version
    is not one this server speaks statelessly.
    """
    meta = meta_of(params)
    if meta is None:
        raise RpcError(INVALID_PARAMS, "Invalid params: _meta with "
                       f"{VERSION_KEY} and {CAPABILITIES_KEY} is required")
    version, caps = meta.get(VERSION_KEY), meta.get(CAPABILITIES_KEY)
    if not isinstance(version, str) or not version:
        raise RpcError(INVALID_PARAMS, f"Invalid params: _meta[{VERSION_KEY!r}] is required")
    if not isinstance(caps, dict):
        raise RpcError(INVALID_PARAMS,
                       f"Invalid params: _meta[{CAPABILITIES_KEY!r}] must be an object")
    info = meta.get(CLIENT_INFO_KEY)
    if info is not None and not isinstance(info, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: _meta[{CLIENT_INFO_KEY!r}] must be "
                                       f"an object")
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in LEVELS:
        raise RpcError(INVALID_PARAMS, f"Invalid params: _meta[{LOG_LEVEL_KEY!r}] must be one "
                                       f"of {', '.join(LEVELS)}")
    if version not in MODERN_VERSIONS:
        raise unsupported(version)
    return version, caps, info or {}, level


def session_for(params: Any, session_id: str, transport: str) -> StatelessSession:
    version, caps, info, level = read_meta(params)
    return StatelessSession(session_id, transport, version, caps, info, level)


def discover() -> dict[str, Any]:
    return {"supportedVersions": list(ALL_VERSIONS), "capabilities": capabilities(),
            "instructions": instructions(), "_meta": {SERVER_INFO_KEY: server_info()}}


def finish(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """Add what 2026-07-28 requires on every result: resultType, and cache hints on lists and
    reads (private: what we answer depends on who asks)."""
    result.setdefault("resultType", "complete")
    ttl = TTL_MS.get(method)
    if ttl is not None and result["resultType"] == "complete":
        result.setdefault("ttlMs", ttl)
        result.setdefault("cacheScope", "private")
    return result


# -- subscriptions/listen: the one long-lived stream of the stateless era ---------------------

def listen_filter(params: dict[str, Any]) -> tuple[dict[str, Any], frozenset[str]]:
    """(the filter we honour, the resource URIs to watch) for a subscriptions/listen request.

    Our tool, prompt and resource lists never change while a server runs (listChanged is
    false), so only resourceSubscriptions is honoured; the acknowledgement omits the rest."""
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: notifications (the filter) is required")
    uris = wanted.get("resourceSubscriptions") or []
    if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        raise RpcError(INVALID_PARAMS, "Invalid params: resourceSubscriptions must be a list "
                                       "of URIs")
    honoured: dict[str, Any] = {"resourceSubscriptions": uris} if uris else {}
    return honoured, frozenset(uris)


REFUSED_KEY = "io.harmonic/refused"  # acknowledgement _meta: {uri: why it is not honoured}


def listen_acknowledged(request_id: Any, honoured: dict[str, Any],
                        refused: dict[str, str]) -> dict[str, Any]:
    """The acknowledgement of a listen stream: the filter as honoured, without the resources
    the caller may not read (the spec's "subset the server agreed to honor"), and in
    ``_meta["io.harmonic/refused"]`` why each was left out (what reading it answers)."""
    kept = dict(honoured)
    uris = [u for u in kept.pop("resourceSubscriptions", []) if u not in refused]
    if uris:
        kept["resourceSubscriptions"] = uris
    note = listen_message(request_id, "notifications/subscriptions/acknowledged",
                          {"notifications": kept})
    if refused:
        note["params"]["_meta"][REFUSED_KEY] = refused
    return note


AFTER_KEY = "io.harmonic/after"  # listen _meta: {uri: the last event seq the client has}
EVENT_KEY = "io.harmonic/event"  # resources/updated _meta: the event it announces


def listen_backlog(request_id: Any, params: dict[str, Any], uris: frozenset[str],
                   identity: Any) -> list[dict[str, Any]]:
    """The notifications that replay, for each watched URI with numbered events (a workflow
    run), the events past the client's cursor (``_meta["io.harmonic/after"][uri]``, else all):
    one ``notifications/resources/updated`` per event, the event in its ``_meta``."""
    meta: dict[str, Any] = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
    cursors: dict[str, Any] = meta[AFTER_KEY] if isinstance(meta.get(AFTER_KEY), dict) else {}
    out = []
    for uri in sorted(uris):
        after = cursors.get(uri)
        after = after if isinstance(after, int) and not isinstance(after, bool) else 0
        for event in changes.backlog(uri, after, identity):
            note = listen_message(request_id, "notifications/resources/updated", {"uri": uri})
            note["params"]["_meta"][EVENT_KEY] = event
            out.append(note)
    return out


def listen_message(request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A notification on a listen stream, tagged with the stream's subscription id."""
    return {"jsonrpc": "2.0", "method": method,
            "params": {**params, "_meta": {SUBSCRIPTION_KEY: request_id}}}


def listen_ended(request_id: Any) -> dict[str, Any]:
    """The final response when the server closes a listen stream."""
    return {"jsonrpc": "2.0", "id": request_id,
            "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_KEY: request_id}}}

"""The MCP protocol engine: one JSON-RPC message in, at most one response out.

Transport-neutral: stdio and Streamable HTTP both call ``McpServer.handle`` with the session and
a Channel for notifications and server-to-client requests raised while a request runs.

Two eras share the handlers. A request whose ``_meta`` names a protocol version (or
``server/discover``) is 2026-07-28: it is served with a per-request ``StatelessSession``, the
methods that era removed are unknown, questions become input-required results and every
result gains ``resultType`` (``app.mcp.era_2026``, ``app.mcp.input_required``). Anything else is the
2025 handshake era on the transport's session.

Dispatch is a dict lookup on the method name; see bench/mcp_dispatch.py for why this is plain
code rather than jsonrpcserver (whose per-message schema validation dominates a tools/call).
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from flask import current_app, has_app_context
from jsonschema import Draft202012Validator, validators

from app.core import authorization, jsonrpc, storable
from app.core.identity import Identity, act_as
from app.core.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, RpcError
from app.mcp import era_2026, flat_schema, input_required, negotiate, skills, tasks
from app.mcp.content import ToolError, ToolResult, as_result, error_result
from app.mcp.context import (
    LEVELS,
    Cancelled,
    Channel,
    ClientRequestFailed,
    SessionState,
    ToolContext,
)
from app.mcp.info import (
    LATEST_VERSION,
    SUPPORTED_VERSIONS,
    capabilities,
    instructions,
    server_info,
)
from app.mcp.jsonrpc import RESOURCE_NOT_FOUND
from app.mcp.registry import Registry
from app.services.errors import DomainError, NotFound

log = logging.getLogger("harmonic.mcp")

PAGE_SIZE = 50
# Methods a client may send before the session is initialized.
PRE_INIT = frozenset({"initialize", "ping"})
# Methods 2026-07-28 removed (sessions, ping, setLevel, per-resource subscriptions).
LEGACY_ONLY = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe",
                         "resources/unsubscribe"})


def _params_error(message: str, data: Any = None) -> RpcError:
    return RpcError(INVALID_PARAMS, message, data)


def _uri_of(params: dict[str, Any]) -> str:
    """The resource a resources/read, subscribe or unsubscribe request names."""
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise _params_error("uri is required")
    return uri


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode("ascii")


def _decode_cursor(cursor: Any, total: int) -> int:
    if not isinstance(cursor, str):
        raise _params_error("Invalid cursor")
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        offset = int(text.removeprefix("o:")) if text.startswith("o:") else -1
    except (ValueError, UnicodeError):
        offset = -1
    if offset < 0 or offset > total:
        raise _params_error("Invalid cursor")
    return offset


def _paginate(items: list[dict[str, Any]], params: dict[str, Any], key: str,
              page_size: int) -> dict[str, Any]:
    start = _decode_cursor(params["cursor"], len(items)) if params.get("cursor") is not None else 0
    out: dict[str, Any] = {key: items[start:start + page_size]}
    if start + page_size < len(items):
        out["nextCursor"] = _encode_cursor(start + page_size)
    return out


class _Validators:
    """JSON Schema validators per schema, built on first use (jsonschema is a slow import)."""

    def __init__(self) -> None:
        self._cache: dict[int, Any] = {}
        self._plans: dict[int, tuple[dict[str, Any], flat_schema.Plan | None]] = {}
        self._lock = threading.Lock()

    def errors(self, schema: dict[str, Any], value: Any) -> list[str]:
        key = id(schema)
        known = self._plans.get(key)
        if known is None or known[0] is not schema:  # (the schema itself is kept: ids recur)
            known = self._plans[key] = (schema, flat_schema.plan(schema))
        if known[1] is not None and flat_schema.certainly_valid(known[1], value):
            return []
        validator = self._cache.get(key)
        if validator is None:
            cls = validators.validator_for(schema, default=Draft202012Validator)
            validator = cls(schema)
            with self._lock:
                self._cache[key] = validator
        found = []
        for err in sorted(validator.iter_errors(value), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in err.path)
            message = _unknown_names(err) or err.message
            found.append(f"{where}: {message}" if where else message)
        return found


def _unknown_names(err: Any) -> str | None:
    """An additionalProperties error as "unknown argument x; known: a, b" (so the caller can
    correct the call without guessing), or None for any other error."""
    known = err.schema.get("properties") if isinstance(err.schema, dict) else None
    if err.validator != "additionalProperties" or not isinstance(known, dict) \
            or not isinstance(err.instance, dict):
        return None
    extra = [k for k in err.instance if k not in known]
    if not extra:
        return None
    return (f"unknown argument{'s' if len(extra) > 1 else ''} {', '.join(extra)}; known: "
            f"{', '.join(known) or 'none'}")


class McpServer:
    """Answers MCP requests for one registry. Thread-safe: many requests may run at once."""

    def __init__(self, registry: Registry | None = None, page_size: int = PAGE_SIZE) -> None:
        self.registry = registry
        self.page_size = page_size
        self.validators = _Validators()
        self._checked: set[str] = set()  # tools whose output was checked once (``_checks``)
        self._inflight: dict[tuple[str, Any], threading.Event] = {}
        self._lock = threading.Lock()
        self.methods: dict[str, Callable[..., dict[str, Any] | None]] = {
            "initialize": self._initialize,
            "ping": lambda ctx, params: {},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
            "logging/setLevel": self._set_level,
        }
        self.methods.update(skills.METHODS)  # the skills extension, in both eras
        self.methods.update(tasks.METHODS)  # the tasks extension, in both eras
        self.modern_methods: dict[str, Callable[..., dict[str, Any] | None]] = {
            name: handler for name, handler in self.methods.items() if name not in LEGACY_ONLY}
        self.modern_methods[era_2026.DISCOVER] = lambda ctx, params: era_2026.discover()

    # -- entry point ------------------------------------------------------------------------

    def handle(self, message: Any, session: SessionState | None, channel: Channel,
               identity: Identity | None = None, stateless: bool | None = None,
               origin: str = "") -> dict[str, Any] | None:
        """Process one parsed message; return the response, or None (notification/cancelled).

        Responses from the client to our own requests are routed by the transport before
        this is called. ``stateless`` forces the era (HTTP knows it from the headers);
        None decides from the message. A stateless request needs no ``session``. ``origin``
        is the HTTP request's own scheme://host (``ToolContext.origin``).
        """
        act_as(identity)  # what this message makes is recorded as made by its token
        if isinstance(message, list):
            return jsonrpc.error(None, RpcError(INVALID_REQUEST,
                                                "Invalid Request: batches are not supported"))
        if jsonrpc.is_notification(message):
            params = message.get("params", {})
            if isinstance(params, dict) and session is not None:  # stateless: nothing to cancel
                self._notification(message["method"], params, session)
            return None
        try:
            jsonrpc.check_request(message, jsonrpc.valid_id)  # MCP ids: strings or integers
        except RpcError as exc:
            return jsonrpc.error(jsonrpc.readable_id(message, jsonrpc.valid_id), exc)
        method, params, request_id = message["method"], message.get("params", {}), message["id"]
        if params is None:
            params = {}
        try:  # text no database stores: refused here for every method (tool arguments: below)
            jsonrpc.check_text(_without_arguments(method, params))
        except RpcError as exc:
            return jsonrpc.error(request_id, exc)
        if stateless or (stateless is None and era_2026.is_modern(message)):
            # stdio keeps its id so notifications/cancelled still finds the call.
            sid, transport = ((session.id, session.transport) if session is not None
                              else ("stateless", "http"))
            return self._respond(request_id, method, lambda: self._modern(
                method, params, request_id, sid, transport, channel, identity, origin))
        assert session is not None
        return self._respond(request_id, method, lambda: self._legacy(
            method, params, request_id, session, channel, identity, origin))

    def _respond(self, request_id: Any, method: str,
                 call: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
        """The response to one request: its result, its error, or None when cancelled."""
        try:
            value = call()
        except RpcError as exc:
            return jsonrpc.error(request_id, exc)
        except Cancelled:
            return None
        except Exception:
            log.exception("MCP %s failed", method)
            return jsonrpc.error(request_id, RpcError(jsonrpc.INTERNAL_ERROR, "Internal error"))
        if value is None:  # cancelled while running: the spec says answer nothing
            return None
        return jsonrpc.result(request_id, value)

    def _legacy(self, method: str, params: Any, request_id: Any, session: SessionState,
                channel: Channel, identity: Identity | None,
                origin: str = "") -> dict[str, Any] | None:
        """One 2025-era request on an initialized (or initializing) session."""
        if not isinstance(params, dict):
            raise _params_error("params must be an object")
        handler = self.methods.get(method)
        if handler is None:
            raise RpcError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
        if not session.initialized and method not in PRE_INIT:
            raise RpcError(INVALID_REQUEST, "Server not initialized: send initialize first")
        return handler(self._context(session, channel, identity, request_id, params, origin),
                       params)

    def _modern(self, method: str, params: Any, request_id: Any, session_id: str,
                transport: str, channel: Channel, identity: Identity | None,
                origin: str = "") -> dict[str, Any] | None:
        """One 2026-07-28 request: _meta checked, no session touched, MRTR for questions."""
        if not isinstance(params, dict):
            raise _params_error("params must be an object")
        session = era_2026.session_for(params, session_id, transport)
        handler = self.modern_methods.get(method)
        if handler is None:
            raise RpcError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
        ctx = self._context(session, channel, identity, request_id, params, origin)
        known: dict[str, Any] = {}
        if method in era_2026.INTERACTIVE:
            known, ctx.resumed = input_required.answers(method, params, identity)
        ctx.inputs = known  # other methods get none: a question there is a server bug
        try:
            value = handler(ctx, params)
        except input_required.InputRequired as exc:
            if method not in era_2026.INTERACTIVE:
                raise RuntimeError(f"{method} asked the client a question") from exc
            return input_required.result(exc, method, params, identity, known)
        return None if value is None else era_2026.finish(method, value)

    def _context(self, session: SessionState, channel: Channel, identity: Identity | None,
                 request_id: Any, params: dict[str, Any], origin: str = "") -> ToolContext:
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not jsonrpc.valid_id(token):
            token = None
        return ToolContext(identity=identity, session=session, channel=channel,
                           request_id=request_id, progress_token=token, origin=origin,
                           observed=True)  # this server tells its call observers

    def _notification(self, method: str, params: dict[str, Any], session: SessionState) -> None:
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            if jsonrpc.valid_id(request_id):
                self.cancel(session, request_id)
        # notifications/initialized, progress, roots/list_changed: nothing to do; unknown
        # notifications are ignored, as JSON-RPC requires.

    def cancel(self, session: SessionState, request_id: Any) -> bool:
        """Stop an in-flight request of this session if this process runs it."""
        with self._lock:
            event = self._inflight.get((session.id, request_id))
        if event is not None:
            event.set()
            return True
        return False

    # -- lifecycle --------------------------------------------------------------------------

    def _initialize(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        session = ctx.session
        if session.initialized:
            raise RpcError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise _params_error("protocolVersion is required")
        client_caps = params.get("capabilities", {})
        client_info = params.get("clientInfo", {})
        if not isinstance(client_caps, dict) or not isinstance(client_info, dict):
            raise _params_error("capabilities and clientInfo must be objects")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        session.protocol_version = version
        session.client_capabilities = client_caps
        session.client_info = client_info
        session.initialized = True
        session.save()
        return {"protocolVersion": version, "capabilities": capabilities(),
                "serverInfo": server_info(), "instructions": instructions()}

    def _set_level(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        level = params.get("level")
        if level not in LEVELS:
            raise _params_error(f"Invalid log level; use one of {', '.join(LEVELS)}")
        ctx.session.log_level = level
        ctx.session.save()
        return {}

    # -- tools ------------------------------------------------------------------------------

    def _registry(self) -> Registry:
        if self.registry is None:
            raise RpcError(jsonrpc.INTERNAL_ERROR, "the server is still starting")
        return self.registry

    def find_tool(self, name: str) -> Any:
        """The registered tool of that name, or None."""
        return self._registry().tools.get(name)

    def _tools_list(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        apps = negotiate.shows_apps(ctx, params)  # _meta.ui and app-only tools: Apps hosts only
        tools = [t.describe(apps) for t in self._registry().tools.values()
                 if apps or not t.app_only]
        return _paginate(tools, params, "tools", self.page_size)

    def _tools_call(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any] | None:
        name = params.get("name")
        if not isinstance(name, str):
            raise _params_error("name is required")
        tool = self._registry().tools.get(name)
        apps = negotiate.shows_apps(ctx, params)
        if tool is None or (tool.app_only and not apps):  # (app-only: not offered to it)
            # Named with the tools there are, so a mistyped name is fixed in one more call.
            known = [t.name for t in self._registry().tools.values() if apps or not t.app_only]
            raise _params_error(f"Unknown tool: {name}. Tools: {', '.join(known)}",
                                {"tools": known})
        args = params.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise _params_error("arguments must be an object")
        # The one authorization question, from the effect of this very call (the action
        # execute_action runs, the method upstream_call calls, whether replay writes), before
        # the arguments are validated or anything runs; nothing is recorded for a refusal.
        refused = authorization.refusal(ctx.identity, tool.call_effect(args),
                                        tool.call_subject(args))
        if refused is not None:
            return error_result(f"{refused.kind} ({refused.http_status}): {refused.message}",
                                {"error": refused.data()}).to_dict()
        unstorable = storable.problems(args)
        if unstorable:  # input the tool cannot take: a tool error naming the argument (MCP)
            return error_result(f"Invalid arguments for {name}: "
                                + storable.describe(unstorable)).to_dict()
        problems = self.validators.errors(tool.input_schema, args)
        if problems:
            return error_result(f"Invalid arguments for {name}: " + "; ".join(problems)).to_dict()
        if tool.task_support != "forbidden":  # the server, not the client, decides (SEP-2663)
            if tasks.declared(ctx, params):
                if tool.task_prepare is not None:
                    tool.task_prepare(ctx, args)  # may ask first: an input-required result
                started = time.perf_counter()
                created = tasks.create(ctx, name, args)
                self._observe(ctx, name, args, created, time.perf_counter() - started)
                return created
            if tool.task_support == "required":
                raise tasks.missing()
        key = (ctx.session.id, ctx.request_id)
        with self._lock:
            self._inflight[key] = ctx.cancel_event
        started = time.perf_counter()
        try:
            result = self._run_tool(tool, ctx, args)
        finally:
            with self._lock:
                self._inflight.pop(key, None)
        out = None if result is None or ctx.cancel_event.is_set() else result.to_dict()
        self._observe(ctx, name, args, out, time.perf_counter() - started)
        return out

    def _observe(self, ctx: ToolContext, name: str, args: dict[str, Any],
                 out: dict[str, Any] | None, seconds: float) -> None:
        for observer in self._registry().observers:
            try:
                observer(ctx, name, args, out, seconds)
            except Exception:  # an observer must never turn a done call into a failure
                log.exception("observer %s failed on a call of %s",
                              getattr(observer, "__name__", observer), name)

    def _run_tool(self, tool: Any, ctx: ToolContext, args: dict[str, Any]) -> ToolResult | None:
        try:
            result = as_result(tool.handler(ctx, args))
        except (input_required.InputRequired, RpcError):
            raise  # questions for the client, or a protocol error such as -32021
        except Cancelled:
            return None
        except ToolError as exc:
            return error_result(exc.message, exc.structured)
        except ClientRequestFailed as exc:
            return error_result(str(exc))
        except DomainError as exc:
            return error_result(f"{exc.kind}: {exc.message}")
        except Exception:
            log.exception("tool %s failed", tool.name)
            return error_result(f"{tool.name} failed with an internal error")
        if tool.output_schema is not None and not result.is_error and self._checks(tool.name):
            if result.structured is None:
                log.error("tool %s returned no structured content", tool.name)
                return error_result(f"{tool.name} produced no structured result")
            problems = self.validators.errors(tool.output_schema, result.structured)
            if problems:
                log.error("tool %s output does not match its schema: %s", tool.name, problems)
                return error_result(f"{tool.name} produced an invalid result")
        return result

    def _checks(self, name: str) -> bool:
        """Whether to check this call's structured result against the tool's output schema.

        Every tool with an output schema is ours: the check guards against our own mistakes,
        and on a busy page jsonschema's check costs more than the rest of navigate's own work.
        It runs on every call under tests and in debug mode, where every
        tool's output is exercised, and otherwise on the first call of each tool in each
        process, so a result that drifted from its schema still shows in the log at once."""
        if has_app_context() and (current_app.testing or current_app.debug):
            return True
        if name in self._checked:
            return False
        self._checked.add(name)
        return True

    # -- resources --------------------------------------------------------------------------

    def _resources_list(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        items = [r.describe() for r in self._registry().resources.values()]
        return _paginate(items, params, "resources", self.page_size)

    def _templates_list(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        items = [t.describe() for t in self._registry().templates.values()]
        return _paginate(items, params, "resourceTemplates", self.page_size)

    def _resources_read(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        return self.read(ctx, _uri_of(params))

    def read(self, ctx: ToolContext, uri: str) -> dict[str, Any]:
        """The resources/read result of ``uri`` for the caller, or the RpcError it answers: the
        one test of whether a caller may read a resource (subscribing asks it too)."""
        registry = self._registry()
        static = registry.resources.get(uri)
        try:
            if static is not None:
                value, mime = static.handler(ctx), static.mime_type
            else:
                for template in registry.templates.values():
                    variables = template.match(uri)
                    if variables is not None:
                        value, mime = template.handler(ctx, uri, variables), template.mime_type
                        break
                else:
                    raise _not_found(ctx, uri)
        except NotFound as exc:  # MCP has its own code (and era rules) for a resource not there
            raise _not_found(ctx, uri, exc.message) from None
        except DomainError as exc:
            raise RpcError(exc.jsonrpc_code, exc.message, {**exc.data(), "uri": uri}) from None
        except ToolError as exc:
            raise _params_error(exc.message, {"uri": uri}) from None
        if isinstance(value, str):
            value = [{"uri": uri, "mimeType": mime, "text": value}]
        elif isinstance(value, bytes):
            value = [{"uri": uri, "mimeType": mime,
                      "blob": base64.b64encode(value).decode("ascii")}]
        return {"contents": value}

    def _subscribe(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        uri = _uri_of(params)
        # Only what the caller may read, with the answer reading it gives (a studio's page is
        # its members'); whether they still may is asked again at every event
        # (app.core.audience).
        self.read(ctx, uri)
        ctx.session.subscriptions.add(uri)
        ctx.session.save()
        return {}

    def refusals(self, uris: Iterable[str], identity: Identity | None, session: SessionState,
                 channel: Channel, origin: str = "") -> dict[str, str]:
        """Why the caller may not read each of ``uris`` that it may not (the message
        resources/read answers): what a subscriptions/listen stream leaves out."""
        ctx = self._context(session, channel, identity, None, {}, origin)
        refused: dict[str, str] = {}
        for uri in uris:
            try:
                self.read(ctx, uri)
            except RpcError as exc:
                refused[uri] = exc.message
        return refused

    def _unsubscribe(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        uri = _uri_of(params)
        ctx.session.subscriptions.discard(uri)
        ctx.session.save()
        return {}

    # -- prompts and completion -------------------------------------------------------------

    def _prompts_list(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        items = [p.describe() for p in self._registry().prompts.values()]
        return _paginate(items, params, "prompts", self.page_size)

    def _prompts_get(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        prompt = self._registry().prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise _params_error(f"Unknown prompt: {name}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise _params_error("arguments must be an object of strings")
        missing = [a.name for a in prompt.arguments if a.required and not args.get(a.name)]
        if missing:
            raise _params_error(f"Missing required arguments: {', '.join(missing)}")
        try:
            value = prompt.handler(ctx, args)
        except DomainError as exc:
            raise jsonrpc.domain_error(exc) from None
        except ToolError as exc:
            raise _params_error(exc.message) from None
        if isinstance(value, dict):
            return value
        return {"description": prompt.description, "messages": value}

    def _complete(self, ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise _params_error("ref and argument are required")
        arg_name, prefix = argument.get("name"), argument.get("value", "")
        if not isinstance(arg_name, str) or not isinstance(prefix, str):
            raise _params_error("argument needs a name and a string value")
        context = params.get("context") or {}
        context_args = context.get("arguments") if isinstance(context, dict) else None
        registry = self._registry()
        values: list[str] = []
        if ref.get("type") == "ref/prompt":
            prompt = registry.prompts.get(ref.get("name"))  # type: ignore[arg-type]
            if prompt is None:
                raise _params_error(f"Unknown prompt: {ref.get('name')}")
            for arg in prompt.arguments:
                if arg.name == arg_name and arg.complete is not None:
                    values = list(arg.complete(ctx, prefix, context_args or {}))
        elif ref.get("type") == "ref/resource":
            uri = ref.get("uri")
            template = registry.templates.get(uri)  # type: ignore[arg-type]
            if template is None and uri not in registry.resources:
                raise _params_error(f"Unknown resource: {uri}")
            if template is not None and template.complete is not None:
                known = {k: v for k, v in (context_args or {}).items() if isinstance(v, str)}
                values = list(template.complete(ctx, arg_name, prefix, known))
        else:
            raise _params_error("ref.type must be ref/prompt or ref/resource")
        out: dict[str, Any] = {"values": values[:100], "total": len(values),
                               "hasMore": len(values) > 100}
        return {"completion": out}


def _without_arguments(method: str, params: Any) -> Any:
    """The params ``check_text`` reads: a tool call's arguments are its tool's to refuse."""
    if method == "tools/call" and isinstance(params, dict) and "arguments" in params:
        return {key: value for key, value in params.items() if key != "arguments"}
    return params


def _not_found(ctx: ToolContext, uri: str, why: str | None = None) -> RpcError:
    """Which resource was not found, why if the handler said, and how to list what exists."""
    # 2025-11-25 has its own code; 2026-07-28 (SEP-2164) reports it as invalid params.
    code = INVALID_PARAMS if ctx.inputs is not None else RESOURCE_NOT_FOUND
    detail = f" ({why})" if why else " (no resource or template has this URI)"
    return RpcError(code, f"Resource not found: {uri}{detail}. resources/list and "
                          f"resources/templates/list show what can be read",
                    {"uri": uri, **({"reason": why} if why else {})})



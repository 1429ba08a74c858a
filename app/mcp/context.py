"""What a tool, resource or prompt handler gets as ``ctx``: who, which session, and a way back.

A ``Channel`` is the transport's side of one in-flight request: stdio writes to stdout, HTTP
writes to that POST's SSE stream. A ``SessionState`` is the MCP session (memory for stdio, a
database row for HTTP so any process can serve any request, or, in the stateless 2026-07-28
era, what the request's ``_meta`` says: ``app.mcp.era_2026.StatelessSession``).

Questions to the client (``ask``, ``elicit``, ``sample``) are server-to-client requests in the
2025 era and input-required results in the 2026 era (``app.mcp.input_required``); handlers do
not care which, as long as they ask before they write.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.core.identity import Identity
from app.core.jsonrpc import RpcError
from app.mcp.input_required import InputRequired
from app.mcp.jsonrpc import MISSING_CAPABILITY

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Cancelled(Exception):
    """The client sent notifications/cancelled for this request: stop and answer nothing."""


class ClientRequestFailed(Exception):
    """A server-to-client request (elicitation, sampling) failed, was refused or timed out."""


class Channel(Protocol):
    """May also have ``closed`` (a threading.Event): set, it cancels the call."""

    def notify(self, message: dict[str, Any]) -> None: ...

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]: ...


class QuietChannel:
    """A channel with no client behind it (a queued workflow step, a replay): notifications go
    nowhere and a request to the client is refused with ``refusal``."""

    def __init__(self, refusal: str) -> None:
        self.refusal = refusal

    def notify(self, message: dict[str, Any]) -> None:
        return None

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]:
        raise ClientRequestFailed(f"{method}: {self.refusal}")


class SessionState:
    """One MCP session. Subclasses persist it; this base keeps it in memory (stdio)."""

    transport = "stdio"
    stateless = False  # True for a 2026-07-28 request: nothing is remembered between requests

    def __init__(self, session_id: str = "stdio") -> None:
        self.id = session_id
        self.initialized = False
        self.protocol_version = ""
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.log_level = "info"
        self.current_path: str | None = None
        self.subscriptions: set[str] = set()

    def save(self) -> None:
        """Persist changed fields (navigation, log level, subscriptions)."""

    def is_cancelled(self, request_id: Any) -> bool:
        """Cancellation recorded elsewhere (another process); memory sessions have none."""
        return False


@dataclass
class ToolContext:
    identity: Identity | None  # None when /mcp runs with auth off (loopback only)
    session: SessionState
    channel: Channel
    request_id: Any = None
    progress_token: Any = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    logger_name: str = "harmonic"
    # What the audit log should record as the call's path and action, when a tool knows them.
    audit: dict[str, Any] = field(default_factory=dict)
    # Whether call observers (the audit) hear of this call when it ends: only calls the
    # server answers; not a task's background run (its call was recorded when the task was
    # created) nor a playbook replay's steps.
    observed: bool = False
    started: float = field(default_factory=time.perf_counter)
    # Modern era: the answers this request brought (inputResponses and a verified
    # requestState); None in the 2025 era, where questions are requests to the client.
    inputs: dict[str, Any] | None = None
    resumed: bool = False  # a verified requestState came back with this request
    # The origin (scheme://host[:port]) the client reached us at over HTTP, whose absolute URLs
    # count as this app's besides HARMONIC_BASE_URL's; empty for stdio.
    origin: str = ""
    _last_progress: float | None = None
    _last_remote_check: float = 0.0
    _asked: int = 0

    def progress(self, progress: float, total: float | None = None,
                 message: str | None = None) -> None:
        """Report progress; a no-op unless the client asked for it. Values must increase."""
        if self.progress_token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.channel.notify({"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": params})

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send notifications/message when ``level`` is at or above the session's level."""
        if level not in LEVELS:
            raise ValueError(f"unknown log level {level}")
        threshold = self.session.log_level
        if threshold is None or LEVELS.index(level) < LEVELS.index(threshold):
            return  # a modern request without a logLevel gets no log messages
        self.channel.notify({"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": level, "logger": logger or self.logger_name,
                                        "data": data}})

    def cancelled(self) -> bool:
        if self.cancel_event.is_set():
            return True
        closed = getattr(self.channel, "closed", None)  # 2026 HTTP: the client hung up
        if closed is not None and closed.is_set():
            self.cancel_event.set()
            return True
        # Another process may have recorded the cancellation; look at most every 100 ms.
        now = time.monotonic()
        if now - self._last_remote_check >= 0.1:
            self._last_remote_check = now
            if self.session.is_cancelled(self.request_id):
                self.cancel_event.set()
        return self.cancel_event.is_set()

    def check_cancelled(self) -> None:
        if self.cancelled():
            raise Cancelled()

    def sleep(self, seconds: float) -> None:
        """Wait, but wake up and raise Cancelled as soon as the call is cancelled."""
        deadline = time.monotonic() + seconds
        while True:
            self.check_cancelled()
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.cancel_event.wait(min(left, 0.05))

    def request(self, method: str, params: dict[str, Any],
                timeout: float = 300.0) -> dict[str, Any]:
        """Send a request to the client and wait for its answer (the result object).

        2025 era only; in the 2026 era use ``ask``, which works in both."""
        return self.channel.request(method, params, self, timeout)

    def ask(self, questions: dict[str, tuple[str, dict[str, Any]]],
            timeout: float = 300.0) -> dict[str, dict[str, Any]]:
        """Ask the client one or more questions ``{key: (method, params)}``; answers by key.

        2025 era: one server-to-client request after another. 2026 era: the answers the
        request brought, or ``InputRequired`` for those it did not (the engine turns that
        into an input-required result and the client retries with the answers)."""
        if self.inputs is None:
            return {key: self.request(method, params, timeout)
                    for key, (method, params) in questions.items()}

        missing = {key: {"method": method, "params": params}
                   for key, (method, params) in questions.items() if key not in self.inputs}
        if missing:
            raise InputRequired(missing)
        return {key: self.inputs[key] for key in questions}

    def _key(self, prefix: str, key: str | None) -> str:
        self._asked += 1  # the same questions in the same order on every retry
        return key or f"{prefix}-{self._asked}"

    def require(self, capability: str) -> None:
        """The client must have declared ``capability``: ClientRequestFailed in the 2025 era
        (the tool reports it), -32021 in the 2026 era (a protocol error, as the spec says)."""
        if capability in (self.session.client_capabilities or {}):
            return
        if self.inputs is None:
            raise ClientRequestFailed(f"this client does not support {capability}")

        raise RpcError(MISSING_CAPABILITY, f"Missing required client capability: {capability}",
                       {"requiredCapabilities": {capability: {}}})

    def elicit(self, message: str, requested_schema: dict[str, Any],
               timeout: float = 300.0, key: str | None = None) -> dict[str, Any]:
        """Ask the user for input (elicitation/create); returns {action, content?}."""
        self.require("elicitation")
        key = self._key("elicitation", key)
        answer = self.ask({key: ("elicitation/create",
                                 {"message": message, "requestedSchema": requested_schema})},
                          timeout)[key]
        if answer.get("action") not in ("accept", "decline", "cancel"):
            raise ClientRequestFailed("the elicitation answer has no valid action")
        return answer

    def sample(self, messages: list[dict[str, Any]], max_tokens: int,
               timeout: float = 300.0, key: str | None = None, **extra: Any) -> dict[str, Any]:
        """Ask the client's model for a completion (sampling/createMessage)."""
        self.require("sampling")
        key = self._key("sampling", key)
        return self.ask({key: ("sampling/createMessage",
                               {"messages": messages, "maxTokens": max_tokens, **extra})},
                        timeout)[key]

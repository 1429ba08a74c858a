"""What a tool, resource or prompt handler gets as ``ctx``: who, which session, and a way back.

A ``Channel`` is the transport's side of one in-flight request: stdio writes to stdout, HTTP
writes to that POST's SSE stream. A ``SessionState`` is the MCP session (memory for stdio, a
database row for HTTP so any process can serve any request).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Cancelled(Exception):
    """The client sent notifications/cancelled for this request: stop and answer nothing."""


class ClientRequestFailed(Exception):
    """A server-to-client request (elicitation, sampling) failed, was refused or timed out."""


class Channel(Protocol):
    def notify(self, message: dict[str, Any]) -> None: ...

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]: ...


class SessionState:
    """One MCP session. Subclasses persist it; this base keeps it in memory (stdio)."""

    transport = "stdio"

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
    identity: Any  # app.web.auth.Identity, or None when /mcp runs with auth off
    session: SessionState
    channel: Channel
    request_id: Any = None
    progress_token: Any = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    logger_name: str = "harmonic"
    # What the audit log should record as the call's path and action, when a tool knows them.
    audit: dict[str, Any] = field(default_factory=dict)
    _last_progress: float | None = None
    _last_remote_check: float = 0.0

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
        if LEVELS.index(level) < LEVELS.index(self.session.log_level):
            return
        self.channel.notify({"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": level, "logger": logger or self.logger_name,
                                        "data": data}})

    def cancelled(self) -> bool:
        if self.cancel_event.is_set():
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
        """Send a request to the client and wait for its answer (the result object)."""
        return self.channel.request(method, params, self, timeout)

    def elicit(self, message: str, requested_schema: dict[str, Any],
               timeout: float = 300.0) -> dict[str, Any]:
        """Ask the user for input (elicitation/create); returns {action, content?}."""
        if "elicitation" not in self.session.client_capabilities:
            raise ClientRequestFailed("this client does not support elicitation")
        return self.request("elicitation/create",
                            {"message": message, "requestedSchema": requested_schema}, timeout)

    def sample(self, messages: list[dict[str, Any]], max_tokens: int,
               timeout: float = 300.0, **extra: Any) -> dict[str, Any]:
        """Ask the client's model for a completion (sampling/createMessage)."""
        if "sampling" not in self.session.client_capabilities:
            raise ClientRequestFailed("this client does not support sampling")
        return self.request("sampling/createMessage",
                            {"messages": messages, "maxTokens": max_tokens, **extra}, timeout)

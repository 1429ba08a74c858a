"""The stdio transport behind ``bin/mcp-server``: one JSON-RPC message per line.

stdout carries protocol messages only (``sys.stdout`` is pointed at stderr so a stray print
can never corrupt the stream); logs go to stderr. The app starts loading on a background
thread as soon as the process starts, and the token is checked right after it loads:
``initialize`` (and a modern client's ``server/discover``) waits for that check, so a bad token
fails the handshake with a JSON-RPC error naming the problem (``-32001``, ``data.reason``
unknown, revoked or expired), and the process then exits with code 2. ``ping`` is answered
without waiting. Requests run on worker threads so ``notifications/cancelled`` and the client's
answers to elicitation/sampling are read while a tool runs.

End of input ends the session, not the work: every request read before it is answered (in the
order they run; a cancelled one, as always, is not), then the process exits with 0. A call
that waits on the client (elicitation, sampling, roots) fails at once from then on, since no
answer can come. SIGTERM ends the process sooner: the call running finishes, queued ones do
not start.

Both eras on one process: ``initialize`` starts a 2025 session; a request whose ``_meta``
names 2026-07-28 (first of all the ``server/discover`` probe of a modern client) is served
statelessly from that ``_meta``. ``subscriptions/listen`` is answered on the reader thread:
the acknowledgement, then resource updates, until the client cancels it. Updates (of a listen
stream or a 2025 subscription) are told only while the token's person may read the resource
(``app.mcp.hearing``), by a delivery thread, or by a call just before its answer.
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO

from app.core import changes, feed, jsonrpc
from app.core.identity import Identity
from app.core.jsonrpc import INVALID_REQUEST, RpcError
from app.core.token_cache import identity_from_token
from app.db import serving
from app.extensions import db
from app.mcp import era_2026, wire
from app.mcp.context import ClientRequestFailed, SessionState, ToolContext
from app.mcp.hearing import Hearing
from app.mcp.info import MODERN_VERSIONS
from app.mcp.jsonrpc import UNAUTHORIZED, UNSUPPORTED_VERSION
from app.mcp.registry import REGISTRY
from app.mcp.server import McpServer
from app.services.errors import Unauthorized
from config import env  # the same setting, and default, as the web app's body limit

log = logging.getLogger("harmonic.mcp.stdio")

DEFAULT_MAX_MESSAGE = 1024 * 1024  # when HARMONIC_MAX_BODY is not a number
# Answered on the reader thread without loading the app: they never touch the database.
INLINE = frozenset({"initialize", "ping", "logging/setLevel"})
# Answered only once the token is known to be good: the handshake of either era.
HANDSHAKES = frozenset({"initialize", era_2026.DISCOVER})
# A server/discover answered this long after it arrived may have been given up by its client
# (the official SDK waits 10 s) which then falls back to initialize.
LATE_DISCOVER_SECONDS = 5.0


class TokenError(Exception):
    """HARMONIC_API_TOKEN is missing or not an active token; ``reason`` says which."""

    def __init__(self, message: str, reason: str = "unknown") -> None:
        super().__init__(message)
        self.reason = reason

    def rpc_error(self) -> RpcError:
        return RpcError(UNAUTHORIZED, str(self), {"reason": self.reason})


class AppStartError(Exception):
    """The Flask app (settings, database) could not be loaded."""

    def rpc_error(self) -> RpcError:
        return RpcError(jsonrpc.INTERNAL_ERROR, str(self))


class _Pending:
    """A server-to-client request waiting for the client's response line."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.response: dict[str, Any] | None = None


class StdioTransport:
    def __init__(self, token: str, stdin: BinaryIO, stdout: BinaryIO,
                 load_app: Callable[[], Any], max_message: int = DEFAULT_MAX_MESSAGE) -> None:
        self.token = token
        self.stdin, self.stdout = stdin, stdout
        self.load_app = load_app
        self.max_message = max_message
        self.server = McpServer()
        # Its own id per process: what belongs to "this MCP session" (a teach session) must not
        # be shared with another bin/mcp-server started with the same token.
        self.session = SessionState(f"stdio-{uuid.uuid4().hex[:16]}")
        self.app: Any = None
        self._loader: threading.Thread | None = None
        self._late_discover = False  # a server/discover was answered after a slow start
        self._start_lock = threading.Lock()
        self._ready = threading.Event()
        self._start_error: TokenError | AppStartError | None = None
        self._write_lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._input_closed = threading.Event()  # EOF: the client can answer nothing more
        # Request ids submitted to the worker and not finished, and those cancelled before
        # their turn came (so they are skipped, not answered).
        self._queued: set[Any] = set()
        self._cancelled_early: set[Any] = set()
        self._ids = itertools.count(1)
        # Open subscriptions/listen streams: request id -> the events listener feeding it.
        self._listens: dict[Any, Callable[[str], None]] = {}
        # Changes heard, told only if the token's person may still read them (app.mcp.hearing).
        self._hearing: Any = None
        # One worker: requests run in the order they arrive (navigate, then the action on that
        # page), while this reader thread stays free for cancellations and client answers.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp")

    # -- output -----------------------------------------------------------------------------

    def write(self, message: dict[str, Any]) -> None:
        wire.message("stdio", "out", message)
        data = (jsonrpc.encode(message) + "\n").encode("utf-8")
        with self._write_lock:
            try:
                self.stdout.write(data)
                self.stdout.flush()
            except (BrokenPipeError, ValueError):
                pass  # the client went away; the reader will see EOF

    # Channel protocol: notifications and server-to-client requests share stdout.
    def notify(self, message: dict[str, Any]) -> None:
        self.write(message)

    def request(self, method: str, params: dict[str, Any], ctx: ToolContext,
                timeout: float) -> dict[str, Any]:
        gone = f"the client closed its input: it cannot answer {method}"
        if self._input_closed.is_set():
            raise ClientRequestFailed(gone)
        request_id = f"srv-{next(self._ids)}"
        pending = self._pending[request_id] = _Pending()
        try:
            self.write(jsonrpc.request(request_id, method, params))
            deadline = time.monotonic() + timeout
            while not pending.done.wait(0.05):
                ctx.check_cancelled()
                if self._input_closed.is_set():
                    raise ClientRequestFailed(gone)
                if time.monotonic() > deadline:
                    raise ClientRequestFailed(f"the client did not answer {method} in time")
        finally:
            self._pending.pop(request_id, None)
        response = pending.response or {}
        if "error" in response:
            error = response["error"] if isinstance(response["error"], dict) else {}
            raise ClientRequestFailed(f"{method} failed: {error.get('message', 'error')}")
        result = response.get("result")
        return result if isinstance(result, dict) else {}

    def _on_resource_updated(self, uri: str) -> None:
        if uri in self.session.subscriptions and self._hearing is not None:
            self._hearing.put(uri, jsonrpc.notification("notifications/resources/updated",
                                                        {"uri": uri}))

    # -- app and identity -------------------------------------------------------------------

    def start(self) -> None:
        """Begin loading the app (and checking the token) on a background thread."""
        with self._start_lock:
            if self._loader is None:
                self._loader = threading.Thread(target=self._load, name="mcp-start",
                                                daemon=True)
                self._loader.start()

    def _load(self) -> None:
        try:
            try:
                app = self.load_app()
            except Exception as exc:  # e.g. the database is unreachable: say why, then stop
                log.debug("start-up failure", exc_info=True)
                raise AppStartError(f"could not start the app: {type(exc).__name__}: "
                                    f"{exc}") from None

            with app.app_context():
                self.identity()  # fail fast on a bad token
            self.server.registry = REGISTRY
            # (not at the top: the process starts before this)

            self._hearing = Hearing(app, self.identity)
            self._hearing.tell_in_background(self.notify)
            changes.listen(self._on_resource_updated)
            feed.ensure_started(app)  # changes made by web processes reach this session too
            self.app = app
        except (TokenError, AppStartError) as exc:
            self._start_error = exc
        except Exception as exc:  # never leave a waiting handshake hanging
            log.exception("start-up failure")
            self._start_error = AppStartError(f"could not start the app: {exc}")
        finally:
            self._ready.set()

    def ensure_app(self) -> None:
        """Wait for the app and the token check; raise TokenError or AppStartError."""
        if self.app is not None:
            return
        self.start()
        self._ready.wait()
        if self._start_error is not None:
            raise self._start_error

    def identity(self) -> Identity:
        """Resolve the token again for every call, so a revoked token stops working within a
        second (the token cache's bound; at once when revoked in this process)."""
        try:
            return identity_from_token(self.token)
        except Unauthorized as exc:
            reason = exc.details.get("reason")
            raise TokenError(f"HARMONIC_API_TOKEN is not usable: {exc.message}",
                             reason if isinstance(reason, str) else "unknown") from None

    def _run_queued(self, message: dict[str, Any]) -> None:
        try:
            self.run_with_app(message)
        finally:
            if jsonrpc.valid_id(message.get("id")):
                self._queued.discard(message["id"])

    def run_with_app(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if jsonrpc.valid_id(request_id) and request_id in self._cancelled_early:
            self._cancelled_early.discard(request_id)
            return  # cancelled while it waited its turn: never run it, never answer it
        try:
            # Served as a request is: reads alone, changes in their blocks (app.db).
            with self.app.app_context(), serving():
                try:
                    identity = self.identity()
                    response = self.server.handle(message, self.session, self, identity)
                    if self._hearing is not None:  # the changes it made, before its answer
                        self._hearing.tell(self.notify)
                except TokenError as exc:
                    response = (jsonrpc.error(request_id, exc.rpc_error())
                                if jsonrpc.valid_id(request_id) else None)
                finally:
                    db.session.remove()
        except Exception:
            log.exception("request failed")
            response = (jsonrpc.error(message.get("id"),
                                      RpcError(jsonrpc.INTERNAL_ERROR, "Internal error"))
                        if jsonrpc.valid_id(message.get("id")) else None)
        if response is not None:
            self.write(response)

    # -- input ------------------------------------------------------------------------------

    def read_line(self) -> bytes | None:
        """One line (without the newline); b"" marks an oversized line; None at EOF."""
        line = self.stdin.readline(self.max_message + 1)
        if not line:
            return None
        if len(line) > self.max_message and not line.endswith(b"\n"):
            while True:  # skip the rest of the oversized message
                rest = self.stdin.readline(self.max_message)
                if not rest or rest.endswith(b"\n"):
                    break
            return b""
        return line.rstrip(b"\r\n")

    def dispatch(self, line: bytes) -> None:
        received = time.monotonic()
        try:
            message = jsonrpc.decode(line)
        except RpcError as exc:
            wire.message("stdio", "in", line.decode("utf-8", "replace"))
            self.write(jsonrpc.error(None, exc))
            return
        wire.message("stdio", "in", message)
        if isinstance(message, dict) and jsonrpc.is_response(message):
            pending = self._pending.get(str(message.get("id")))
            if pending is not None:
                pending.response = message
                pending.done.set()
            return
        method = message.get("method") if isinstance(message, dict) else None
        stateless = isinstance(message, dict) and era_2026.is_modern(message)
        if stateless and method == era_2026.LISTEN and jsonrpc.valid_id(message.get("id")):
            self.listen(message)
            return
        needs_app = (isinstance(method, str) and method not in INLINE
                     and method != era_2026.DISCOVER
                     and (self.session.initialized or stateless
                          or method.startswith("notifications/")))
        if (needs_app and method != "notifications/cancelled") or method in HANDSHAKES:
            try:
                self.ensure_app()
            except (TokenError, AppStartError) as exc:
                # Answer the request with the reason before the process ends: a client sees
                # why (a revoked token, say), not just a closed pipe.
                if isinstance(message, dict) and jsonrpc.valid_id(message.get("id")):
                    self.write(jsonrpc.error(message["id"], exc.rpc_error()))
                    if method == era_2026.DISCOVER:
                        # A client whose probe fails falls back to initialize: stay to
                        # refuse that too, then exit.
                        return
                raise
        if needs_app and method != "notifications/cancelled":
            if jsonrpc.valid_id(message.get("id")):
                self._queued.add(message["id"])
            self._pool.submit(self._run_queued, message)
            return
        if method == "notifications/cancelled" and isinstance(message.get("params"), dict):
            target = message["params"].get("requestId")
            listener = self._listens.pop(target, None) if jsonrpc.valid_id(target) else None
            if listener is not None:
                changes.unlisten(listener)  # a cancelled listen stream is answered no more
            if (jsonrpc.valid_id(target) and target in self._queued
                    and not self.server.cancel(self.session, target)):
                self._cancelled_early.add(target)
        if method == "initialize" and self._late_discover and jsonrpc.valid_id(message.get("id")):
            # This connection answered its server/discover late (the app was still loading):
            # the client may have given up on it and fallen back to initialize. This error
            # (naming the modern versions) makes it probe again instead of settling on the
            # older era, the official SDK's documented recovery. A discover answered in time
            # leaves both eras open, as always.
            self.write(jsonrpc.error(message["id"], RpcError(
                UNSUPPORTED_VERSION, "This connection speaks 2026-07-28 (its server/discover "
                "was answered late, while the server started): send server/discover again",
                {"supported": list(MODERN_VERSIONS), "requested": params.get("protocolVersion")
                 if isinstance(params := message.get("params"), dict) else None})))
            return
        response = self.server.handle(message, self.session, self)
        if response is not None:
            if (method == era_2026.DISCOVER and "result" in response
                    and time.monotonic() - received >= LATE_DISCOVER_SECONDS):
                self._late_discover = True
            self.write(response)

    def listen(self, message: dict[str, Any]) -> None:
        """subscriptions/listen: acknowledge the watched URIs the token's person may read (the
        others left out, with why), then notify their updates while they still may."""
        request_id = message["id"]
        params = message.get("params") or {}
        try:
            era_2026.read_meta(params)
            honoured, uris = era_2026.listen_filter(params)
            refused = self._refusals(uris, params)  # what the token's person may not read
        except RpcError as exc:
            self.write(jsonrpc.error(request_id, exc))
            return
        except (TokenError, AppStartError) as exc:
            self.write(jsonrpc.error(request_id, exc.rpc_error()))
            return
        uris = frozenset(u for u in uris if u not in refused)

        def watch(uri: str) -> None:
            if uri in uris:
                self._hearing.put(uri, era_2026.listen_message(
                    request_id, "notifications/resources/updated", {"uri": uri}))

        self.write(era_2026.listen_acknowledged(request_id, honoured, refused))

        self._listens[request_id] = watch
        changes.listen(watch)
        # Then the numbered events already written (a run that finished before the client
        # listened); listening first means an event committed meanwhile is told twice at worst.
        if uris:
            self._send_backlog(request_id, message.get("params") or {}, uris)

    def _refusals(self, uris: frozenset[str], params: dict[str, Any]) -> dict[str, str]:
        self.ensure_app()
        with self.app.app_context():
            try:
                session = era_2026.session_for(params, self.session.id, "stdio")
                return self.server.refusals(sorted(uris), self.identity(), session, self)
            finally:
                db.session.remove()

    def _send_backlog(self, request_id: Any, params: dict[str, Any], uris: frozenset[str]) -> None:
        try:
            self.ensure_app()
            with self.app.app_context():
                try:
                    notes = era_2026.listen_backlog(request_id, params, uris, self.identity())
                finally:
                    db.session.remove()
        except Exception:  # (a bad token or database: the live updates still follow)
            log.exception("listen backlog failed")
            return
        for note in notes:
            self.notify(note)

    def run(self) -> int:
        self.start()  # load the app while the client starts up: the handshake needs it
        drain = False  # at end of input, every request read is still answered
        try:
            while True:
                line = self.read_line()
                if line is None or (line == b"" and self.stdin.closed):
                    drain = True  # (``finally`` marks the input closed)
                    break
                if line == b"":
                    self.write(jsonrpc.error(None, RpcError(
                        INVALID_REQUEST, f"Invalid Request: message larger than "
                                         f"{self.max_message} bytes")))
                    continue
                if not line.strip():
                    continue
                try:
                    self.dispatch(line)
                except (TokenError, AppStartError):
                    raise
                except Exception:  # one bad message must never end the session
                    log.exception("could not handle a message")
        except TokenError as exc:
            print(f"mcp-server: {exc}", file=sys.stderr, flush=True)
            return 2
        except AppStartError as exc:
            print(f"mcp-server: {exc}", file=sys.stderr, flush=True)
            return 3
        finally:
            # After end of input the queued requests run and are answered; on SIGTERM or a
            # failed start only the running one finishes.
            self._input_closed.set()
            self._pool.shutdown(wait=True, cancel_futures=not drain)
        return 0


def _configure_logging() -> None:
    level = os.environ.get("HARMONIC_MCP_LOG", "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    wire.configure()  # MCP_DEBUG=1: every message in and out, redacted


def main(load_app: Callable[[], Any]) -> int:
    """Run the stdio server; ``load_app`` builds the Flask app when first needed."""
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed by accident goes to the log, not the protocol
    _configure_logging()
    token = (os.environ.get("HARMONIC_API_TOKEN") or "").strip()
    if not token:
        print("mcp-server: set HARMONIC_API_TOKEN to an API token (create one at "
              "/u/<handle>/settings/tokens or with `flask tokens create`)", file=sys.stderr)
        return 2

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)

    try:
        limit = int(env("HARMONIC_MAX_BODY") or DEFAULT_MAX_MESSAGE)
    except ValueError:
        limit = DEFAULT_MAX_MESSAGE
    transport = StdioTransport(token, sys.stdin.buffer, protocol_out, load_app, limit)
    try:
        return transport.run()
    except KeyboardInterrupt:
        return 130

"""Every HTTP call the app makes to another server goes through ``fetch``.

One fetch has **one deadline** for all of it: resolving the name, connecting, TLS, sending,
the response's headers and its body. httpx's timeouts count each read on its own, so a server
that sends a byte every second would hold a call as long as it liked; here the connections
come from a network backend whose every wait is cut to what is left of the fetch's deadline,
and the body is read in chunks up to a size cap. A fetch that runs out of time raises
``httpx.ReadTimeout`` (or ``ConnectTimeout``, ``WriteTimeout``) saying so.

At most ``HARMONIC_OUTBOUND_MAX`` fetches run at once in a process; one more is refused at once
with ``Busy`` (an ``httpx.TransportError``), never queued: a caller that cannot wait its turn
should not hold a request thread waiting for one.

``public_only`` fetches (a URL the app did not choose: a client's metadata document) connect
only to addresses ``app.core.netpolicy.is_public_address`` admits. The name is resolved once,
every address checked, and the connection made to a checked address, so a name that answers
differently the second time (DNS rebinding) cannot slip a private address in. They have a pool
of their own: a connection another fetch opened to an allow-listed private host is never
reused for them.

The clients are made once per process (a forked gunicorn worker or ``bin/worker`` makes its
own: a connection must not be shared across processes) and keep connections alive. They never
store cookies, so one server's cookie never goes along with another call, and never follow
redirects (a caller that follows one checks the new URL itself).
"""

from __future__ import annotations

import contextvars
import ipaddress
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpcore
import httpx

from app.core import config, netpolicy

SETTING = "HARMONIC_OUTBOUND_MAX"
DEFAULT_MAX = 16  # fetches at once per process
MAX_BYTES = 10 * 1024 * 1024  # a response body's default cap

# When the fetch under way in this thread (or task) must end: read by every network wait.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "harmonic_outbound_deadline", default=None)


class Busy(httpx.TransportError):
    """Refused before any connection: this process already runs as many fetches as allowed."""


class TooLarge(httpx.DecodingError):
    """The response body is longer than the fetch's cap; what came is dropped."""


class NotPublic(httpx.ConnectError):
    """A ``public_only`` fetch's host resolves to an address that is not public."""


def _left(timeout: float | None, late: type[Exception]) -> float | None:
    """The wait allowed now: ``timeout`` cut to what is left of the fetch's deadline."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise late("the call ran out of its time (connect, headers and body together)")
    return remaining if timeout is None else min(timeout, remaining)


class _Stream(httpcore.NetworkStream):
    """A connection whose every wait ends at the deadline of the fetch using it."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname,
                                             _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


# getaddrinfo has no timeout of its own: it runs here and the fetch waits at most its time.
_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="harmonic-resolve")


def _addresses(host: str, port: int, timeout: float | None) -> list[str]:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return [host]
    lookup = _resolver.submit(socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout)
    except FutureTimeout:
        raise httpcore.ConnectTimeout(f"resolving {host} took longer than the call's "
                                      f"time") from None
    except OSError as exc:
        raise httpcore.ConnectError(f"{host} cannot be resolved ({exc})") from None
    found: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in found:
            found.append(address)
    return found


class _Backend(httpcore.NetworkBackend):
    """Connections that honour the fetch's deadline from the name lookup on; with
    ``public_only``, only to public addresses, the ones checked."""

    def __init__(self, public_only: bool) -> None:
        self.public_only = public_only
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        addresses = _addresses(host, port, _left(timeout, httpcore.ConnectTimeout))
        if self.public_only:
            private = [a for a in addresses if not netpolicy.is_public_address(a)]
            if private:
                raise NotPublic(f"{host} resolves to an address that is not public "
                                f"({private[0]}); it is not called")
        failure: Exception | None = None
        for address in addresses:
            try:
                return _Stream(self._inner.connect_tcp(
                    address, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                    socket_options))
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore.ConnectError(f"{host} has no address")

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not called")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


# httpcore's errors as httpx's, the ones every caller catches (httpx.HTTPError).
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.NetworkError, httpx.NetworkError),
)


class _Mapped:
    def __init__(self, request: httpx.Request) -> None:
        self.request = request

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, _tb: Any) -> None:
        if exc is None or isinstance(exc, httpx.HTTPError):
            return
        for theirs, ours in _ERRORS:
            if isinstance(exc, theirs):
                raise ours(str(exc), request=self.request) from exc


class _Body(httpx.SyncByteStream):
    def __init__(self, stream: Any, request: httpx.Request) -> None:
        self._stream, self._request = stream, request

    def __iter__(self) -> Iterator[bytes]:
        with _Mapped(self._request):
            yield from self._stream

    def close(self) -> None:
        if hasattr(self._stream, "close"):
            self._stream.close()


class _Transport(httpx.BaseTransport):
    """httpx over an httpcore pool of ``_Backend`` connections."""

    def __init__(self, public_only: bool) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), max_connections=None,
            max_keepalive_connections=20, network_backend=_Backend(public_only))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port,
                             target=url.raw_path),
            headers=request.headers.raw, content=request.stream,
            extensions=request.extensions)
        with _Mapped(request):
            answer = self._pool.handle_request(core)
        return httpx.Response(status_code=answer.status, headers=answer.headers,
                              stream=_Body(answer.stream, request),
                              extensions=answer.extensions)

    def close(self) -> None:
        self._pool.close()


_lock = threading.Lock()
_clients: dict[bool, httpx.Client] = {}
_slots: threading.BoundedSemaphore | None = None
_slots_size = 0
_pid = 0


def _client(public_only: bool) -> httpx.Client:
    global _pid
    if _pid != os.getpid() or public_only not in _clients:
        with _lock:
            if _pid != os.getpid():
                _clients.clear()
                _pid = os.getpid()
            if public_only not in _clients:
                no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
                _clients[public_only] = httpx.Client(
                    follow_redirects=False, cookies=no_cookies,
                    transport=_Transport(public_only))
    return _clients[public_only]


def most_at_once() -> int:
    """``HARMONIC_OUTBOUND_MAX``: fetches one process runs at once (0: no bound)."""
    raw = str(config.app_config().get(SETTING, DEFAULT_MAX))
    try:
        return max(0, int(raw))
    except ValueError:
        return DEFAULT_MAX


def _slot() -> threading.BoundedSemaphore | None:
    global _slots, _slots_size
    size = most_at_once()
    if size == 0:
        return None
    if _slots is None or _slots_size != size:
        with _lock:
            if _slots is None or _slots_size != size:
                _slots, _slots_size = threading.BoundedSemaphore(size), size
    return _slots


def fetch(method: str, url: str, *, seconds: float, max_bytes: int = MAX_BYTES,
          cut: bool = False, public_only: bool = False, headers: dict[str, str] | None = None,
          content: bytes | str | None = None, json: Any = None) -> httpx.Response:
    """One call, ended after ``seconds`` in all; its body read whole (at most ``max_bytes``:
    longer is ``TooLarge``, or with ``cut`` the first ``max_bytes``). Raises ``httpx``
    errors (``Busy``, ``NotPublic``, ``TooLarge`` among them)."""
    slots = _slot()
    request = httpx.Request(method, url)  # for the errors raised before a request exists
    if slots is not None and not slots.acquire(blocking=False):
        raise Busy(f"this process already makes {_slots_size} outbound calls at once "
                   f"({SETTING}); try again shortly", request=request)
    started = _deadline.set(time.monotonic() + max(0.0, seconds))
    try:
        client = _client(public_only)
        # Bodies are counted as they arrive: a compressed one could grow past the cap in one
        # piece, so none is asked for.
        request = client.build_request(method, url, headers={
            "Accept-Encoding": "identity", **(headers or {})}, content=content, json=json,
            timeout=max(0.001, seconds))
        try:
            response = client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise type(exc)(f"no answer within {seconds:g} s", request=request) from exc
        try:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    if not cut:
                        raise TooLarge(f"the answer is longer than {max_bytes} bytes",
                                       request=request)
                    del body[max_bytes:]
                    break
                _left(None, httpcore.ReadTimeout)  # a body that never ends ends here
        except (httpcore.ReadTimeout, httpx.TimeoutException) as exc:
            raise httpx.ReadTimeout(f"no whole answer within {seconds:g} s",
                                    request=request) from exc
        finally:
            response.close()
        kept = [(k, v) for k, v in response.headers.multi_items()
                if k.lower() not in ("content-encoding", "transfer-encoding",
                                     "content-length")]
        return httpx.Response(response.status_code, headers=kept, content=bytes(body),
                              request=request, extensions={
                                  "http_version": response.http_version.encode()})
    finally:
        _deadline.reset(started)
        if slots is not None:
            slots.release()

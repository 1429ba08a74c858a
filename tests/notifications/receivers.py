"""A webhook receiver for tests: a tiny HTTP server on 127.0.0.1 that records each POST or PUT
(method, path, headers, body, when) and answers with the next scripted status; and the checks a
receiver makes of a delivery's signature, written from the documentation."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self, statuses: list[int] | None = None) -> None:
        self.received: list[dict[str, Any]] = []
        self.statuses = list(statuses or [])
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.received.append({"method": self.command, "path": self.path,
                                          "headers": dict(self.headers), "body": body,
                                          "at": time.monotonic()})
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_POST = do_PUT = _record  # noqa: N815 (the standard library's names)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.url = self.base + "/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def sha256_signature_ok(secret: str, headers: dict[str, str], body: bytes,
                        tolerance: int = 300) -> bool:
    """``X-Harmonic-Signature: sha256=<hex>`` over ``"<X-Harmonic-Timestamp>.<body>"``, fresh."""
    stamp = headers["X-Harmonic-Timestamp"]
    scheme, _, given = headers["X-Harmonic-Signature"].partition("=")
    expected = hmac.new(secret.encode(), stamp.encode() + b"." + body,
                        hashlib.sha256).hexdigest()
    return (scheme == "sha256" and hmac.compare_digest(expected, given)
            and abs(time.time() - int(stamp)) <= tolerance)


def work_until(app: Any, done: Any, timeout: float = 30.0) -> None:
    """Run the queue's worker in this thread until ``done()`` is true."""
    from app.workflows.worker import Worker

    worker = Worker(app, "test-worker")
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError("the worker did not get there in time")
        if not worker.run_once():
            time.sleep(0.02)

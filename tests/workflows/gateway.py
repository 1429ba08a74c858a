"""A real local HTTP server speaking the chat-completions protocol, with scripted replies.

Each reply is either a message dict (returned as ``choices[0].message``) or a callable taking
the request body and returning one. Every request (body, headers and path) is recorded.
``paths`` are the routes it answers (seed 004's examples post to ``<gateway>/chat``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class ScriptedGateway:
    def __init__(self, replies: list[Reply] | None = None,
                 paths: tuple[str, ...] = ("/v1/chat/completions",)) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                gateway.requests.append(body)
                gateway.headers.append(dict(self.headers))
                gateway.paths.append(self.path)
                if self.path.rstrip("/") not in paths:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if not gateway.replies:
                    self._send(500, {"error": {"message": "script exhausted"}})
                    return
                reply = gateway.replies.pop(0)
                message = reply(body) if callable(reply) else reply
                self._send(200, {"id": f"chatcmpl-{len(gateway.requests)}",
                                 "object": "chat.completion", "model": body.get("model"),
                                 "choices": [{"index": 0, "message": message,
                                              "finish_reason": "tool_calls"
                                              if message.get("tool_calls") else "stop"}]})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}

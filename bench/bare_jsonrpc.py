"""The ceiling for a JSON-RPC request on Flask: a bare view answering a fixed tools/call result.

Served by gunicorn with the same settings as the app in bench/mcp_bench.py
(``gunicorn bare_jsonrpc:app`` from bench/); it parses the request body as JSON like any
endpoint must, and answers with the request's id.
"""

from __future__ import annotations

import json

from flask import Flask, Response, request

app = Flask("bare-jsonrpc")
RESULT = {"content": [{"type": "text", "text": "This is a simple text response for testing."}],
          "isError": False}


@app.post("/mcp")
def mcp() -> Response:
    message = json.loads(request.get_data() or b"{}")
    body = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": RESULT})
    return Response(body, mimetype="application/json")

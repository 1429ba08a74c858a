"""The "separate service" alternative (seed 003, option B): an MCP stdio server outside the app
whose ``navigate`` and ``execute_action`` fetch the same pages over HTTP from the running app.

It is deliberately lean (newline-delimited JSON-RPC by hand, one keep-alive HTTP connection), so
bench/mcp_bench.py compares the architectures — an in-process dispatch against an HTTP hop —
rather than two protocol libraries.

Usage: mcp_wrapper_server.py BASE_URL   (HARMONIC_API_TOKEN in the environment)
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import httpx


def main() -> None:
    base = sys.argv[1].rstrip("/")
    headers = {"Authorization": f"Bearer {os.environ['HARMONIC_API_TOKEN']}"}
    client = httpx.Client(base_url=base, headers=headers, timeout=30)
    current = ["/"]

    def navigate(args: dict[str, Any]) -> dict[str, Any]:
        response = client.get(args["path"], headers={"Accept": "text/markdown"})
        current[0] = args["path"]
        return {"content": [{"type": "text", "text": f"Current URL: {args['path']}\n\n"
                                                     f"{response.text}"}],
                "isError": response.status_code >= 400}

    def execute_action(args: dict[str, Any]) -> dict[str, Any]:
        path = args.get("path") or current[0]
        response = client.post(f"{path}/actions/{args['action']}", json=args.get("params") or {},
                               headers={"Accept": "application/json"})
        return {"content": [{"type": "text", "text": response.text}],
                "isError": response.status_code >= 400}

    tools = {"navigate": navigate, "execute_action": execute_action}
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "wrapper", "version": "1"}}
        elif method == "tools/call":
            params = message["params"]
            result = tools[params["name"]](params.get("arguments") or {})
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
                         + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

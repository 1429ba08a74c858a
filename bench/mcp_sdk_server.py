"""The official MCP Python SDK's server with one echo tool: the yardstick for bench/mcp_bench.py.

Usage: mcp_sdk_server.py            (stdio)
       mcp_sdk_server.py http PORT [stateful]   (Streamable HTTP, JSON responses, uvicorn)
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-bench")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]),
                   json_response=True, stateless_http=sys.argv[3:4] != ["stateful"])
    else:
        server.run()

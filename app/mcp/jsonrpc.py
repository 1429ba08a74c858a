"""The JSON-RPC error codes MCP adds to the standard ones of ``app.core.jsonrpc``.

Framing, ids, message builders and the standard codes live in ``app.core.jsonrpc``; these are
the codes the MCP 2025-11-25 and 2026-07-28 schemas define on top (in the server-error range).
"""

from __future__ import annotations

# Ours, in the server-error range: the caller's credentials were refused (HTTP 401/403 on /mcp,
# initialize or any call on stdio), data {"reason": ...}: missing, unknown, revoked, expired,
# insufficient_scope, origin_not_allowed, host_not_allowed or account_gone.
UNAUTHORIZED = -32001
# Ours: the request was over a limit of the HTTP transport (429 rate limit, 413 body size),
# data {"reason": "rate_limited" | "body_too_large", "retryAfter": seconds | "limit": bytes}.
LIMITED = -32029
RESOURCE_NOT_FOUND = -32002  # MCP 2025: resources/read of an unknown URI, data {"uri": ...}
# MCP 2026-07-28 (resource not found is INVALID_PARAMS there):
HEADER_MISMATCH = -32020  # HTTP headers missing or not matching the body
MISSING_CAPABILITY = -32021  # data {"requiredCapabilities": {name: {}}}
UNSUPPORTED_VERSION = -32022  # data {"supported": [...], "requested": ...}

"""Debug logging of every JSON-RPC message in and out, with secrets redacted.

``MCP_DEBUG=1`` (or ``HARMONIC_MCP_LOG=DEBUG``) turns it on: stdio logs to stderr, ``/mcp``
to the server's log (stderr under gunicorn). Each line is ``<transport> in|out <json>``.

Redacted before anything is written: the value of every field whose name says it is a
secret (authorization, token, secret, password, api key, cookie, credential; not the
``progressToken``, which only correlates progress), ``Bearer`` credentials and this app's
API tokens (the ``hmn_`` prefix) inside any string. Strings longer than ``MAX_STRING`` (an
image's base64) are shortened to their start and length.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

from app.core.secrets_text import MARK, SECRET_KEY, SECRET_TEXT

log = logging.getLogger("harmonic.mcp.wire")

MAX_STRING = 2000
# Not secrets although their names say token: progress correlation and a sampling budget.
NOT_SECRET = frozenset({"progressToken", "maxTokens"})


def wanted() -> bool:
    """True when the environment asks for message logging."""
    debug = (os.environ.get("MCP_DEBUG") or "").strip().lower() in ("1", "true", "yes", "on")
    return debug or (os.environ.get("HARMONIC_MCP_LOG") or "").strip().upper() == "DEBUG"


def configure() -> None:
    """Log messages at DEBUG when asked; onto stderr when nothing else handles the log."""
    if not wanted():
        return
    log.setLevel(logging.DEBUG)
    if not logging.getLogger().handlers and not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
        log.propagate = False  # one line per message even if the root logger is set up later


def redact_text(value: str) -> str:
    for pattern in SECRET_TEXT:
        value = pattern.sub(lambda m: m.group(1) + MARK, value)
    if len(value) > MAX_STRING:
        value = f"{value[:200]}…[{len(value)} characters]"
    return value


def redact(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` fit for a log: no secret fields, tokens or huge strings."""
    if depth > 32:
        return MARK
    if isinstance(value, dict):
        return {key: (MARK if _secret_field(key, item) else redact(item, depth + 1))
                for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item, depth + 1) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def _secret_field(key: Any, value: Any) -> bool:
    return (isinstance(key, str) and key not in NOT_SECRET and SECRET_KEY.search(key) is not None
            and value not in (None, "", False) and not isinstance(value, int | float))


def enabled() -> bool:
    """Whether messages are logged (callers skip gathering what only the log would show)."""
    return log.isEnabledFor(logging.DEBUG)


def message(transport: str, direction: str, payload: Any, headers: dict[str, str] | None = None
            ) -> None:
    """Log one message (a parsed object, or raw text that did not parse)."""
    if not log.isEnabledFor(logging.DEBUG):
        return
    body = (redact_text(payload) if isinstance(payload, str)
            else json.dumps(redact(payload), ensure_ascii=False, default=str))
    if headers:
        log.debug("%s %s %s headers=%s", transport, direction, body,
                  json.dumps(redact(headers), ensure_ascii=False))
    else:
        log.debug("%s %s %s", transport, direction, body)

"""Chat completions through any OpenAI-compatible gateway (``LLM_GATEWAY_URL``).

The key (``LLM_API_KEY``) goes in the Authorization header and nowhere else: errors quote the
gateway's status and a scrubbed excerpt, never the request headers.
"""

from __future__ import annotations

from typing import Any

import httpx

from app.core import outbound
from app.workflows import settings
from app.workflows.tools import StepError


def _scrub(text: str, key: str) -> str:
    return text.replace(key, "[redacted]") if key else text


def complete(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
             params: dict[str, Any]) -> dict[str, Any]:
    """One chat completion; returns the first choice's message (role, content, tool_calls)."""
    base = settings.get("LLM_GATEWAY_URL").rstrip("/")
    if not base:
        raise StepError("no model gateway configured: set LLM_GATEWAY_URL (an OpenAI-compatible "
                        "base URL such as http://127.0.0.1:4000/v1) and LLM_API_KEY")
    key = settings.get("LLM_API_KEY")
    url = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
    body: dict[str, Any] = {**params, "model": model, "messages": messages}
    if tools:
        body["tools"] = tools
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = outbound.fetch("POST", url, json=body, headers=headers,
                                  seconds=settings.get_float("LLM_TIMEOUT"))
    except httpx.HTTPError as exc:
        raise StepError(f"model gateway {url}: {type(exc).__name__}", permanent=False) from None
    if response.status_code >= 400:
        excerpt = _scrub(response.text[:300], key)
        raise StepError(f"model gateway answered {response.status_code}: {excerpt}",
                        permanent=response.status_code < 500 and response.status_code != 429)
    try:
        message = response.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise StepError("model gateway answered without choices[0].message") from None
    if not isinstance(message, dict):
        raise StepError("model gateway answered a message that is not an object")
    return message

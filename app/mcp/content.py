"""Content blocks and tool results, built the way the MCP 2025-11-25 schema spells them.

Optional fields are omitted rather than set to null: strict clients validate every message.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]


def _encode(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def image(data: bytes | str, mime_type: str = "image/png") -> Block:
    """An image; ``data`` is raw bytes or already base64 text."""
    return {"type": "image", "data": _encode(data), "mimeType": mime_type}


def audio(data: bytes | str, mime_type: str = "audio/wav") -> Block:
    return {"type": "audio", "data": _encode(data), "mimeType": mime_type}


def resource_text(uri: str, value: str, mime_type: str = "text/plain") -> Block:
    """The ``contents`` entry of resources/read for text."""
    return {"uri": uri, "mimeType": mime_type, "text": value}


def resource_blob(uri: str, data: bytes | str, mime_type: str) -> Block:
    return {"uri": uri, "mimeType": mime_type, "blob": _encode(data)}


def embedded(uri: str, value: str | bytes, mime_type: str = "text/plain") -> Block:
    """An embedded resource content block (text for str, blob for bytes)."""
    inner = (resource_text(uri, value, mime_type) if isinstance(value, str)
             else resource_blob(uri, value, mime_type))
    return {"type": "resource", "resource": inner}


def link(uri: str, name: str, description: str | None = None,
         mime_type: str | None = None, title: str | None = None) -> Block:
    block: Block = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (("title", title), ("description", description), ("mimeType", mime_type)):
        if value is not None:
            block[key] = value
    return block


class ToolError(Exception):
    """Raise from a tool handler to return an ``isError`` result the model can read and fix."""

    def __init__(self, message: str, structured: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message, self.structured = message, structured


@dataclass
class ToolResult:
    """What a tool returns when a string, a dict or a list of blocks is not enough."""

    content: list[Block] = field(default_factory=list)
    structured: dict[str, Any] | None = None
    is_error: bool = False
    meta: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"content": self.content}
        if self.structured is not None:
            out["structuredContent"] = self.structured
        if self.is_error:
            out["isError"] = True
        if self.meta:
            out["_meta"] = self.meta
        return out


def as_result(value: Any) -> ToolResult:
    """Normalise a handler's return value: str, dict (structured), block list or ToolResult."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult(content=[])
    if isinstance(value, str):
        return ToolResult(content=[text(value)])
    if isinstance(value, dict):
        # Structured output also goes in a text block for clients that ignore structuredContent.
        return ToolResult(content=[text(json.dumps(value, ensure_ascii=False))], structured=value)
    if isinstance(value, list):
        return ToolResult(content=list(value))
    raise TypeError(f"a tool returned {type(value).__name__}; return str, dict, list or ToolResult")


def error_result(message: str, structured: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult(content=[text(message)], structured=structured, is_error=True)

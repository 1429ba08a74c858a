"""Replaying Harmonic steps: the registered MCP tools, called in-process as the replaying user.

A recipe step ``{"tool": "execute_action", "params": {...}}`` runs the very tool an agent used
while teaching (``app.mcp.registry``), with the replaying caller's identity, so authorization
(asked here as at ``tools/call``), validation and the action registry are exactly those of a
live agent. A dry run does not call write tools: it opens the target page and checks that the
action is offered there.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from app.core import authorization
from app.core.identity import Identity
from app.mcp import harmonic
from app.mcp.content import ToolError, as_result
from app.mcp.context import QuietChannel, SessionState, ToolContext
from app.mcp.registry import REGISTRY
from app.services.errors import DomainError


def _context(identity: Identity | None) -> ToolContext:
    return ToolContext(identity=identity, session=SessionState("replay"),
                       channel=QuietChannel("no client is attached to a replay"))


def _schema_problems(schema: dict[str, Any], args: Any) -> list[str]:
    return [e.message for e in Draft202012Validator(schema).iter_errors(args)]


def call(name: str, args: Any, identity: Identity | None) -> tuple[bool, Any, str]:
    """(ok, structured result or text, error message) of running tool ``name``."""
    tool = REGISTRY.tools.get(name)
    if tool is None:
        return False, None, f"no MCP tool named {name}"
    if not isinstance(args, dict):
        return False, None, "tool arguments must be an object"
    # The one authorization question, as at tools/call: a step runs only what its caller may.
    refused = authorization.refusal(identity, tool.call_effect(args), tool.call_subject(args))
    if refused is not None:
        return False, None, f"{refused.kind}: {refused.message}"
    problems = _schema_problems(tool.input_schema, args)
    if problems:
        return False, None, f"invalid arguments for {name}: " + "; ".join(problems)
    try:
        result = as_result(tool.handler(_context(identity), args))
    except ToolError as exc:
        return False, exc.structured, exc.message
    except DomainError as exc:  # a domain error from a service: report, never crash the run
        return False, None, f"{exc.kind}: {exc.message}"
    text = "\n".join(block.get("text", "") for block in result.content
                     if isinstance(block, dict) and block.get("type") == "text")
    if result.is_error:
        return False, result.structured, text or f"{name} failed"
    return True, result.structured if result.structured is not None else {"text": text}, ""


def plan(name: str, args: Any, identity: Identity | None) -> tuple[bool, str]:
    """Dry run of a write tool: is it callable, and is the action offered at that page?"""
    tool = REGISTRY.tools.get(name)
    if tool is None:
        return False, f"no MCP tool named {name}"
    if not isinstance(args, dict):
        return False, "tool arguments must be an object"
    problems = _schema_problems(tool.input_schema, args)
    if problems:
        return False, f"invalid arguments for {name}: " + "; ".join(problems)
    if name != "execute_action":
        return True, f"would call {name}"
    path, action = args.get("path"), args.get("action")
    if not isinstance(path, str) or "{{" in path:
        return True, f"would run {action} at a page an earlier step creates"

    try:
        page = harmonic.fetch(_context(identity), harmonic.normalize_path(path))
    except ToolError as exc:
        return False, exc.message
    if page.status >= 400:
        return False, f"GET {path} answered {page.status}"
    if action not in page.action_names():
        return False, (f"'{action}' is not offered at {page.path} (offered: "
                       f"{', '.join(page.action_names()) or 'none'})")
    return True, f"would run {action} at {page.path}"

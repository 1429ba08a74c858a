"""MCP inside the app: the protocol core, sessions and navigation state, two transports, and
the one registry of tools, resources and prompts that every feature package writes to.

Two protocol eras are served side by side, chosen per request: 2026-07-28 (stateless: a
request's ``_meta`` carries its version and client; see docs/MCP.md) and 2025-11-25 and older
(``initialize`` and sessions). Handlers are the same for both.

Modules: ``jsonrpc`` (framing, error codes), ``server`` (the engine: one message in, one
response out), ``era_2026`` (the 2026 era: ``_meta``, ``resultType``, cache hints, listen),
``input_required`` (input-required results and their signed state), ``registry`` (what is served),
``context`` (``ctx`` for handlers), ``content`` (content blocks), ``stdio``
(``bin/mcp-server``), ``http`` (``/mcp``, Streamable HTTP), ``http_2026`` (the 2026 HTTP
header checks and statuses),
``store`` (sessions, client requests and cancellations in the database), ``harmonic``
(navigate, execute_action, harmonic://context, pages as resources, the stand-up prompt),
``audit`` (the tool-call log), ``tasks`` (the tasks extension: ``task_support="optional"``
or ``"required"`` on ``@tool`` lets a call become a durable task on the job queue),
``web`` (wiring into Flask and the /u/<handle>/agent-activity page).

Registering a tool from another package
---------------------------------------
Import the package's module from its ``init_app`` (or anywhere imported at start-up)::

    from app.actions.effects import READ
    from app.mcp import ToolContext, ToolError, tool

    @tool("render_floorplan", "Render a floorplan as PNG and list its rooms",
          input_schema={"type": "object", "properties": {"source": {"type": "string"}},
                        "required": ["source"], "additionalProperties": False},
          output_schema={"type": "object", "properties": {"rooms": {"type": "array"}},
                         "required": ["rooms"]},
          effect=READ)
    def render_floorplan(ctx: ToolContext, args: dict) -> ToolResult:
        ...

Names are 1-128 of ``A-Za-z0-9_.-`` and must be unique; ``input_schema`` must be an object
schema (JSON Schema 2020-12). Arguments are validated against it before the handler runs; a
mismatch is an ``isError`` result.

``effect`` is required: ``READ``, ``WRITE``, ``IDEMPOTENT_WRITE``, ``DESTRUCTIVE`` … from
``app.actions.effects``. The tool's annotations (``readOnlyHint``, ``destructiveHint``,
``idempotentHint``, ``openWorldHint``) derive from it, and a playbook replay asks it whether a
recorded call writes. A tool that runs something else on the caller's behalf adds
``effect_of=lambda args: ...`` (the effect of one call, or None for the declared one).

A handler returns one of: ``str`` (one text block); ``dict`` (structured content, also sent as
JSON text; required when the tool has an ``output_schema``, and validated against it); a list
of content blocks (``content.text/image/audio/embedded/link``); or ``ToolResult(content,
structured, is_error)`` for both. Raise ``ToolError(message)`` for a failure the model should
read and correct (an ``isError`` result); domain errors (``app.services.errors``) become
``isError`` results too. Anything else is logged and reported as an internal tool error.

``ctx`` (``ToolContext``) gives:
    ctx.identity            the caller (``app.core.identity.Identity``: user_id, scopes,
                            token_id) or None on a loopback /mcp with auth off; pass it to
                            ``app.core.dispatch.dispatch`` to act as the caller
    ctx.session             the MCP session: ``.current_path`` (navigation state; always None
                            for a stateless request, whose ``.stateless`` is True),
                            ``.client_capabilities``, ``.save()`` after changing it
    ctx.progress(p, total=None, message=None)   notifications/progress (if the client asked)
    ctx.log(level, data)    notifications/message, filtered by the session's logging level
    ctx.cancelled() / ctx.check_cancelled() / ctx.sleep(seconds)
                            notifications/cancelled (from any process) stops the call:
                            check often, or sleep through ``ctx.sleep``
    ctx.elicit(message, requested_schema, key=None) -> {"action", "content"?}   ask the user
    ctx.sample(messages, max_tokens, key=None) -> CreateMessageResult  ask the client's model
    ctx.ask({key: (method, params)}) -> {key: result}   several questions at once
                            In 2025 these are server-to-client requests; in 2026 they end the
                            call with an input-required result and the client's retry runs
                            the handler again with the answers: ask before you write.
    ctx.require(capability) the client must have declared it (-32021 in 2026)
    ctx.request(method, params)         any other server-to-client request (2025 era only)
    ctx.audit["path"|"action"]          what the audit log records for this call
Handlers run inside a Flask app context (database, ``current_app``) on both transports.

Resources and prompts register the same way: ``@resource(uri, name, description,
mime_type=...)`` with ``handler(ctx) -> str | bytes | [contents]``;
``@resource_template("scheme://{var}/{+rest}", ...)`` with ``handler(ctx, uri, variables)``;
``@prompt(name, description, arguments=(PromptArgument(...),))`` with ``handler(ctx, args) ->
[messages] | {"description", "messages"}``. Resource changes reach subscribers through the
change-event outbox (``app.core.changes``): an action records its page, its result's location
and what it declares in ``touches`` on its own; other writers call ``changes.record(uri)`` in
their transaction, and subscribed sessions get ``notifications/resources/updated`` after it
commits. Nothing in this package commits a change on a subscriber's behalf.

The official conformance suite's fixtures are not here: they are the top-level package
``harmonic_conformance``, loaded only by the opt-in conformance profile.

Importing this package imports nothing from Flask, so ``bin/mcp-server`` answers
``initialize`` before the app is loaded.
"""

from app.mcp.content import ToolError, ToolResult
from app.mcp.context import ToolContext
from app.mcp.registry import (
    PromptArgument,
    prompt,
    resource,
    resource_template,
    tool,
)

__all__ = ["PromptArgument", "ToolContext", "ToolError", "ToolResult", "prompt", "resource",
           "resource_template", "tool"]

"""The fixed tools, resources and prompts the official MCP conformance suite calls.

They live in their own registry and are merged into the served one only when
HARMONIC_MCP_CONFORMANCE=1 on a loopback-bound app with /mcp auth off (see app.mcp.web); they
are never part of normal operation. This package sits beside ``app`` rather than in it so that
nothing in the app imports it unless that profile is on; the installed project ships it (see
pyproject.toml), and from a checkout it is found because gunicorn, bin/serve and the tests run
from the repository root.
"""

from __future__ import annotations

import json
import struct
import zlib
from functools import partial
from typing import Any

from app.actions.effects import READ
from app.core.jsonrpc import INTERNAL_ERROR, RpcError
from app.mcp import content
from app.mcp.content import ToolError
from app.mcp.context import Cancelled, ToolContext
from app.mcp.registry import EMPTY_OBJECT, PromptArgument, Registry

REGISTRY = Registry()
# The fixtures change nothing of the app's: every one is declared a read.
_tool = partial(REGISTRY.tool, effect=READ)


def _png_1x1() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(
        b"IEND", b"")


def _wav_silence() -> bytes:
    samples = b"\x00\x00" * 800  # 0.1 s of 16-bit mono silence at 8 kHz
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVE" + b"fmt "
            + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(samples)) + samples)


PNG = _png_1x1()
WAV = _wav_silence()


def _answer(answer: dict[str, Any]) -> str:
    return f"action={answer.get('action')}, content={json.dumps(answer.get('content', {}))}"


def _no_args(name: str, description: str):  # type: ignore[no-untyped-def]
    return _tool(name, description, dict(EMPTY_OBJECT))


def _no_args_task(name: str, description: str, support: str):  # type: ignore[no-untyped-def]
    return _tool(name, description, dict(EMPTY_OBJECT), task_support=support)


@_no_args("test_simple_text", "Returns a simple text response")
def simple_text(ctx: ToolContext, args: dict[str, Any]) -> str:
    return "This is a simple text response for testing."


@_no_args("test_image_content", "Returns an image")
def image_content(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [content.image(PNG, "image/png")]


@_no_args("test_audio_content", "Returns audio")
def audio_content(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [content.audio(WAV, "audio/wav")]


@_no_args("test_embedded_resource", "Returns an embedded resource")
def embedded_resource(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [content.embedded("test://embedded-resource", "This is an embedded resource content.",
                             "text/plain")]


@_no_args("test_multiple_content_types", "Returns text, an image and a resource")
def mixed(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    data = json.dumps({"test": "data", "value": 123})
    return [content.text("Multiple content types test:"), content.image(PNG, "image/png"),
            content.embedded("test://mixed-content-resource", data, "application/json")]


@_no_args("test_tool_with_logging", "Sends log messages while it runs")
def with_logging(ctx: ToolContext, args: dict[str, Any]) -> str:
    for step, text in enumerate(("Tool execution started", "Tool processing data",
                                 "Tool execution completed")):
        if step:
            ctx.sleep(0.05)
        ctx.log("info", text, logger="conformance")
    return "Tool with logging executed successfully"


@_no_args("test_tool_with_progress", "Reports progress while it runs")
def with_progress(ctx: ToolContext, args: dict[str, Any]) -> str:
    for value in (0, 50, 100):
        ctx.progress(value, 100, f"Completed step {value} of 100")
        if value < 100:
            ctx.sleep(0.05)
    return "Tool with progress executed successfully"


@_no_args("test_error_handling", "Always fails, as a tool error")
def error_handling(ctx: ToolContext, args: dict[str, Any]) -> str:
    raise ToolError("This tool intentionally returns an error for testing")


@_tool("test_sampling", "Asks the client's model through sampling",
               {"type": "object", "properties": {"prompt": {"type": "string"}},
                "required": ["prompt"]})
def sampling(ctx: ToolContext, args: dict[str, Any]) -> str:
    answer = ctx.sample([{"role": "user", "content": {"type": "text", "text": args["prompt"]}}],
                        max_tokens=100)
    block = answer["content"] if isinstance(answer.get("content"), dict) else {}
    return f"LLM response: {block.get('text', '')}"


@_tool("test_elicitation", "Asks the user for input through elicitation",
               {"type": "object", "properties": {"message": {"type": "string"}},
                "required": ["message"]})
def elicitation(ctx: ToolContext, args: dict[str, Any]) -> str:
    answer = ctx.elicit(args["message"], {
        "type": "object",
        "properties": {"username": {"type": "string", "description": "Your username"},
                       "email": {"type": "string", "description": "Your email address"}},
        "required": ["username", "email"]})
    return f"User response: {_answer(answer)}"


@_no_args("test_elicitation_sep1034_defaults", "Elicitation with default values")
def elicitation_defaults(ctx: ToolContext, args: dict[str, Any]) -> str:
    answer = ctx.elicit("Please review and update the form fields with defaults", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status",
                         "default": True},
        }})
    return f"Elicitation completed: {_answer(answer)}"


@_no_args("test_elicitation_sep1330_enums", "Elicitation with every enum shape")
def elicitation_enums(ctx: ToolContext, args: dict[str, Any]) -> str:
    answer = ctx.elicit("Please select options from the enum fields", {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles",
                             "oneOf": [{"const": "value1", "title": "First Option"},
                                       {"const": "value2", "title": "Second Option"},
                                       {"const": "value3", "title": "Third Option"}]},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options",
                              "minItems": 1, "maxItems": 3,
                              "items": {"type": "string",
                                        "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                            "minItems": 1, "maxItems": 3,
                            "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                {"const": "value2", "title": "Second Choice"},
                                                {"const": "value3", "title": "Third Choice"}]}},
        },
        "required": []})
    return f"Elicitation completed: {_answer(answer)}"


@_tool("json_schema_2020_12_tool", "Takes a JSON Schema 2020-12 input", {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"},
                                         "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
})
def json_schema_tool(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"Received: {json.dumps(args)}"


@REGISTRY.resource("test://static-text", "static-text", "A static text resource",
                   mime_type="text/plain")
def static_text(ctx: ToolContext) -> str:
    return "This is the content of the static text resource."


@REGISTRY.resource("test://static-binary", "static-binary", "A static binary resource",
                   mime_type="image/png")
def static_binary(ctx: ToolContext) -> bytes:
    return PNG


@REGISTRY.resource("test://watched-resource", "watched-resource",
                   "A resource that can be subscribed to", mime_type="text/plain")
def watched(ctx: ToolContext) -> str:
    return "Watched resource content"


@REGISTRY.resource_template("test://template/{id}/data", "template",
                            "A resource template with a parameter", mime_type="application/json")
def template_data(ctx: ToolContext, uri: str, variables: dict[str, str]) -> str:
    return json.dumps({"id": variables["id"], "templateTest": True,
                       "data": f"Data for ID: {variables['id']}"})


@REGISTRY.prompt("test_simple_prompt", "A simple prompt without arguments")
def simple_prompt(ctx: ToolContext, args: dict[str, str]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": content.text("This is a simple prompt for testing.")}]


@REGISTRY.prompt("test_prompt_with_arguments", "A prompt with required arguments",
                 arguments=(PromptArgument("arg1", "First test argument", required=True),
                            PromptArgument("arg2", "Second test argument", required=True)))
def prompt_args(ctx: ToolContext, args: dict[str, str]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": content.text(
        f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'")}]


@REGISTRY.prompt("test_prompt_with_embedded_resource", "A prompt with an embedded resource",
                 arguments=(PromptArgument("resourceUri", "URI of the resource to embed",
                                           required=True),))
def prompt_embedded(ctx: ToolContext, args: dict[str, str]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": content.embedded(args["resourceUri"],
                                                         "Embedded resource content for testing.",
                                                         "text/plain")},
            {"role": "user",
             "content": content.text("Please process the embedded resource above.")}]


@REGISTRY.prompt("test_prompt_with_image", "A prompt with an image")
def prompt_image(ctx: ToolContext, args: dict[str, str]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": content.image(PNG, "image/png")},
            {"role": "user", "content": content.text("Please analyze the image above.")}]


# -- 2026-07-28 fixtures: input-required results, capabilities, headers ---------------------

def _ask_name(ctx: ToolContext, key: str, message: str, field: str) -> dict[str, Any]:
    answer = ctx.ask({key: ("elicitation/create", {"message": message, "requestedSchema": {
        "type": "object", "properties": {field: {"type": "string"}}, "required": [field]}})})
    return answer[key].get("content") or {}


@_no_args("test_input_required_result_elicitation", "Asks for a name, then greets")
def mrtr_elicitation(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"Hello, {_ask_name(ctx, 'user_name', 'What is your name?', 'name').get('name')}!"


@_no_args("test_input_required_result_sampling", "Asks the client's model one question")
def mrtr_sampling(ctx: ToolContext, args: dict[str, Any]) -> str:
    answer = ctx.sample([{"role": "user", "content": {
        "type": "text", "text": "What is the capital of France?"}}], 100, key="capital_question")
    block = answer["content"] if isinstance(answer.get("content"), dict) else {}
    return f"Sampled: {block.get('text', '')}"


@_no_args("test_input_required_result_list_roots", "Asks the client for its roots")
def mrtr_roots(ctx: ToolContext, args: dict[str, Any]) -> str:
    roots = ctx.ask({"client_roots": ("roots/list", {})})["client_roots"].get("roots") or []
    return "Roots: " + ", ".join(str(r.get("uri")) for r in roots if isinstance(r, dict))


@_no_args("test_input_required_result_request_state", "Confirms through a signed state")
def mrtr_state(ctx: ToolContext, args: dict[str, Any]) -> str:
    answer = ctx.elicit("Please confirm", {"type": "object", "properties": {
        "ok": {"type": "boolean"}}, "required": ["ok"]}, key="confirm")
    return f"{'state-ok' if ctx.resumed else 'no state'}: {_answer(answer)}"


@_no_args("test_input_required_result_tampered_state", "Refuses a tampered state")
def mrtr_tampered(ctx: ToolContext, args: dict[str, Any]) -> str:
    return mrtr_state(ctx, args)


@_no_args("test_input_required_result_multiple_inputs", "Asks three questions at once")
def mrtr_multiple(ctx: ToolContext, args: dict[str, Any]) -> str:
    answers = ctx.ask({
        "user_name": ("elicitation/create", {"message": "What is your name?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}),
        "greeting": ("sampling/createMessage", {"messages": [{"role": "user", "content": {
            "type": "text", "text": "Generate a greeting"}}], "maxTokens": 50}),
        "client_roots": ("roots/list", {})})
    return f"Got {', '.join(sorted(answers))}"


@_no_args("test_input_required_result_multi_round", "Asks two questions, one per round")
def mrtr_rounds(ctx: ToolContext, args: dict[str, Any]) -> str:
    name = _ask_name(ctx, "step1", "Step 1: What is your name?", "name").get("name")
    color = _ask_name(ctx, "step2", "Step 2: What is your favorite color?", "color").get("color")
    return f"{name} likes {color}"


@_no_args("test_input_required_result_capabilities", "Asks only what the client can answer")
def mrtr_capabilities(ctx: ToolContext, args: dict[str, Any]) -> str:
    declared = ctx.session.client_capabilities
    questions: dict[str, tuple[str, dict[str, Any]]] = {}
    if "sampling" in declared:
        questions["greeting"] = ("sampling/createMessage", {"messages": [{"role": "user",
                                 "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 20})
    if "elicitation" in declared:
        questions["user_name"] = ("elicitation/create", {"message": "What is your name?",
                                  "requestedSchema": {"type": "object", "properties": {
                                      "name": {"type": "string"}}}})
    return f"Got {', '.join(sorted(ctx.ask(questions)))}" if questions else "Nothing to ask"


@REGISTRY.prompt("test_input_required_result_prompt", "A prompt that asks for its context")
def mrtr_prompt(ctx: ToolContext, args: dict[str, str]) -> list[dict[str, Any]]:
    context = _ask_name(ctx, "user_context", "What context should the prompt use?", "context")
    return [{"role": "user", "content": content.text(f"Context: {context.get('context')}")}]


@_no_args("test_missing_capability", "Needs sampling, which the client must declare")
def missing_capability(ctx: ToolContext, args: dict[str, Any]) -> str:
    ctx.require("sampling")
    return "the client declared sampling"


@_no_args("test_streaming_elicitation", "Asks for a name (an input-required result in 2026)")
def streaming_elicitation(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"Hello, {_ask_name(ctx, 'name', 'What is your name?', 'name').get('name')}!"


@_no_args("test_logging_tool", "Logs at info (only when the request asked for a level)")
def logging_tool(ctx: ToolContext, args: dict[str, Any]) -> str:
    ctx.log("info", "logging tool ran", logger="conformance")
    return "logged"


@_no_args("test_trigger_tool_change", "Would change the tool list; ours never changes")
def trigger_tool_change(ctx: ToolContext, args: dict[str, Any]) -> str:
    return "the tool list is fixed while the server runs"


@_tool("test_header_param", "Echoes a region that clients mirror into a header", {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                   "query": {"type": "string"}},
    "required": ["region"], "additionalProperties": False})
def header_param(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"region={args['region']}"


# -- our own probes (same profile): does closing a 2026 call's stream cancel it? -----------

CANCELLED: set[str] = set()  # tokens of test_wait_for_cancel calls that were cancelled


@_tool("test_wait_for_cancel", "Reports progress until cancelled (at most a minute)",
               {"type": "object", "properties": {"token": {"type": "string"}},
                "required": ["token"]})
def wait_for_cancel(ctx: ToolContext, args: dict[str, Any]) -> str:
    try:
        for step in range(1200):
            ctx.progress(step + 1, message="waiting")
            ctx.sleep(0.05)
    except Cancelled:
        CANCELLED.add(args["token"])
        raise
    return "never cancelled"


@_tool("test_cancelled_calls", "The tokens of test_wait_for_cancel calls cancelled",
               {"type": "object", "properties": {"token": {"type": "string"}},
                "required": ["token"]})
def cancelled_calls(ctx: ToolContext, args: dict[str, Any]) -> str:
    return "cancelled" if args["token"] in CANCELLED else "running"


# -- the tasks extension (SEP-2663): task-supporting tools run on the job queue ----------------

_NAME_ARG = {"type": "object", "properties": {"name": {"type": "string"}}}


@_tool("greet", "Greets by name (synchronous only)", _NAME_ARG)
def greet(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"Hello, {args.get('name', 'World')}!"


@_tool("slow_compute", "Sleeps for seconds, then answers (as a task when the client can)",
       {"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0},
                                         "label": {"type": "string"}}},
       task_support="optional")
def slow_compute(ctx: ToolContext, args: dict[str, Any]) -> str:
    seconds = float(args.get("seconds", 1))
    steps = max(1, int(seconds * 4))
    for step in range(steps):  # ctx.sleep wakes up (Cancelled) as soon as the task is cancelled
        ctx.progress(step, steps, f"computing {args.get('label', '')}".strip())
        ctx.sleep(seconds / steps)
    return f"Computed {args.get('label', 'result')} after {seconds:g}s"


@_no_args_task("failing_job", "Reports a tool error after a second", "required")
def failing_job(ctx: ToolContext, args: dict[str, Any]) -> str:
    ctx.sleep(1)
    raise ToolError("failing_job always fails")


@_no_args_task("protocol_error_job", "Fails with a protocol (not a tool) error", "optional")
def protocol_error_job(ctx: ToolContext, args: dict[str, Any]) -> str:
    raise RpcError(INTERNAL_ERROR, "protocol_error_job failed on purpose")


@_tool("confirm_delete", "Asks for confirmation, then 'deletes' the file",
       {"type": "object", "properties": {"filename": {"type": "string"}}},
       task_support="optional")
def confirm_delete(ctx: ToolContext, args: dict[str, Any]) -> str:
    answer = ctx.elicit(f"Delete {args.get('filename')}?", {"type": "object", "properties": {
        "confirm": {"type": "boolean"}}, "required": ["confirm"]}, key="confirm")
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
    return f"{'Deleted' if confirmed else 'Kept'} {args.get('filename')}"


@_no_args_task("multi_input", "Asks two questions at once", "optional")
def multi_input(ctx: ToolContext, args: dict[str, Any]) -> str:
    schema = {"type": "object", "properties": {"name": {"type": "string"},
                                               "confirm": {"type": "boolean"}}}
    answers = ctx.ask({"first": ("elicitation/create", {"message": "First?",
                                                        "requestedSchema": schema}),
                       "second": ("elicitation/create", {"message": "Second?",
                                                         "requestedSchema": schema})})
    return "Got " + ", ".join(f"{k}={_answer(v)}" for k, v in sorted(answers.items()))


def _gather_name(ctx: ToolContext, args: dict[str, Any]) -> None:
    _ask_name(ctx, "user_name", "What is your name?", "name")


@_tool("test_tool_with_task", "Asks for a name, then greets from a task", dict(EMPTY_OBJECT),
       task_support="required", task_prepare=_gather_name)
def tool_with_task(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"Hello, {_ask_name(ctx, 'user_name', 'What is your name?', 'name').get('name')}!"

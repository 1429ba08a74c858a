"""The one registry of MCP tools, resources, resource templates and prompts.

Feature packages register here (see the package docstring of ``app.mcp`` for the one-liners);
both transports read the same registry through ``app.mcp.server.McpServer``.

Every tool declares its ``effect`` (``app.actions.effects``) and its annotations derive from it:
there are no hand-written hints. A tool that runs something else on the caller's behalf
(``execute_action`` runs an action, ``upstream_call`` a design-model method) also gives
``effect_of(arguments)``: the effect of one call, which a playbook replay asks to decide whether
a recorded step writes (``Tool.call_effect``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.actions.effects import Effect
from app.core import tool_catalog
from app.mcp.icons import icons

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": False}

Handler = Callable[..., Any]
# The effect of one call from its arguments, or None when they do not say (then ``effect``).
EffectOf = Callable[[dict[str, Any]], Effect | None]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    handler: Handler  # handler(ctx: ToolContext, args: dict) -> str | dict | list | ToolResult
    effect: Effect  # the worst any call may do: the annotations clients see derive from it
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_OBJECT))
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    effect_of: EffectOf | None = None
    icon: str = "harmonic"  # one of app.mcp.icons.NAMES
    # The tool's ``_meta`` in tools/list: e.g. ``{"ui": {"resourceUri": ...}}``, the MCP Apps
    # view a host shows the tool's results in (app.mcp.apps)
    meta: dict[str, Any] | None = None
    # The tasks extension (app.mcp.tasks): "optional" or "required" to offer task execution.
    task_support: str = "forbidden"
    # Runs in the tools/call request before a task is created: questions it asks are answered
    # there (an input-required result), and the answers go into the task.
    task_prepare: Handler | None = None
    # What one call runs, by name, when the tool runs something named (an action): what the
    # authorization question is asked about (a grant lists actions, not tools).
    subject_of: Callable[[dict[str, Any]], str | None] | None = None

    def call_subject(self, args: Any) -> str:
        """The name the authorization question asks about for this call: the action it runs,
        else the tool's own name."""
        found = self.subject_of(args) if self.subject_of is not None \
            and isinstance(args, dict) else None
        return found or self.name

    def call_effect(self, args: Any) -> Effect:
        """What a call with these arguments does (the declared effect when they do not say)."""
        if self.effect_of is not None and isinstance(args, dict):
            found = self.effect_of(args)
            if found is not None:
                return found
        return self.effect

    @property
    def app_only(self) -> bool:
        """Only an MCP Apps view calls it (``_meta.ui.visibility == ["app"]``): not the model's."""
        ui = (self.meta or {}).get("ui")
        return isinstance(ui, dict) and ui.get("visibility") == ["app"]

    def describe(self, apps: bool = True) -> dict[str, Any]:
        """The tools/list entry; without ``apps`` (a client that is no MCP Apps host) its
        ``_meta.ui`` link to a view is left out."""
        out: dict[str, Any] = {"name": self.name, "description": self.description,
                               "inputSchema": self.input_schema}
        if self.title:
            out["title"] = self.title
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        out["annotations"] = self.effect.annotations(self.title)
        out["icons"] = icons(self.icon)
        meta = self.meta if apps else {k: v for k, v in (self.meta or {}).items() if k != "ui"}
        if meta:
            out["_meta"] = meta
        if self.task_support != "forbidden":
            out["execution"] = {"taskSupport": self.task_support}
        return out


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    description: str
    handler: Handler  # handler(ctx) -> list of contents (content.resource_text/_blob) or str
    mime_type: str = "text/plain"
    title: str | None = None
    meta: dict[str, Any] | None = None  # its ``_meta`` in resources/list (an Apps view's CSP)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name,
                               "description": self.description, "mimeType": self.mime_type}
        if self.title:
            out["title"] = self.title
        if self.meta:
            out["_meta"] = self.meta
        return out


@dataclass(frozen=True)
class ResourceTemplate:
    """An RFC 6570 level-1 template; ``{var}`` matches one segment, ``{+var}`` the rest."""

    uri_template: str
    name: str
    description: str
    handler: Handler  # handler(ctx, uri, variables: dict[str, str]) -> contents
    mime_type: str = "text/plain"
    title: str | None = None
    # complete(ctx, variable, prefix, known) -> values (what this caller may see); ``known``
    # holds the template's other variables the client has filled in (context.arguments)
    complete: Callable[[Any, str, str, dict[str, str]], list[str]] | None = None

    def describe(self) -> dict[str, Any]:
        out = {"uriTemplate": self.uri_template, "name": self.name,
               "description": self.description, "mimeType": self.mime_type}
        if self.title:
            out["title"] = self.title
        return out

    def match(self, uri: str) -> dict[str, str] | None:
        found = _template_regex(self.uri_template).fullmatch(uri)
        return found.groupdict() if found else None


def _template_regex(template: str) -> re.Pattern[str]:
    pattern, pos = "", 0
    for var in re.finditer(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}", template):
        pattern += re.escape(template[pos:var.start()])
        pattern += f"(?P<{var.group(2)}>{'.+' if var.group(1) else '[^/]+'})"
        pos = var.end()
    return re.compile(pattern + re.escape(template[pos:]))


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False
    complete: Callable[..., list[str]] | None = None  # complete(ctx, prefix, context_args)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "required": self.required}


@dataclass(frozen=True)
class Prompt:
    name: str
    description: str
    handler: Handler  # handler(ctx, args: dict[str, str]) -> list of messages or (desc, msgs)
    arguments: tuple[PromptArgument, ...] = ()
    title: str | None = None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.description,
                               "arguments": [a.describe() for a in self.arguments]}
        if self.title:
            out["title"] = self.title
        return out


# observer(ctx, tool name, arguments, result dict or None when cancelled, seconds taken)
CallObserver = Callable[[Any, str, dict[str, Any], dict[str, Any] | None, float], None]


class Registry:
    """Named tools, resources, templates and prompts; registering a name twice is an error."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        # Told of every finished tools/call, in registration order, each on its own (the audit
        # log, a teaching session's capture): features add theirs with ``call_observer``.
        self.observers: list[CallObserver] = []

    def observe(self, observer: CallObserver) -> CallObserver:
        """Add ``observer`` (once, however often the app is built); usable as a decorator."""
        if observer not in self.observers:
            self.observers.append(observer)
        return observer

    def add(self, item: Tool | Resource | ResourceTemplate | Prompt) -> None:
        table, key = self._slot(item)
        if key in table and table[key] is not item:
            raise ValueError(f"MCP {type(item).__name__.lower()} {key!r} is already registered")
        table[key] = item

    def _slot(self, item: Any) -> tuple[dict[str, Any], str]:
        if isinstance(item, Tool):
            if not isinstance(item.effect, Effect):
                raise ValueError(f"tool {item.name}: declare its effect (app.actions.effects)")
            if not NAME.match(item.name):
                raise ValueError(f"tool name {item.name!r}: use 1-128 of A-Z a-z 0-9 _ . -")
            if item.input_schema.get("type") != "object":
                raise ValueError(f"tool {item.name}: inputSchema must be an object schema")
            return self.tools, item.name
        if isinstance(item, Resource):
            return self.resources, item.uri
        if isinstance(item, ResourceTemplate):
            return self.templates, item.uri_template
        if isinstance(item, Prompt):
            return self.prompts, item.name
        raise TypeError(f"cannot register {item!r}")

    def merged(self, other: Registry) -> Registry:
        """A new registry holding both (used for the opt-in conformance profile)."""
        combined = Registry()
        for source in (self, other):
            for observer in source.observers:
                combined.observe(observer)
            for table in (source.tools, source.resources, source.templates, source.prompts):
                for item in table.values():
                    combined.add(item)
        return combined

    # -- decorators -------------------------------------------------------------------------

    def tool(self, name: str, description: str, input_schema: dict[str, Any] | None = None,
             output_schema: dict[str, Any] | None = None, *, effect: Effect,
             title: str | None = None, effect_of: EffectOf | None = None,
             icon: str = "harmonic", meta: dict[str, Any] | None = None,
             task_support: str = "forbidden", task_prepare: Handler | None = None,
             subject_of: Callable[[dict[str, Any]], str | None] | None = None
             ) -> Callable[[Handler], Handler]:
        icons(icon)  # an unknown icon fails at import, not in a client's tools/list
        if task_support not in ("forbidden", "optional", "required"):
            raise ValueError(f"task_support of {name}: forbidden, optional or required")
        def decorate(handler: Handler) -> Handler:
            self.add(Tool(name, description, handler, effect, input_schema or dict(EMPTY_OBJECT),
                          output_schema, title, effect_of, icon, meta, task_support,
                          task_prepare, subject_of))
            return handler
        return decorate

    def resource(self, uri: str, name: str, description: str, mime_type: str = "text/plain",
                 title: str | None = None, meta: dict[str, Any] | None = None
                 ) -> Callable[[Handler], Handler]:
        def decorate(handler: Handler) -> Handler:
            self.add(Resource(uri, name, description, handler, mime_type, title, meta))
            return handler
        return decorate

    def resource_template(self, uri_template: str, name: str, description: str,
                          mime_type: str = "text/plain", title: str | None = None,
                          complete: Callable[[Any, str, str, dict[str, str]], list[str]]
                          | None = None) -> Callable[[Handler], Handler]:
        def decorate(handler: Handler) -> Handler:
            self.add(ResourceTemplate(uri_template, name, description, handler, mime_type,
                                      title, complete))
            return handler
        return decorate

    def prompt(self, name: str, description: str, arguments: tuple[PromptArgument, ...] = (),
               title: str | None = None) -> Callable[[Handler], Handler]:
        def decorate(handler: Handler) -> Handler:
            self.add(Prompt(name, description, handler, tuple(arguments), title))
            return handler
        return decorate


# The registry every feature package writes to. The conformance fixtures live in their own
# registry (the top-level harmonic_conformance package) and are merged in only when that
# profile is switched on.
REGISTRY = Registry()
tool = REGISTRY.tool
resource = REGISTRY.resource
resource_template = REGISTRY.resource_template
prompt = REGISTRY.prompt
call_observer = REGISTRY.observe


def _tool_call_effect(name: str, arguments: Any) -> Effect | None:
    found = REGISTRY.tools.get(name)
    return found.call_effect(arguments) if found is not None else None


# Domain code (recipes, workflow validation) asks about tools through the shared layer.
tool_catalog.provide(lambda: sorted(REGISTRY.tools), _tool_call_effect)


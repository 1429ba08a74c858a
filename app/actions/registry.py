"""Action and parameter definitions, the registry itself, and parameter validation."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from app.actions.effects import Effect
from app.actions.form_fields import coerce, nest
from app.actions.schemas import problems, short_shape
from app.services.deadlines import NO_DEADLINE
from app.services.errors import Conflict, Forbidden, Invalid, NotFound
from app.services.timeparse import parse_datetime

# How a parameter is declared. JSON Schema types, plus two declaration shorthands that agents
# never see as types: "text" is a multi-line string (a textarea in HTML; its schema says
# "x-multiline") and "datetime" accepts ISO 8601 (format date-time), a unix timestamp or a
# relative time such as 7d. "array"/"object" carry their JSON Schema in `schema`.
PARAM_TYPES = ("string", "text", "integer", "number", "boolean", "datetime", "array", "object")
DATETIME_HELP = "ISO 8601 date-time, a unix timestamp, or relative like 30m, 3h, 7d, 1w"


@dataclass(frozen=True)
class Param:
    """One action parameter, declared once; ``json_schema()`` is what every reader sees."""

    name: str
    type: str
    description: str
    required: bool = False
    enum: tuple[str, ...] | None = None
    minimum: float | None = None
    max_length: int | None = None
    # The full JSON Schema when it is declared elsewhere (items/properties of an array or
    # object; a grammar's own property schemas); the fields below are laid over it.
    schema: dict[str, Any] | None = None
    pattern: str | None = None  # a regular expression a string must match entirely
    default: Any = None  # applied when the parameter is absent; shown in forms and schemas
    secret: bool = False  # e.g. a password: rendered as a password input, never echoed
    maximum: float | None = None
    min_length: int | None = None
    format: str | None = None  # a JSON Schema format of a string, e.g. "uri", "email"
    example: Any = None  # one valid value, shown in the schema's "examples"

    def __post_init__(self) -> None:
        if self.type not in PARAM_TYPES:
            raise ValueError(f"{self.name}: unknown parameter type {self.type}")

    def json_schema(self) -> dict[str, Any]:
        """This parameter as JSON Schema 2020-12: what forms, Markdown, MCP, validation and
        recipes read."""
        base: dict[str, Any]
        if self.schema is not None and self.type in ("string", "integer", "number", "boolean"):
            base = dict(self.schema)  # declared elsewhere as JSON Schema (e.g. by a grammar)
            if "anyOf" not in base:  # branches (e.g. string or null) carry their own types
                base.setdefault("type", self.type)
        elif self.type in ("string", "text"):
            base = {"type": "string"}
            if self.format:
                base["format"] = self.format
            if self.min_length:
                base["minLength"] = self.min_length
            if self.max_length:
                base["maxLength"] = self.max_length
            if self.pattern:
                # JSON Schema patterns are unanchored; the registry's match the whole string.
                base["pattern"] = f"^(?:{self.pattern})$"
            if self.type == "text":
                base["x-multiline"] = True
        elif self.type == "datetime":
            # anyOf branches of one type each, not a type array: clients that map tool schemas
            # onto a single-type dialect (OpenAPI, Gemini) reject or drop type arrays.
            base = {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}]}
        elif self.type in ("array", "object"):
            base = dict(self.schema or {"type": self.type})
            base.setdefault("type", self.type)
        else:
            base = {"type": self.type}
        if self.enum:
            base["enum"] = list(self.enum)
        if self.minimum is not None:
            base["minimum"] = self.minimum
        if self.maximum is not None:
            base["maximum"] = self.maximum
        if self.default is not None:
            base["default"] = self.default
        description = self.description
        if self.type == "datetime" and DATETIME_HELP not in description:
            description = f"{description} ({DATETIME_HELP})"
        base["description"] = description
        if self.example is not None:
            base["examples"] = [self.example]
        return base

    @property
    def lines(self) -> bool:
        """An array of strings: a form takes it one item per line (JSON works too)."""
        items = (self.schema or {}).get("items")
        return self.type == "array" and isinstance(items, dict) and items.get("type") == "string"

    @property
    def display_type(self) -> str:
        """The parameter's JSON Schema as one readable line (``{x: number, y: number}``)."""
        return short_shape(self.json_schema())

    def summary(self) -> dict[str, Any]:
        """The readable entry of a parameter list (frontmatter, ``/actions``)."""
        entry = {"name": self.name, "type": self.display_type, "required": self.required,
                 "description": self.description}
        if self.default is not None:
            entry["default"] = self.default
        return entry


@dataclass
class Context:
    """What an action needs to know about where it runs: the page, the caller and the items."""

    page: str  # page name, e.g. "note"
    path: str  # the page path, e.g. /studios/demo/n/abcd1234
    user: Any = None  # app.models.User or None
    studio: Any = None
    member: Any = None  # the caller's Membership in the studio, if any
    item: Any = None  # the page's main object (a note, decision, ...)
    args: dict[str, Any] = field(default_factory=dict)  # URL arguments
    base_url: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # The caller (app.core.identity.Identity) of an action being run: work it starts for later
    # (a queued run) acts as this identity.
    identity: Any = None


@dataclass
class Result:
    message: str
    location: str | None = None  # path of what was created or changed
    created: bool = False
    data: dict[str, Any] = field(default_factory=dict)


Rule = Callable[[Context], str | None]  # returns the refusal reason, or None when allowed
Handler = Callable[[Context, dict[str, Any]], Result]


@dataclass(frozen=True)
class Action:
    name: str
    description: str
    params: tuple[Param, ...]
    pages: tuple[str, ...]
    handler: Handler
    authorize: Rule
    # What running it does (app.actions.effects): the scope it needs, its MCP hints, whether
    # a replay must confirm it.
    effect: Effect
    available: Callable[[Context], bool] = lambda ctx: True
    label: Callable[[Context], str] | None = None  # e.g. "Reconfirm read" after an edit
    # Current values for an edit form (a person editing a note starts from its text).
    prefill: Callable[[Context], dict[str, Any]] | None = None
    # What a person picks from, by parameter, where the values are the page's own (a
    # decision's live options): the HTML form offers a select of them instead of a text box
    # to type one into exactly. Agents read the same values on the page.
    choices: Callable[[Context], dict[str, list[str]]] | None = None
    # True when the action's effect already holds for this caller (e.g. already joined): it is
    # no longer offered, but a repeat is accepted and changes nothing, so retries are safe.
    done: Callable[[Context], bool] | None = None
    # What else a successful run changes, besides its page and its result's location: page
    # paths or resource URIs (a comment changes its parent item's page; a floorplan change
    # its .svg and .png too). Subscribers to each are told after the commit.
    touches: Callable[[Context, Result], Iterable[str]] | None = None
    # Why the action is not available here now, in words a caller can act on ("the decision
    # closed at ...; its outcome is on the page"); None when it cannot say.
    unavailable_reason: Callable[[Context], str | None] | None = None
    # A studio's read-only guests are refused every action that writes (``refusal``), except
    # the few that say so here (leaving the studio, accepting an invite).
    guests: bool = False
    # The actions a caller most likely runs next, where the result leads (its location, else
    # this page), given what this run made: a result names them with their parameters' schema
    # so an agent need not read that page first (a new decision: vote; a new plan: add_room).
    next_steps: Callable[[Context, Result], Iterable[str]] | None = None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def signature(self) -> str:
        return f"{self.name}({', '.join(p.name for p in self.params)})"

    def title(self, ctx: Context | None = None) -> str:
        if ctx is not None and self.label is not None:
            return self.label(ctx)
        return self.name.replace("_", " ").capitalize()

    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {p.name: p.json_schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def form_values(self, ctx: Context) -> dict[str, Any]:
        """What an HTML form starts with: current values, else each parameter's default."""
        values = {p.name: p.default for p in self.params if p.default is not None}
        if self.prefill is not None:
            values.update({k: v for k, v in self.prefill(ctx).items() if v is not None})
        return values

    def changed(self, ctx: Context, result: Result) -> list[str]:
        """The pages and resources a successful run changed: its page, where its result is,
        and whatever it declares it touches."""
        found = [ctx.path, result.location or ""]
        if self.touches is not None:
            found += list(self.touches(ctx, result))
        return [f for f in found if f]

    def refusal(self, ctx: Context) -> str | None:
        """Why the caller may not run this action here now, or None when they may.

        The one place a guest's writes are refused, so every door (forms, HTTP, MCP, recipes,
        workflows) refuses them alike: a guest runs only what reads, and what says ``guests``.
        """
        reason = self.authorize(ctx)
        if reason is None and not self.guests and self.effect.writes \
                and getattr(ctx.member, "role", None) == "guest":
            studio = getattr(ctx.studio, "handle", "")
            return (f"you are a guest of the studio '{studio}': guests can read but not write; "
                    "ask an admin to make you a member")
        return reason


ACTIONS: dict[str, Action] = {}


def action(name: str, description: str, pages: tuple[str, ...] | str, authorize: Rule, *,
           effect: Effect, params: tuple[Param, ...] = (),
           available: Callable[[Context], bool] | None = None,
           label: Callable[[Context], str] | None = None,
           prefill: Callable[[Context], dict[str, Any]] | None = None,
           choices: Callable[[Context], dict[str, list[str]]] | None = None,
           done: Callable[[Context], bool] | None = None,
           touches: Callable[[Context, Result], Iterable[str]] | None = None,
           unavailable_reason: Callable[[Context], str | None] | None = None,
           guests: bool = False,
           next_steps: Callable[[Context, Result], Iterable[str]] | None = None,
           ) -> Callable[[Handler], Handler]:
    """Register the decorated handler as an action (names are unique across the app).

    ``effect`` is required: every action says whether it reads, writes (idempotently or not)
    or destroys (``app.actions.effects``).
    """
    if not isinstance(effect, Effect):
        raise TypeError(f"action {name}: effect must be an app.actions.effects.Effect")

    def register(handler: Handler) -> Handler:
        if name in ACTIONS:
            raise ValueError(f"action {name} registered twice")
        ACTIONS[name] = Action(
            name=name, description=description, params=tuple(params),
            pages=(pages,) if isinstance(pages, str) else tuple(pages), handler=handler,
            authorize=authorize, available=available or (lambda ctx: True), label=label,
            effect=effect, prefill=prefill, choices=choices, done=done, touches=touches,
            unavailable_reason=unavailable_reason, guests=guests, next_steps=next_steps)
        return handler

    return register


def actions_at(page: str) -> list[Action]:
    """Every action any caller could ever see on this page (state and rights aside)."""
    return [a for a in ACTIONS.values() if page in a.pages]


def offered_actions(ctx: Context) -> list[Action]:
    """The actions this caller may run on this page in its current state."""
    return [a for a in actions_at(ctx.page) if a.available(ctx) and a.refusal(ctx) is None]


def check_offered(ctx: Context, name: str) -> Action:
    """The action ``name`` if the caller may run it here; NotFound/Forbidden/Conflict say why."""
    candidates = {a.name: a for a in actions_at(ctx.page)}
    act = candidates.get(name)
    if act is None:
        raise NotFound(f"'{name}' is not a valid action at {ctx.path}",
                       actions=[a.name for a in offered_actions(ctx)])
    reason = act.refusal(ctx)
    if reason:
        raise Forbidden(reason, link=ctx.extra.get("join_link"))
    if not act.available(ctx) and not (act.done is not None and act.done(ctx)):
        why = act.unavailable_reason(ctx) if act.unavailable_reason is not None else None
        raise Conflict(f"'{name}' is not available here: {why}" if why
                       else f"'{name}' is not available here in the current state",
                       actions=[a.name for a in offered_actions(ctx)], reason=why)
    return act


# Validation ---------------------------------------------------------------------------------

_TRUE = {"true", "on", "1", "yes"}
_FALSE = {"false", "off", "0", "no", ""}


def _coerce(param: Param, value: Any, from_form: bool) -> tuple[Any, str | None]:
    """(value, error) for one parameter; form values arrive as strings and are converted."""
    kind = param.type
    if kind in ("string", "text", "datetime") and isinstance(value, str):
        if param.max_length and len(value) > param.max_length:
            return None, f"at most {param.max_length} characters"
        if param.enum and value not in param.enum:
            return None, f"must be one of: {', '.join(param.enum)}"
        if param.pattern and not re.fullmatch(param.pattern, value):
            return None, f"must match {param.pattern}"
        if kind == "datetime":
            return value, _not_a_time(value)
        return value, None
    if kind == "datetime" and isinstance(value, int | float) and not isinstance(value, bool):
        return value, None
    if kind == "boolean":
        if isinstance(value, bool):
            return value, None
        if from_form and isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE, None
        return None, "must be a boolean (true or false)"
    if kind in ("integer", "number"):
        number: Any = value
        if from_form and isinstance(value, str):
            try:
                number = int(value) if kind == "integer" else float(value)
            except ValueError:
                return None, f"must be an {kind}" if kind == "integer" else "must be a number"
        if isinstance(number, bool) or not isinstance(number, int | float):
            return None, "must be an integer" if kind == "integer" else "must be a number"
        if kind == "integer" and isinstance(number, float):
            if not number.is_integer():
                return None, "must be an integer"
            number = int(number)
        if param.minimum is not None and number < param.minimum:
            return None, f"must be at least {param.minimum:g}"
        return number, None
    if kind in ("array", "object") and from_form and isinstance(value, list | dict):
        # Posted field by field (``size[width]``, ``votes[0][accept]``): the schema's types.

        value = coerce(param.json_schema(), value)
    if kind == "array":
        if from_form and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                if not param.lines:
                    return None, f"must be a JSON {param.display_type}"
                # A person types one item per line; blank lines are just spacing.
                value = [line for line in value.splitlines() if line.strip()]
        if not isinstance(value, list):
            return None, f"must be an {param.display_type}"
        return value, None
    if kind == "object":
        if from_form and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None, f"must be a JSON object {param.display_type}"
        if not isinstance(value, dict):
            return None, _must_be_object(param)
        return value, None
    return None, f"must be a {'string' if kind == 'text' else kind}"


def _not_a_time(value: str) -> str | None:
    """Why ``value`` is none of the forms a date-time parameter takes, or None: read here, with
    the other parameters, so a refusal names every bad one at once (whether it is in the future
    is the service's to say, in the studio's time zone)."""
    if value.strip().lower() in NO_DEADLINE | {""}:
        return None
    try:
        parse_datetime(value)
    except ValueError as exc:
        return str(exc)
    except OverflowError:  # far beyond any date: the service says what to use instead
        return None
    return None


def _must_be_object(param: Param) -> str:
    shape = param.display_type
    return f"must be an object {shape}" if shape.startswith("{") else "must be an object"


def _check_schema(param: Param, value: Any) -> list[dict[str, str]]:
    """The schema's verdict on an already coerced value: bounds, nested shapes, anything the
    friendly coercions above do not look at, each problem named with its path
    (``votes[0].option_title``). Every door validates through here."""
    out = []
    for where, message in problems(param.json_schema(), value):
        entry = {"param": param.name, "message": f"{where.lstrip('.')}: {message}" if where
                 else message}
        if where:
            entry["path"] = f"{param.name}{where}"
        out.append(entry)
    return out


# Fields every people's form carries besides the action's parameters: its CSRF token and its
# one-time key (app.web.pages.form_key).
IGNORED_FORM_FIELDS = {"csrf_token", "form_key"}


def validate_params(act: Action, raw: dict[str, Any], from_form: bool = False) -> dict[str, Any]:
    """Check ``raw`` against the action's parameters; Invalid lists every problem at once."""
    errors: list[dict[str, str]] = []
    clean: dict[str, Any] = {}
    if from_form:
        raw = nest(raw)
    known = {p.name for p in act.params}
    for key in raw:
        if key not in known and not (from_form and key in IGNORED_FORM_FIELDS):
            expected = ", ".join(sorted(known)) or "none"
            errors.append({"param": key, "message": f"unknown parameter (expected: {expected})"})
    for param in act.params:
        value = raw.get(param.name)
        if from_form and value == "" and param.type not in ("boolean",):
            value = None  # an empty optional form field means "not given"
        if value is None:
            if param.required:
                errors.append({"param": param.name, "message": "is required"})
            elif param.default is not None:
                clean[param.name] = param.default
            continue
        coerced, error = _coerce(param, value, from_form)
        found = [{"param": param.name, "message": error}] if error \
            else _check_schema(param, coerced)
        if found:
            errors += found
        else:
            clean[param.name] = coerced
    if errors:
        raise Invalid(f"invalid parameters for {act.name}", errors=errors)
    return clean

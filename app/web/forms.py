"""Forms for people, generated from the actions' JSON Schemas, and what they submit.

``fields_for`` turns an action's parameters into a tree of ``Field``s the form macro renders
(objects with properties become fieldsets of typed inputs, enums selects, what the action
offers as choices a select with an empty first entry, date-times ``datetime-local`` inputs in
the viewer's zone). ``nest`` is the other half at the HTML door:
``size[width]=4`` becomes ``{"size": {"width": 4}}`` and a local date-time gets its zone's
offset, before the registry validates the parameters like any other door's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from app.actions import Action, Context, form_fields
from app.actions.registry import Param
from app.web.chrome import exact, humane, local_input, viewer_zone, zone_names

LOCAL_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$")


@dataclass
class Field:
    kind: str  # text textarea password select checkbox number datetime fieldset lines json
    name: str
    id: str
    label: str
    hint: str = ""
    required: bool = False
    value: Any = None
    options: list[str] = field(default_factory=list)
    minimum: float | None = None
    maximum: float | None = None
    step: str = ""
    max_length: int | None = None
    children: list[Field] = field(default_factory=list)
    error: str = ""
    zone: str = ""  # a date-time's zone (IANA name), for its hint and shortcuts
    # Inside an optional group (a fieldset the person may leave empty): "required" means
    # "required if the group is used", so the browser must not insist and a select can be empty.
    optional_group: bool = False
    # A select's first, empty entry ("Choose…"): a required pick the person must make, where
    # preselecting the first value could rename or delete the wrong thing.
    prompt: str = ""
    option_labels: dict[str, str] = field(default_factory=dict)  # a select's values in words
    # More attributes of the input, from the page (data-* hooks for harmonic.js, autocomplete).
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def hint_id(self) -> str:
        return f"{self.id}-hint"

    @property
    def error_id(self) -> str:
        return f"{self.id}-error"

    @property
    def described_by(self) -> str:
        return " ".join(i for i, on in ((self.error_id, self.error), (self.hint_id, self.hint))
                        if on)


def _types(schema: dict[str, Any]) -> list[str]:
    kinds: list[str] = []
    for branch in schema.get("anyOf") or [schema]:
        kind = branch.get("type") if isinstance(branch, dict) else None
        kinds += kind if isinstance(kind, list) else [kind] if kind else []
    return [k for k in kinds if k != "null"] or ["string"]


@lru_cache(maxsize=1024)  # pure, and asked again for every form shown
def _without_resources(text: str) -> str:
    """An agent's pointer to an MCP resource means nothing to a person: "X (see
    floorplan://schema; Y)" → "X (Y)", "X (see floorplan://schema)" → "X"."""
    scheme = r"(?!https?://)[a-z][a-z0-9+.-]*://"  # web links stay: a person can follow them
    text = re.sub(rf"(?:see|read)\s+{scheme}[^\s;)]+;\s*", "", text)
    text = re.sub(rf"\s*\((?:see|read)\s+{scheme}[^\s)]+\)", "", text)
    return re.sub(rf"\s*\b{scheme}\S+", "", text).strip()


@lru_cache(maxsize=1024)  # pure, and asked again for every form shown
def _useful_hint(hint: str, name: str, label: str) -> str:
    """No hint that only repeats the field's name ("size", "relativePosition")."""
    def plain(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    return "" if plain(hint) in (plain(name), plain(label)) else hint


def _schema_field(name: str, fid: str, schema: dict[str, Any], required: bool, value: Any,
                  depth: int = 0, optional_group: bool = False) -> Field:
    """One input (or fieldset) for a property of a nested object schema."""
    kind = _types(schema)[0]
    key = name.rsplit("[", 1)[-1].rstrip("]")
    label = humane(key, schema.get("title"))
    hint = _useful_hint(str(schema.get("description") or ""), key, label)
    out = Field("text", name, fid, label, hint, required, value, optional_group=optional_group)
    if schema.get("enum"):
        out.kind, out.options = "select", [str(v) for v in schema["enum"]]
    elif kind == "boolean":
        out.kind = "checkbox"
    elif kind in ("integer", "number"):
        out.kind, out.step = "number", "1" if kind == "integer" else "any"
        out.minimum = schema.get("minimum", schema.get("exclusiveMinimum"))
        out.maximum = schema.get("maximum", schema.get("exclusiveMaximum"))
    elif kind == "object" and isinstance(schema.get("properties"), dict) and depth < 3:
        out.kind = "fieldset"
        given = value if isinstance(value, dict) else {}
        needed = set(schema.get("required") or ())
        inner_optional = optional_group or not required
        out.children = [_schema_field(f"{name}[{prop}]", f"{fid}-{prop}", sub, prop in needed,
                                      given.get(prop), depth + 1, inner_optional)
                        for prop, sub in schema["properties"].items() if isinstance(sub, dict)]
    elif kind in ("object", "array"):
        out.kind = "json"
        if value is not None and not isinstance(value, str):
            out.value = json.dumps(value)
    return out


def _param_field(act: Action, p: Param, value: Any, zone: ZoneInfo, studio_zone: ZoneInfo
                 ) -> Field:
    fid = f"{act.name}-{p.name}"
    schema = p.json_schema()
    label = humane(p.name, schema.get("title"))
    # An agent's hint about a schema resource means nothing to a person.
    hint = _without_resources(p.description)
    hint = _useful_hint(hint, p.name, label)
    f = Field("text", p.name, fid, label, hint, p.required, value, max_length=p.max_length)
    if p.secret:
        f.kind, f.value = "password", None
    elif p.enum:
        f.kind, f.options = "select", list(p.enum)
    elif p.name == "timezone" and p.type == "string":
        f.kind, f.options = "select", zone_names()  # picked from the IANA names, never typed
    elif p.type == "boolean":
        # A checkbox reads best as its sentence ("Anyone in the studio may add options").
        f.kind, f.label, f.hint = "checkbox", hint or label, ""
    elif p.type == "text":
        f.kind = "textarea"
    elif p.type in ("integer", "number"):
        f.kind, f.step = "number", "1" if p.type == "integer" else "any"
        f.minimum = p.minimum if p.minimum is not None else schema.get("minimum")
        f.maximum = p.maximum if p.maximum is not None else schema.get("maximum")
    elif p.type == "datetime":
        f.kind, f.zone = "datetime", zone.key
        if isinstance(value, str) and LOCAL_DATETIME.match(value.strip()):
            # A prefilled local time is the studio's; shown in the viewer's zone.
            moment = datetime.fromisoformat(value.strip()).replace(tzinfo=studio_zone)
            f.value = local_input(moment, zone)
        else:
            f.value = local_input(value, zone)
        f.hint = f"Your time zone: {zone.key}. Leave empty for none."
        if f.value:
            moment = datetime.fromisoformat(f.value).replace(tzinfo=zone)
            f.hint = f"Now set to {exact(moment, zone)}. " + f.hint
    elif p.lines:
        f.kind = "lines"
        if isinstance(value, list):
            f.value = "\n".join(str(v) for v in value)
        f.hint = ("One per line. " + hint).strip()
    elif p.type == "object" and isinstance(schema.get("properties"), dict):
        f = _schema_field(p.name, fid, schema, p.required, value)
        f.label, f.hint = label, _useful_hint(hint, p.name, label)
    elif p.type in ("array", "object"):
        f.kind = "json"
        if value is not None and not isinstance(value, str):
            f.value = json.dumps(value)
    return f


def fields_for(act: Action, ctx: Context, state: dict[str, Any] | None = None, *,
               only: Iterable[str] | None = None, skip: Iterable[str] = (),
               labels: Mapping[str, str] | None = None, hints: Mapping[str, str] | None = None,
               values: Mapping[str, Any] | None = None, prefix: str = "",
               options: Mapping[str, Mapping[str, str]] | None = None,
               attrs: Mapping[str, Mapping[str, str]] | None = None) -> list[Field]:
    """The fields of ``act``'s form: current values, or what was just submitted and refused
    (``state``: {"values": {...}, "errors": {param: message}}).

    A page that draws its own form picks fields (``only``, in that order; ``skip``) and says
    them in its own words (``labels``, ``hints``: by parameter name) or starts them elsewhere
    (``values``), says a select's values in words or offers a text parameter as a few
    choices (``options``: {param: {value: words}}),
    adds attributes (``attrs``: {param: {name: value}}) and gives a form repeated on a page
    its own ids (``prefix``: one per row); names, types, limits and messages stay the
    action's."""
    chosen = _fields(act, ctx, state, values)
    if only is not None:
        by_name = {f.name: f for f in chosen}
        chosen = [by_name[name] for name in only if name in by_name]
    left_out = set(skip)
    out = []
    for f in chosen:
        if f.name in left_out:
            continue
        if labels and f.name in labels:
            f = replace(f, label=labels[f.name])
            if f.hint and f.kind != "datetime":  # a hint that only repeats the new label goes
                f = replace(f, hint=_useful_hint(f.hint, f.name, f.label))
        if hints and f.name in hints:
            f = replace(f, hint=hints[f.name])
        if options and f.name in options:
            # A text parameter offered as a few choices ("7d", "30d", "never") in words.
            chosen_options = list(f.options) if f.kind == "select" else list(options[f.name])
            f = replace(f, kind="select", options=chosen_options,
                        option_labels=dict(options[f.name]))
        if attrs and f.name in attrs:
            f = replace(f, attrs={**f.attrs, **attrs[f.name]})
        if prefix:
            f = _renamed(f, f.id.replace(act.name, prefix, 1))
        out.append(f)
    return out


def _renamed(f: Field, new_id: str) -> Field:
    """``f`` (and its children) with ids under ``new_id``: two forms of one action on a page."""
    children = [_renamed(c, c.id.replace(f.id, new_id, 1)) for c in f.children]
    return replace(f, id=new_id, children=children)


def _fields(act: Action, ctx: Context, state: dict[str, Any] | None,
            start: Mapping[str, Any] | None) -> list[Field]:
    values = act.form_values(ctx)
    if start:
        values.update(start)
    errors: dict[str, str] = {}
    if state:
        values = form_fields.nest(state.get("values") or {})
        errors = state.get("errors") or {}
    zone = viewer_zone(ctx.studio)
    studio_zone = viewer_zone(None) if ctx.studio is None else _studio_zone(ctx.studio)
    if state:
        studio_zone = zone  # what the person typed was already in their own zone
    picks = act.choices(ctx) if act.choices is not None else {}
    out = []
    for p in act.params:
        f = _param_field(act, p, values.get(p.name), zone, studio_zone)
        if p.name in picks and f.kind == "text":
            f.kind, f.options, f.prompt = "select", list(picks[p.name]), "Choose…"
        f.error = errors.get(p.name, "")
        out.append(f)
    return out


def _studio_zone(studio: Any) -> ZoneInfo:
    try:
        return ZoneInfo(studio.timezone or "UTC")
    except (ValueError, KeyError):
        return ZoneInfo("UTC")


# What forms submit ----------------------------------------------------------------------------

def nest(act: Action, raw: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """An HTML form's flat fields as the parameters the action takes: bracketed names folded
    (``app.actions.form_fields``, which also types them against the schema during validation),
    and a datetime-local value, which has no zone, read in the zone it was shown in."""
    out = form_fields.nest(raw)
    zone = viewer_zone(ctx.studio)
    for p in act.params:
        value = out.get(p.name)
        if p.type == "datetime" and isinstance(value, str) and LOCAL_DATETIME.match(value):
            out[p.name] = datetime.fromisoformat(value).replace(tzinfo=zone).isoformat()
    return out

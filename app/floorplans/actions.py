"""Floorplan actions: create a plan, edit its DSL, and one action per modify operation.

The per-operation actions are generated from ``operations.operation_definitions()`` (the same
list the MCP ``modify_floorplan`` schema is built from), so a new operation or a new wall type in
the grammar shows up on the page, in its forms and in its Markdown without a line changed here.
"""

from __future__ import annotations

from typing import Any

from app.actions import rules
from app.actions.effects import DESTRUCTIVE, IDEMPOTENT_WRITE, WRITE
from app.actions.registry import Context, Param, Result, action
from app.floorplans import operations, store, tools
from app.floorplans.mcp_tools import plan_uri
from app.services import items
from app.services.errors import Invalid

DSL_HELP = "Floorplan DSL (see floorplan://schema; the plan page shows the syntax errors)"


@action("create_floorplan", "Create a floorplan in this studio (an empty DSL starts from a "
        "one-room plan; DSL with errors is refused, each error with its line and column)",
        "floorplans", rules.member,
        params=(Param("name", "string", "URL name: letters, digits, _ and -", required=True,
                      max_length=64, pattern=store.NAME_PATTERN),
                Param("dsl", "text", DSL_HELP, max_length=store.DSL_MAX)),
        effect=WRITE, next_steps=lambda ctx, result: ["add_room"])
def create_floorplan(ctx: Context, p: dict[str, Any]) -> Result:
    # A new plan that does not parse or validate would be announced as created and then fail
    # to draw: refuse it with every error instead (update_dsl, on an existing plan, keeps a
    # broken edit as a version and lists its errors, so work in progress is never lost).
    if (p.get("dsl") or "").strip():
        _refuse_errors(p["dsl"])
    plan = store.create(ctx.studio, ctx.user, p["name"], p.get("dsl"))
    return Result(f"Created floorplan {plan.name}.", items.path_of(ctx.studio, "floorplan", plan),
                  created=True, data={"name": plan.name, "version": plan.version,
                                      "plan": _plan_ref(ctx, plan),
                                      "rooms": tools.rooms_of(plan.dsl)})


def _plan_ref(ctx: Context, plan: Any) -> str:
    """``studio/name`` of a plan, as render_floorplan's ``plan`` takes it: a result names it so
    an agent draws the plan next without composing the reference itself."""
    return f"{ctx.studio.handle}/{plan.name}"


def _refuse_errors(dsl: str) -> None:
    """Invalid (422) naming each error of ``dsl`` with its line and column, if it has any."""
    errors = tools.validate_floorplan({"dsl": dsl}).get("errors") or []
    if not errors:
        return
    found = []
    for error in errors:
        where = (f"line {error['line']}, column {error.get('column') or 1}: "
                 if error.get("line") else "")
        found.append({"param": "dsl", "message": f"{where}{error.get('message')}"})
    raise Invalid(f"the floorplan DSL has {len(errors)} error(s), so nothing was created; fix "
                  f"them (validate_floorplan checks a draft) and try again", errors=found)


def _validation_note(dsl: str) -> str:
    found = tools.validate_floorplan({"dsl": dsl})
    errors, warnings = found.get("errors") or [], found.get("warnings") or []
    if not errors and not warnings:
        return "The plan is valid."
    parts = []
    if errors:
        first = errors[0]
        where = f" (line {first['line']})" if first.get("line") else ""
        parts.append(f"{len(errors)} error(s), first{where}: {first['message']}")
    if warnings:
        parts.append(f"{len(warnings)} warning(s)")
    return "; ".join(parts) + "."


@action("update_dsl", "Replace the plan's DSL text (saved as a new version, even with errors, "
        "which the page then lists)", "floorplan", rules.member,
        params=(Param("dsl", "text", DSL_HELP, required=True, max_length=store.DSL_MAX),),
        effect=IDEMPOTENT_WRITE, prefill=lambda ctx: {"dsl": ctx.item.dsl},
        touches=lambda ctx, result: _renderings(ctx) if result.data.get("changed") else [])
def update_dsl(ctx: Context, p: dict[str, Any]) -> Result:
    plan = ctx.item
    changed = store.save(plan, ctx.user, p["dsl"], "update_dsl")
    message = f"Saved version {plan.version}." if changed else "No change."
    return Result(f"{message} {_validation_note(plan.dsl)}",
                  items.path_of(ctx.studio, "floorplan", plan),
                  data={"version": plan.version, "changed": changed})


def _renderings(ctx: Context) -> list[str]:
    """What else changes with the plan: its stored resource and its rendered images."""
    path = items.path_of(ctx.studio, "floorplan", ctx.item)
    return [plan_uri(ctx.studio.handle, ctx.item.name), f"{path}.svg", f"{path}.png"]


# One action per modify operation ------------------------------------------------------------

# The parameters of each operation that accept null: absent from a call, they are passed on as
# null (the operation then removes what they set). A preview builds its values the same way.
NULLABLE: dict[str, list[str]] = {}


def operation_values(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The operation's flat parameters as ``tools.apply_operation`` takes them."""
    return {**{key: None for key in NULLABLE.get(name, [])}, **params}


def _param(name: str, prop: dict[str, Any], required: bool) -> tuple[Param, bool]:
    """A page parameter from one property of an operation's flat JSON Schema, and whether the
    property accepts null (then an absent value is passed on as null)."""
    # A nullable property is written as anyOf branches of one type each (see
    # operations.nullable); a type array is read too.
    branches = prop["anyOf"] if isinstance(prop.get("anyOf"), list) else [prop]
    declared = [branch.get("type", "string") for branch in branches]
    kinds = [k for kind in declared for k in ([kind] if isinstance(kind, str) else kind)]
    nullable = "null" in kinds
    kind = next((k for k in kinds if k != "null"), "string")
    description = prop.get("description") or name
    if nullable:
        description += " (leave empty to remove)"
    enum = tuple(prop["enum"]) if prop.get("enum") else None
    # The grammar's property schema is the parameter's schema, nested objects and bounds
    # included: the modify_floorplan tool and this page read the same definition.
    if kind in ("object", "array"):
        return Param(name, kind, description, required=required,
                     schema={**prop, "description": description}), nullable
    if kind not in ("string", "integer", "number", "boolean"):
        kind = "string"
    return Param(name, kind, description, required=required and not nullable, enum=enum,
                 minimum=prop.get("minimum"), default=prop.get("default"),
                 schema={**prop, "description": description}), nullable


def _register_operation(definition: dict[str, Any]) -> None:
    name = definition["name"]
    schema = definition["parameters"]
    required = set(schema.get("required") or ())
    converted = [_param(key, prop, key in required)
                 for key, prop in (schema.get("properties") or {}).items()]
    params = tuple(param for param, _ in converted)
    NULLABLE[name] = [param.name for param, can_be_null in converted if can_be_null]

    def handler(ctx: Context, p: dict[str, Any]) -> Result:
        result = store.apply(ctx.item, ctx.user, name, operation_values(name, p))
        change = (result.get("changes") or [{}])[0]
        detail = change.get("message") or f"{name} applied"
        return Result(f"{detail}. Saved version {ctx.item.version}.",
                      items.path_of(ctx.studio, "floorplan", ctx.item),
                      data={"version": ctx.item.version, "plan": _plan_ref(ctx, ctx.item),
                            "changes": result.get("changes", []),
                            "warnings": result.get("warnings", [])})

    effect = DESTRUCTIVE if name.startswith("remove_") else WRITE
    action(name, f"{definition['description']} (saved as a new version)", "floorplan",
           rules.member, params=params, effect=effect,
           touches=lambda ctx, result: _renderings(ctx))(handler)


for _definition in operations.operation_definitions():
    _register_operation(_definition)


# Versions ------------------------------------------------------------------------------------

def _shows_current_version(ctx: Context) -> str | None:
    """A version's own page offers to restore it unless it is the plan's current text (its
    HTML page draws no Restore button there either)."""
    shown = ctx.extra.get("version")
    if shown is not None and shown.number == ctx.item.version:
        return f"version {shown.number} is the plan's current version: nothing to restore"
    return None


@action("restore_floorplan_version", "Make an earlier version the plan's current one again "
        "(saved as a new version; nothing is lost)", ("floorplan_versions", "floorplan_version"),
        rules.member, available=lambda ctx: _shows_current_version(ctx) is None,
        unavailable_reason=_shows_current_version,
        params=(Param("version", "integer", "The number of the version to restore",
                      required=True, minimum=1),),
        effect=WRITE, touches=lambda ctx, result: _renderings(ctx))
def restore_floorplan_version(ctx: Context, p: dict[str, Any]) -> Result:
    plan = ctx.item
    old = store.version(plan, p["version"])
    changed = store.save(plan, ctx.user, old.dsl, f"restore version {old.number}")
    message = (f"Restored version {old.number} as version {plan.version}." if changed
               else f"Version {old.number} is already the current text: nothing changed.")
    return Result(f"{message} {_validation_note(plan.dsl)}",
                  items.path_of(ctx.studio, "floorplan", plan),
                  data={"version": plan.version, "restored": old.number, "changed": changed,
                        "plan": _plan_ref(ctx, plan)})

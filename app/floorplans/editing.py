"""Editing a plan as a person does: the drawing previewed as you type, and the plan's versions
to view, compare and restore.

``POST <plan>/preview`` takes the same fields as an operation's form (``operation`` names it:
``add_room``, ``resize_room``…, or ``update_dsl`` with ``dsl``), validates them with that
action's own parameters, applies the operation to the stored DSL with the same function the
action uses, and answers the drawing as SVG. Nothing is stored. The version pages reuse
``store`` and the ``restore_floorplan_version`` action.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify, request

from app.actions import Context
from app.actions.registry import ACTIONS, validate_params
from app.floorplans import store, tools
from app.floorplans.actions import NULLABLE, operation_values
from app.floorplans.pages import _plan, bp, drawing_label, flat_rooms, labelled, plan_nav
from app.services import items, textdiff
from app.services.errors import Invalid
from app.web import loaders
from app.web.pages import Page, page, request_params

# The drawing as you type ---------------------------------------------------------------------

def _previewed_dsl(plan: Any, raw: dict[str, Any], from_form: bool) -> tuple[str, str]:
    """(the DSL the fields would make, what the change does) or Invalid naming the problem."""
    operation = raw.pop("operation", None)
    raw.pop("csrf_token", None)
    if operation == "update_dsl":
        params = validate_params(ACTIONS["update_dsl"], raw, from_form)
        return params["dsl"], "Your edited DSL"
    if not isinstance(operation, str) or operation not in NULLABLE:
        known = ", ".join(["update_dsl", *sorted(NULLABLE)])
        raise Invalid("name the operation to preview",
                      errors=[{"param": "operation", "message": f"must be one of: {known}"}])
    params = validate_params(ACTIONS[operation], raw, from_form)
    result = tools.apply_operation(plan.dsl, operation, operation_values(operation, params))
    if not result.get("success"):
        messages = [e["message"] for e in result.get("errors") or []] or ["operation failed"]
        raise Invalid(f"{operation} cannot be applied: {'; '.join(messages)}",
                      errors=[{"param": "(operation)", "message": m} for m in messages])
    change = (result.get("changes") or [{}])[0]
    return result["dsl"], str(change.get("message") or f"{operation} applied")


@bp.post("/studios/<handle>/f/<name>/preview")
def floorplan_preview(handle: str, name: str) -> Response:
    ctx = _plan(handle, name)
    raw, from_form = request_params()
    dsl, change = _previewed_dsl(ctx.item, dict(raw), from_form)
    found = store.view(dsl)
    errors = [{"line": e.get("line"), "message": e.get("message", "")}
              for e in found["validation"].get("errors") or []]
    svg = labelled(found["svg"], drawing_label(ctx.item.name, found["rooms"]) + " (preview)")
    response = jsonify({"ok": svg is not None and not errors, "change": change,
                        "svg": str(svg) if svg is not None else None, "errors": errors,
                        "rooms": len(found["rooms"]), "saved": False})
    response.headers["Cache-Control"] = "no-store"
    return response


# Versions -----------------------------------------------------------------------------------

def _version_loader(user: Any, handle: str, name: str, number: int, **_: Any) -> Context:
    ctx = loaders.item_page("floorplan_version", "floorplan", "name")(user=user, handle=handle,
                                                                     name=name)
    ctx.extra["version"] = store.version(ctx.item, number)
    ctx.path = f"{ctx.path}/versions/{number}"
    return ctx


def _versions_nav(ctx: Context) -> list[tuple[str, str]]:
    path = items.path_of(ctx.studio, "floorplan", ctx.item)
    return plan_nav(ctx) + [("Versions", f"{path}/versions")]


@page(bp, "floorplan_version", "/studios/<handle>/f/<name>/versions/<int:number>",
      _version_loader)
def floorplan_version(ctx: Context) -> Page:
    version = ctx.extra["version"]
    found = store.view(version.dsl)
    return Page(ctx, f"{ctx.item.name}, version {version.number}", "floorplans/version", {
        "plan": ctx.item, "version": version, **found,
        "drawing": labelled(found["svg"], drawing_label(ctx.item.name, flat_rooms(found["rooms"]),
                                                        version.number)),
        "plan_path": items.path_of(ctx.studio, "floorplan", ctx.item),
    }, nav=_versions_nav(ctx))


def _number(key: str, default: int, plan: Any) -> int:
    raw = request.args.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise Invalid(f"'{key}' must be a version number",
                      errors=[{"param": key, "message": "must be an integer"}]) from None
    if not 1 <= value <= plan.version:
        raise Invalid(f"'{key}' must be a version of this plan (1 to {plan.version})",
                      errors=[{"param": key, "message": f"between 1 and {plan.version}"}])
    return value


@page(bp, "floorplan_compare", "/studios/<handle>/f/<name>/compare",
      loaders.item_page("floorplan_compare", "floorplan", "name", "/compare"))
def floorplan_compare(ctx: Context) -> Page:
    plan = ctx.item
    newer = _number("to", plan.version, plan)
    older = _number("from", max(1, newer - 1), plan)
    old, new = store.version(plan, older), store.version(plan, newer)
    sides = []
    for version in (old, new):
        found = store.view(version.dsl)
        sides.append({"version": version, "drawing": labelled(
            found["svg"], drawing_label(plan.name, flat_rooms(found["rooms"]), version.number)),
            "valid": found["validation"].get("valid", False)})
    return Page(ctx, f"{plan.name}: version {older} and version {newer}", "floorplans/compare", {
        "plan": plan, "old": old, "new": new, "sides": sides,
        "diff": textdiff.diff(old.dsl, new.dsl), "numbers": list(range(plan.version, 0, -1)),
        "plan_path": items.path_of(ctx.studio, "floorplan", plan),
    }, nav=_versions_nav(ctx))

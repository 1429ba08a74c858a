"""Floorplans stored in a studio: create, find, change (every change is a new version), history.

The service layer for shared plans: no Flask, no HTTP. Edits go through the language package
(``tools``), so a stored plan changes exactly as the MCP ``modify_floorplan`` tool would change it.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.floorplans import tools
from app.models import Studio, User
from app.models.floorplans import Floorplan, FloorplanVersion
from app.services import items
from app.services.errors import Conflict, Invalid, NotFound, invalid_param

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
NAME_RE = re.compile(NAME_PATTERN)
DSL_MAX = 200_000
SUMMARY_MAX = 300
STARTER = """floorplan
  floor ground {
    room Living at (0,0) size (8 x 6) label "start here"
  }
"""


def _lookup(studio: Studio, name: str) -> Floorplan | None:
    return db.session.scalars(
        select(Floorplan)
        .where(Floorplan.studio_id == studio.id, Floorplan.name == name)).one_or_none()


items.register(items.ItemKind("floorplan", "f", Floorplan, lambda plan: plan.name,
                              key=lambda plan: plan.name, lookup=_lookup,
                              label=("name",)))


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not NAME_RE.fullmatch(name):
        raise invalid_param("name", "1-64 of A-Z a-z 0-9 _ -, starting with a letter or digit")
    return name


def check_dsl(dsl: str) -> str:
    if len(dsl) > DSL_MAX:
        raise invalid_param("dsl", f"at most {DSL_MAX} characters")
    return dsl


def for_studio(studio: Studio) -> list[Floorplan]:
    return list(db.session.scalars(select(Floorplan).where(Floorplan.studio_id == studio.id)
                                   .order_by(Floorplan.name)))


def create(studio: Studio, user: User, name: str, dsl: str | None = None) -> Floorplan:
    """A new plan (the starter plan when no DSL is given), saved as version 1."""
    name = check_name(name)
    text = check_dsl(STARTER if dsl is None or not dsl.strip() else dsl)
    if _lookup(studio, name) is not None:
        raise Conflict(f"the studio already has a floorplan named '{name}'")
    plan = Floorplan(studio_id=studio.id, name=name, dsl=text, version=1,
                     created_by_id=user.id, updated_by_id=user.id)
    db.session.add(plan)
    db.session.flush()
    db.session.add(FloorplanVersion(floorplan_id=plan.id, number=1, dsl=text,
                                    summary="created", user_id=user.id))
    _flush()
    return plan


def save(plan: Floorplan, user: User, dsl: str, summary: str) -> bool:
    """Store ``dsl`` as the next version; False (and nothing stored) when the text is the same."""
    check_dsl(dsl)
    if dsl == plan.dsl:
        return False
    plan.version += 1
    plan.dsl, plan.updated_by_id = dsl, user.id
    db.session.add(FloorplanVersion(floorplan_id=plan.id, number=plan.version, dsl=dsl,
                                    summary=summary[:SUMMARY_MAX], user_id=user.id))
    _flush()
    return True


def _flush() -> None:
    try:
        db.session.flush()
    except IntegrityError:  # two saves raced for the same name or version number
        db.session.rollback()
        raise Conflict("the floorplan changed at the same time; reload and try again") from None


def apply(plan: Floorplan, user: User, action: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run one modify operation on the stored plan and save the result as a new version.

    A failed operation raises Invalid with the operation's own message and saves nothing.
    """
    result = tools.apply_operation(plan.dsl, action, params)
    if not result.get("success"):
        messages = [e["message"] for e in result.get("errors") or []] or ["operation failed"]
        raise Invalid(f"{action} failed: {'; '.join(messages)}",
                      errors=[{"param": "(operation)", "message": m} for m in messages])
    change = (result.get("changes") or [{}])[0]
    summary = f"{action} {change.get('target') or ''}".strip()
    if change.get("message"):
        summary += f": {change['message']}"
    save(plan, user, result["dsl"], summary)
    return result


def versions(plan: Floorplan) -> list[FloorplanVersion]:
    return list(db.session.scalars(
        select(FloorplanVersion).where(FloorplanVersion.floorplan_id == plan.id)
        .order_by(FloorplanVersion.number.desc())))


def version(plan: Floorplan, number: int) -> FloorplanVersion:
    """One saved version of a plan by its number (1 is the creation)."""
    found = (db.session.query(FloorplanVersion)
             .filter(FloorplanVersion.floorplan_id == plan.id, FloorplanVersion.number == number)
             .one_or_none())
    if found is None:
        raise NotFound(f"floorplan '{plan.name}' has no version {number} (versions 1 to "
                       f"{plan.version})")
    return found


def view(dsl: str) -> dict[str, Any]:
    """What a page shows of a plan: validation, rooms and the inline SVG (None when invalid)."""
    validation = tools.validate_floorplan({"dsl": dsl})
    svg, _mime, rendered = tools.render_floorplan({"dsl": dsl, "format": "svg",
                                                   "renderAllFloors": True})
    return {"validation": validation, "svg": svg if isinstance(svg, str) else None,
            "rooms": rendered.get("rooms") or [], "total_area": rendered.get("totalArea"),
            "floor_count": rendered.get("floorCount")}

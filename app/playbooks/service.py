"""Finding playbooks and recipes for a caller, generating and saving recipes.

Visibility: a signed-in caller sees the playbooks their user owns and those shared with a studio
they are a member of (its members review the recipe, its admins approve it); the token-less
loopback operator (``identity`` None, only with ``PLAYBOOK_AUTH=off``) sees every playbook on
the machine. A playbook the caller cannot see is reported as not found, never as forbidden.

Generating or saving a recipe records a new draft version (``app.playbooks.governance``);
stopping a teach session generates one on every door (``stopped_draft``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import or_, select

from app.actions.effects import READ, Effect
from app.core import tool_catalog
from app.core.identity import Identity
from app.db import writing
from app.extensions import db
from app.models.base import SHORT_ID, find_by_id
from app.models.playbooks import Playbook, PlaybookRun
from app.models.studios import Membership
from app.playbooks import capture, generate, governance, names, settings, teach, upstream
from app.playbooks.recipe import SEMVER, Recipe, load, parse_text, to_json
from app.services.errors import DomainError, Invalid, NotFound, invalid_param

# What a replay may do: executing runs any write a recipe holds, delete included, against the
# upstream; a dry run writes nothing there. The MCP tool and POST /replay declare it.
REPLAY = Effect("destructive", open_world=True)


def replay_effect(dry_run: bool) -> Effect:
    return READ if dry_run else REPLAY


def _visible(playbook: Playbook, identity: Identity | None) -> bool:
    if identity is None:
        return True
    if playbook.user_id is not None and playbook.user_id == identity.user_id:
        return True
    return governance.membership(playbook, identity.user_id) is not None


def list_for(identity: Identity | None) -> list[Playbook]:
    query = select(Playbook).order_by(Playbook.created_at.desc())
    if identity is not None:
        studios = select(Membership.studio_id).where(Membership.user_id == identity.user_id)
        query = query.where(or_(Playbook.user_id == identity.user_id,
                                Playbook.studio_id.in_(studios)))
    return list(db.session.scalars(query).all())


def get(ident: str, identity: Identity | None) -> Playbook:
    playbook = find_by_id(Playbook, ident)
    if playbook is None or not _visible(playbook, identity):
        raise NotFound(f"no playbook {ident}")
    return playbook


def get_run(playbook: Playbook | None, run_id: str, identity: Identity | None) -> PlaybookRun:
    run = find_by_id(PlaybookRun, run_id)
    if run is None or (playbook is not None and run.playbook_id != playbook.id) or (
            playbook is None and run.playbook_id is not None):
        raise NotFound(f"no run {run_id}")
    if identity is not None and run.user_id != identity.user_id:
        raise NotFound(f"no run {run_id}")
    return run


def runs_of(playbook: Playbook) -> list[PlaybookRun]:
    return list(db.session.scalars(select(PlaybookRun).where(
        PlaybookRun.playbook_id == playbook.id).order_by(PlaybookRun.created_at.desc())).all())


def recipe_path(playbook: Playbook) -> Path:
    return teach.folder(playbook) / capture.RECIPE


def read_recipe(playbook: Playbook) -> dict[str, Any] | None:
    path = recipe_path(playbook)
    if not path.exists():
        return None
    return parse_text(path.read_text(encoding="utf-8"))


def _bump(version: str) -> str:
    match = SEMVER.match(version or "")
    if not match:
        return "1.0.0"
    major, minor, patch = (int(g) for g in match.groups())
    return f"{major}.{minor}.{patch + 1}"


def element_info(ids: list[int]) -> dict[int, dict[str, Any]]:
    """Element identities from the upstream, for turning ids into selectors."""
    response = upstream.call({"jsonrpc": "2.0", "id": "generate", "method": "get_element_info",
                              "params": {"elementIds": ids}}, settings.current())
    result = response.get("result") if isinstance(response, dict) else None
    items = result.get("items") if isinstance(result, dict) else None
    return {i["elementId"]: i for i in items or [] if isinstance(i, dict)
            and isinstance(i.get("elementId"), int)}


@writing()
def generate_recipe(playbook: Playbook, identity: Identity | None = None) -> dict[str, Any]:
    if playbook.teaching:
        teach.stop_playbook(playbook)
    entries = capture.read(teach.folder(playbook))
    conf = settings.current()
    raw = generate.generate(playbook.name, entries, conf.volatile, element_info,
                            tool_catalog.read_only_tools(), dict(conf.default_caps))
    if not raw["steps"]:
        raise Invalid("the capture holds no successful calls to build a recipe from",
                      errors=[{"param": "capture", "message": "no usable entries"}])
    previous = read_recipe(playbook) if recipe_path(playbook).exists() else None
    if previous and isinstance(previous.get("version"), str):
        # The same recipe again keeps its version (stopping a session generates it already).
        same = governance.digest({**raw, "version": previous["version"]}) \
            == governance.digest(previous)
        raw["version"] = previous["version"] if same else _bump(previous["version"])
    load(raw)  # what we generate must be a valid recipe
    capture.write_atomic(recipe_path(playbook), to_json(raw))
    governance.record_version(playbook, raw, identity, "generated")
    db.session.commit()
    return raw


def stopped_draft(playbook: Playbook, identity: Identity | None,
                  door_names: dict[str, str] | None = None) -> dict[str, Any]:
    """What stopping a teach session answers on every door: its capture made into a draft
    recipe version (``recipe``, None when nothing usable was captured) and, in ``message``,
    what to do next in the door's own words (``door_names``: HTTP's by default)."""
    door_names = door_names or HTTP_NAMES
    session = door_names["session"]
    page = f"/playbooks/{playbook.short_id}"
    try:
        raw = generate_recipe(playbook, identity)
    except DomainError as exc:  # e.g. nothing usable was captured: say how, in one line
        return {"recipe": None,
                "message": f"No recipe generated ({exc.message}); record calls while "
                           f"teaching, then stop, or run generate_recipe on {page}."}
    title = f"{raw['name']}@{raw.get('version')}"
    name = playbook.short_id if session == MCP_NAMES["session"] else playbook.name
    how = (f"replay it with {session} \"{name}\" (a dry run by default)"
           if session == MCP_NAMES["session"] else
           f"dry-run it: {{\"{session}\": \"{name}\", \"DryRun\": true}}")
    inputs = variables_seen(raw)
    required = [v["name"] for v in inputs if v["required"]]
    needs = (f" Give {', '.join(required)} in args (required: no default)." if required
             else "")
    return {"recipe": {"name": raw["name"], "version": raw.get("version"),
                       "steps": len(raw["steps"]), "state": "draft",
                       "variables": sorted(raw.get("vars") or {}),
                       "required": required, "inputs": inputs,
                       "path": str(recipe_path(playbook)),
                       "resource": f"playbook://{playbook.short_id}/recipe"},
            "message": f"Draft recipe {title} with {len(raw['steps'])} steps: {how}.{needs}"}


def variables_seen(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """Each variable of a generated recipe, by name: whether a replay must give it (a
    volatile or redacted input has no default) and the value seen when it was taught (a
    default is that value; a redacted one is never shown)."""
    defaults = raw.get("vars") or {}
    specs = raw.get("inputs") or {}
    out = []
    for name in sorted(defaults):
        found = specs.get(name)
        spec: dict[str, Any] = found if isinstance(found, dict) else {}
        required = defaults[name] is None
        entry: dict[str, Any] = {"name": name, "required": required}
        seen = (spec.get("examples") or [None])[0] if required else defaults[name]
        if seen is not None:
            entry["seen"] = seen
        if spec.get("type"):
            entry["type"] = spec["type"]
        out.append(entry)
    return out


@writing()
def save_recipe(playbook: Playbook, text_or_raw: str | dict[str, Any],
                identity: Identity | None = None) -> dict[str, Any]:
    raw = parse_text(text_or_raw) if isinstance(text_or_raw, str) else text_or_raw
    previous = read_recipe(playbook)
    if "version" not in raw and "@" not in str(raw.get("name", "")):
        raw["version"] = _bump(str((previous or {}).get("version", "0.0.0")))
    load(raw)
    capture.write_atomic(recipe_path(playbook), to_json(raw))
    governance.record_version(playbook, raw, identity, "saved")
    db.session.commit()
    return raw


def find_session(session_id: str, identity: Identity | None) -> Playbook | None:
    """The playbook a session reference names, if the caller sees it: its session id, the id
    in /playbooks/<id>, or its name (the newest such session; seed 000's quick start names
    sessions by their name)."""
    playbook = db.session.scalars(select(Playbook).where(
        Playbook.session_id == session_id)).first()
    if playbook is None and SHORT_ID.match(session_id):
        playbook = find_by_id(Playbook, session_id)
    if playbook is None:
        candidates = db.session.scalars(select(Playbook).where(
            Playbook.name == session_id).order_by(Playbook.created_at.desc())).all()
        playbook = next((p for p in candidates if _visible(p, identity)), None)
    return playbook if playbook is not None and _visible(playbook, identity) else None


# The names a door gives the recipe's source: HTTP /replay speaks the seed's PascalCase, the
# MCP replay tool its snake_case arguments; refusals name the caller's own parameter.
HTTP_NAMES = {"session": "SessionId", "recipe_path": "RecipePath"}
MCP_NAMES = {"session": "session_id", "recipe_path": "recipe_path"}


def load_for_replay(identity: Identity | None, session_id: str | None, recipe_path_raw: str | None,
                    door_names: dict[str, str] = HTTP_NAMES
                    ) -> tuple[Recipe, Playbook | None, Path]:
    """The recipe a /replay request names, the playbook it belongs to (if any) and its file."""
    conf = settings.current()
    session_name, path_name = door_names["session"], door_names["recipe_path"]
    if recipe_path_raw:
        path = names.recipe_file(conf.data_dir, recipe_path_raw, path_name)
        playbook = db.session.scalars(select(Playbook).where(
            Playbook.session_id == path.parent.name)).first()
        if playbook is not None and not _visible(playbook, identity):
            raise invalid_param(path_name, "no such recipe file in the data directory")
        return load(parse_text(path.read_text(encoding="utf-8"))), playbook, path
    if not session_id:
        raise Invalid(f"{path_name} or {session_name} is required",
                      errors=[{"param": session_name,
                               "message": f"give {session_name} or {path_name}"}])
    names.check_session_id(session_id, session_name)
    playbook = find_session(session_id, identity)
    if playbook is not None:
        raw = read_recipe(playbook)
        if raw is None:
            raise invalid_param(session_name, f"session {playbook.session_id} has no recipe "
                                              "yet: run generate_recipe first")
        return load(raw), playbook, recipe_path(playbook)
    if identity is None:  # the operator's hand-made folder, as in the seed's runbook
        folder = names.playbooks_root(conf.data_dir) / session_id
        path = folder / capture.RECIPE
        if path.is_file() and names.inside(conf.data_dir, path):
            return load(parse_text(path.read_text(encoding="utf-8"))), None, path
    raise invalid_param(session_name, f"no session {session_id} with a recipe")


def recipe_text(raw: dict[str, Any] | None) -> str:
    return json.dumps(raw, indent=2, ensure_ascii=False) if raw is not None else ""

"""Recipe governance: which recipe versions may replay for real, who moves them along, the audit.

Seed 000 (§6.7, §6.9): "First run is always dry-run" and "Keep a reviewed folder for approved
recipes; require code review for changes". Here that is:

* **States.** A recipe version is ``draft`` when generated or saved, then ``reviewed`` (by a
  member of the playbook's studio other than its author), then ``approved`` (by an admin of that
  studio, again not its author), and may be ``retired``. Each version's whole content is stored
  (``RecipeVersion``), so a recipe is known by its digest: a ``recipe.json`` edited on disk is a
  draft nobody reviewed, whatever its version string says. Approving writes the version into
  ``<data>/playbooks/reviewed/``; retiring takes it out again.
* **File approval** (seed 000 §6.9): a recipe file in ``<data>/playbooks/reviewed/`` counts as
  approved (its review is the code review of whatever puts it there), and so does a teach
  session's recipe whose very content (by digest) is in a file there, so a session replayed by
  its ``SessionId`` is approved by copying its ``recipe.json`` into ``reviewed/``. Any other
  file is a draft. The machine's operator may approve on the command line too
  (``flask playbooks approve``, ``approve_as_operator``): it writes the version into
  ``reviewed/`` as they could by hand, and records it. That is how a local install, where one
  person teaches with ``PLAYBOOK_AUTH=off``, gets its own recipes approved: the two-person rule
  is a studio's rule for its members, and a token-less operator is no member.
* **Real runs** are allowed for approved versions, and for the teacher's own captured session
  (the seed's quick start) unless ``PLAYBOOK_TEACHER_REPLAY`` is off. A retired version never
  runs for real. Dry runs are always allowed.
* **Dry run first.** The first real run of a recipe (by digest) with given arguments (by the
  digest of their resolved values) needs a successful dry run of the same recipe and arguments
  by the same caller within ``PLAYBOOK_DRYRUN_WINDOW`` seconds; once such a real run has
  succeeded, the caller may repeat it. A dry run asks ``check`` as a real run would, counting
  itself, and reports what a real run with the same arguments would meet.
* **Audit.** Every state change and every replay, refused or not, is a ``PlaybookAudit`` row.

Every door (HTTP /replay, the page actions, MCP's replay tool, the queue, the CLI) reaches the
rules through ``app.playbooks.replay``, which asks ``check`` before any call; a refusal names
its rule, says what to do next and carries the HTTP status the doors answer with.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from app.core.identity import Identity
from app.db import writing
from app.extensions import db
from app.models.accounts import User
from app.models.base import utcnow
from app.models.playbooks import Playbook, PlaybookAudit, PlaybookRun, RecipeVersion
from app.models.studios import Membership, Studio
from app.playbooks import capture, names, settings
from app.playbooks.recipe import Recipe, cap_checks, caps_in_force, load, parse_text, to_json
from app.services.errors import Conflict, DomainError, Forbidden

REVIEWED = "reviewed"
LOCAL = "local"  # the token-less loopback operator's owner key (app.playbooks.teach.LOCAL)
OPERATOR = "operator"  # who approves on the command line


# ------------------------------------------------------------------ digests and places

def digest(raw: dict[str, Any]) -> str:
    """The recipe's identity: SHA-256 of its canonical JSON (key order and spacing ignored)."""
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def args_digest(values: dict[str, Any]) -> str:
    """The arguments' identity: the resolved values, so "5" and 5 for an integer are one."""
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def reviewed_dir(data_dir: str) -> Path:
    return names.playbooks_root(data_dir) / REVIEWED


def in_reviewed(path: Path | None, data_dir: str) -> bool:
    if path is None:
        return False
    root = os.path.realpath(reviewed_dir(data_dir))
    return os.path.realpath(path).startswith(root + os.sep)


# reviewed/ file → (its modification time and size, the digest of its recipe or None)
_file_digests: dict[str, tuple[tuple[int, int], str | None]] = {}


def _file_digest(path: Path) -> str | None:
    stat = path.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    known = _file_digests.get(str(path))
    if known is not None and known[0] == stamp:
        return known[1]

    try:
        value: str | None = digest(parse_text(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, DomainError):
        value = None  # not a recipe: it approves nothing
    _file_digests[str(path)] = (stamp, value)
    return value


def approved_by_file(value: str, data_dir: str) -> Path | None:
    """The file in reviewed/ holding the recipe whose digest is ``value``, if there is one."""
    root = reviewed_dir(data_dir)
    if not root.is_dir():
        return None
    for path in sorted(root.glob("*.json")):
        try:
            if path.is_file() and _file_digest(path) == value:
                return path
        except OSError:
            continue
    return None


def reviewed_file(version: RecipeVersion, playbook: Playbook, data_dir: str) -> Path:
    name = str(version.content.get("name", playbook.name)).rpartition("@")[0] \
        or str(version.content.get("name", playbook.name))
    safe = names.clean_name(name[:40], "name")
    return reviewed_dir(data_dir) / f"{playbook.short_id}_{safe}@{version.version}.json"


# ------------------------------------------------------------------ refusals

@dataclass
class Refusal:
    """Why a replay may not go, as every door says it: the rule's name, what happened, what to
    do next, and the HTTP status the JSON doors answer with. Governance's rules are
    ``approval``, ``retired`` and ``dry_run_first``; the replay's own (``app.playbooks.replay``)
    ``args``, ``required``, ``confirm``, ``identity`` and ``preview``."""

    rule: str
    message: str
    next: str
    status: int = 409

    def body(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "next": self.next}

    def text(self) -> str:
        return f"{self.message} (rule: {self.rule}) Next: {self.next}"


@dataclass
class Verdict:
    state: str  # the recipe's state: draft | reviewed | approved | retired
    basis: str  # why a real run may go: approved | teacher; "dry_run" for dry runs
    digest: str
    args_digest: str
    version: RecipeVersion | None = None
    refusal: Refusal | None = None


# ------------------------------------------------------------------ who is who

def user_of(identity: Identity | None) -> uuid.UUID | None:
    return identity.user_id if identity is not None else None


def actor_label(identity: Identity | None) -> str:
    """Who acted, as people read it: @handle, or ``local`` for the token-less operator."""
    if identity is None:
        return LOCAL
    user = db.session.get(User, user_of(identity)) if user_of(identity) is not None else None
    return f"@{user.handle}" if user is not None else str(user_of(identity))


def is_teacher(playbook: Playbook | None, identity: Identity | None) -> bool:
    if playbook is None:
        return False
    if identity is None:
        return playbook.owner == LOCAL
    return playbook.user_id is not None and playbook.user_id == user_of(identity)


def membership(playbook: Playbook, user_id: Any) -> Membership | None:
    if playbook.studio_id is None or user_id is None:
        return None
    return db.session.scalars(select(Membership).where(
        Membership.studio_id == playbook.studio_id, Membership.user_id == user_id)).first()


# ------------------------------------------------------------------ versions

def versions(playbook: Playbook) -> list[RecipeVersion]:
    """A playbook's recipe versions, newest first."""
    return list(db.session.scalars(select(RecipeVersion).where(
        RecipeVersion.playbook_id == playbook.id).order_by(RecipeVersion.created_at.desc(),
                                                           RecipeVersion.version.desc())).all())


def version_by_digest(playbook: Playbook, value: str) -> RecipeVersion | None:
    return db.session.scalars(select(RecipeVersion).where(
        RecipeVersion.playbook_id == playbook.id, RecipeVersion.digest == value).order_by(
        RecipeVersion.created_at.desc())).first()


def find_version(playbook: Playbook, version: str | None) -> RecipeVersion:
    """The version named (``1.2.3``, or its short id), else the newest; Conflict when none."""
    found = versions(playbook)
    if not found:
        raise Conflict("this playbook has no recipe version yet: run generate_recipe",
                       rule="no_version", next="generate_recipe on this page")
    if not version:
        return found[0]
    for item in found:
        if version in (item.version, item.short_id):
            return item
    raise Conflict(f"no recipe version {version} here",
                   versions=[v.version for v in found])


def record_version(playbook: Playbook, raw: dict[str, Any], identity: Identity | None, event: str
                   ) -> RecipeVersion:
    """A new draft for ``raw`` (generated or saved); the same content again is the same one."""
    value = digest(raw)
    current = version_by_digest(playbook, value)
    if current is not None:
        return current
    found = versions(playbook)
    version = RecipeVersion(playbook_id=playbook.id, version=str(raw.get("version") or
                                                                 _version_of(raw)),
                            digest=value, content=raw, state="draft",
                            author_id=user_of(identity), author=actor_label(identity)[:120],
                            previous_id=found[0].id if found else None)
    version.assign_ids()
    db.session.add(version)
    db.session.flush()
    audit(event, identity, playbook=playbook, version=version,
          detail={"version": version.version, "digest": value})
    return version


def _version_of(raw: dict[str, Any]) -> str:
    name = str(raw.get("name", ""))
    return name.rpartition("@")[2] if "@" in name else "0.0.0"


def previous(version: RecipeVersion) -> RecipeVersion | None:
    return db.session.get(RecipeVersion, version.previous_id) if version.previous_id else None


def review_of(version: RecipeVersion) -> dict[str, Any]:
    """What a reviewer reads (on the playbook's page, or ``flask playbooks show``): the diff
    from the previous version, the variables, the bounds, the caps in force (and which the
    recipe raises above the operator's defaults) and the write steps."""
    before = previous(version)
    old = to_json(before.content).splitlines() if before is not None else []
    diff = list(difflib.unified_diff(
        old, to_json(version.content).splitlines(),
        f"{before.version}" if before is not None else "(nothing)", version.version,
        lineterm=""))
    try:
        parsed: Recipe | None = load(version.content)
    except DomainError:
        parsed = None
    steps = parsed.steps if parsed is not None else []
    return {
        "version": version, "previous": before, "diff": "\n".join(diff),
        "variables": [{"name": k, "default": v, "required": v is None,
                       **(parsed.inputs.get(k, {}) if parsed else {})}
                      for k, v in (parsed.vars.items() if parsed else [])],
        "bounds": [{"step": st.name, "check": c.describe(), "source": c.source}
                   for st in steps for c in st.checks]
        + [{"step": "(every write)", "check": c.describe(), "source": c.source}
           for c in (cap_checks(parsed) if parsed else [])],
        "caps": [{"key": cap.key, "value": cap.value, "source": cap.source,
                  "default": cap.default,
                  "raised": cap.source == "recipe" and (cap.default is None
                                                        or cap.value > cap.default)}
                 for cap in (caps_in_force(parsed) if parsed else [])],
        "writes": [{"name": st.name, "call": st.label, "confirm": st.confirmed,
                    "bounded": bool(st.checks)} for st in steps if st.kind == "write"],
    }


# ------------------------------------------------------------------ state changes

def review_refusal(playbook: Playbook, version: RecipeVersion | None, user_id: Any
                   ) -> str | None:
    """Why ``user_id`` may not review ``version`` now (None: they may)."""
    if playbook.studio_id is None:
        return ("the playbook is not shared with a studio: its owner shares it "
                "(share_playbook) so the studio's members can review it")
    member = membership(playbook, user_id)
    if member is None or member.role == "guest":  # guests read the studio, they do not review
        return "only members of the playbook's studio review its recipes"
    if version is not None and version.author_id == user_id:
        return "a recipe version is reviewed by someone other than its author"
    return None


def approve_refusal(playbook: Playbook, version: RecipeVersion | None, user_id: Any
                    ) -> str | None:
    if playbook.studio_id is None:
        return ("the playbook is not shared with a studio: its owner shares it "
                "(share_playbook) so the studio's admins can approve it")
    member = membership(playbook, user_id)
    if member is None or member.role != "admin":
        return "only admins of the playbook's studio approve recipes"
    if version is not None and version.author_id == user_id:
        return "a recipe version is approved by someone other than its author"
    return None


def retire_refusal(playbook: Playbook, user_id: Any) -> str | None:
    if user_id is not None and playbook.user_id == user_id:
        return None
    member = membership(playbook, user_id)
    if member is not None and member.role == "admin":
        return None
    return "only the playbook's owner or an admin of its studio retires recipe versions"


def _move(version: RecipeVersion, wanted: str, to: str, verb: str) -> None:
    if version.state != wanted:
        raise Conflict(f"version {version.version} is {version.state}: only a {wanted} version "
                       f"can be {verb}", rule=f"{to}_needs_{wanted}",
                       next=_next_for_state(version.state))
    version.state = to


@writing()
def review(playbook: Playbook, version: RecipeVersion, identity: Identity | None,
           note: str = "") -> None:
    reason = review_refusal(playbook, version, user_of(identity))
    if reason:
        raise Forbidden(reason, rule="reviewer")
    _move(version, "draft", "reviewed", "reviewed")
    version.reviewed_by_id, version.reviewed_at = user_of(identity), utcnow()
    audit("reviewed", identity, playbook=playbook, version=version,
          detail={"version": version.version, "note": note[:2000]})
    db.session.commit()


@writing()
def approve(playbook: Playbook, version: RecipeVersion, identity: Identity | None,
            data_dir: str) -> Path:
    reason = approve_refusal(playbook, version, user_of(identity))
    if reason:
        raise Forbidden(reason, rule="approver")
    _move(version, "reviewed", "approved", "approved")
    version.approved_by_id, version.approved_at = user_of(identity), utcnow()
    path = _write_reviewed(version, playbook, data_dir)
    audit("approved", identity, playbook=playbook, version=version,
          detail={"version": version.version, "file": f"{REVIEWED}/{path.name}"})
    db.session.commit()
    return path


@writing()
def retire(playbook: Playbook, version: RecipeVersion, identity: Identity | None,
           data_dir: str) -> None:
    reason = retire_refusal(playbook, user_of(identity))
    if reason:
        raise Forbidden(reason, rule="retirer")
    if version.state == "retired":
        raise Conflict(f"version {version.version} is already retired", rule="retired")
    was = version.state
    version.state, version.retired_at = "retired", utcnow()
    path = reviewed_file(version, playbook, data_dir)
    if path.is_file():
        path.unlink()
    audit("retired", identity, playbook=playbook, version=version,
          detail={"version": version.version, "was": was})
    db.session.commit()


@writing()
def approve_as_operator(playbook: Playbook, version: RecipeVersion, data_dir: str,
                        note: str = "") -> Path:
    """The machine's operator approves ``version`` (a draft or reviewed one): written into
    reviewed/, as a copy by hand would be, and recorded as theirs."""
    if version.state not in ("draft", "reviewed"):
        raise Conflict(f"version {version.version} is {version.state}: only a draft or reviewed "
                       "version can be approved", rule="approve_needs_draft_or_reviewed",
                       next=_next_for_state(version.state))
    version.state, version.approved_at = "approved", utcnow()
    path = _write_reviewed(version, playbook, data_dir)
    row = audit("approved", None, playbook=playbook, version=version,
                detail={"version": version.version, "file": f"{REVIEWED}/{path.name}",
                        "by": "the operator (command line)", "note": note[:2000]})
    row.actor = OPERATOR
    db.session.commit()
    return path


def _write_reviewed(version: RecipeVersion, playbook: Playbook, data_dir: str) -> Path:
    path = reviewed_file(version, playbook, data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    capture.write_atomic(path, to_json(version.content))
    return path


@writing()
def share(playbook: Playbook, studio_id: Any, identity: Identity | None) -> None:
    playbook.studio_id = studio_id
    audit("shared", identity, playbook=playbook, detail={"studio": str(studio_id)})
    db.session.commit()


# ------------------------------------------------------------------ the replay rules

def state_of(recipe: Recipe, playbook: Playbook | None, source: Path | None, data_dir: str
             ) -> tuple[str, RecipeVersion | None]:
    value = digest(recipe.raw)
    version = version_by_digest(playbook, value) if playbook is not None else None
    if version is not None and version.state == "retired":
        return "retired", version
    if in_reviewed(source, data_dir) or (
            playbook is not None and approved_by_file(value, data_dir) is not None):
        return "approved", version
    if version is not None:
        return version.state, version
    return "draft", None


# How a refusal names the replay's parameters, per door: the MCP replay tool speaks its own
# snake_case arguments; the other doors keep the seed's HTTP names (and say the others').
_HTTP_WORDS = {"dry_run": "DryRun: true", "recipe_path": "RecipePath", "args": "Args",
               "how_dry": "DryRun: true (dry_run on the page, dry_run: true over MCP, "
                          "--dry-run on the command line)"}
_MCP_WORDS = {"dry_run": "dry_run: true", "recipe_path": "recipe_path", "args": "args",
              "how_dry": "dry_run: true"}


def _words(door: str) -> dict[str, str]:
    return _MCP_WORDS if door == "mcp" else _HTTP_WORDS


def _next_for_state(state: str, door: str = "") -> str:
    if state == "draft":
        return ("a member of the playbook's studio reviews it (review_recipe on its page), then "
                "a studio admin approves it (approve_recipe); or the machine's operator "
                "approves it: `flask playbooks approve <session>`, or a copy of the recipe "
                "file in the playbooks data folder's reviewed/ folder. Dry runs "
                f"({_words(door)['dry_run']}) are allowed meanwhile")
    if state == "reviewed":
        return "an admin of the playbook's studio approves it (approve_recipe on its page)"
    if state == "retired":
        return "replay an approved version, or generate a new version and have it approved"
    return "replay it"


def _approved_elsewhere(playbook: Playbook | None, conf: settings.Settings,
                        door: str = "") -> str:
    if playbook is None:
        return ""
    approved = [v for v in versions(playbook) if v.state == "approved"]
    if not approved:
        return ""
    path = reviewed_file(approved[0], playbook, conf.data_dir)
    return (f" Version {approved[0].version} is approved: replay it with "
            f"{_words(door)['recipe_path']} "
            f"\"{REVIEWED}/{path.name}\".")


def check(recipe: Recipe, values: dict[str, Any], dry_run: bool, identity: Identity | None,
          playbook: Playbook | None, source: Path | None,
          conf: settings.Settings | None = None, door: str = "",
          counted: bool = False) -> Verdict:
    """May this run go? ``values`` are the resolved arguments (defaults overlaid by Args);
    ``door`` ("mcp", "http", ...) picks the parameter names the refusal speaks. ``counted``:
    a dry run asking what a real run with its arguments would meet, which its own success
    will have satisfied the dry-run-first rule for."""
    conf = conf or settings.current()
    state, version = state_of(recipe, playbook, source, conf.data_dir)
    verdict = Verdict(state=state, basis="dry_run" if dry_run else "approved",
                      digest=digest(recipe.raw), args_digest=args_digest(values),
                      version=version)
    if dry_run:
        return verdict
    own_session = is_teacher(playbook, identity) and not in_reviewed(source, conf.data_dir)
    if state == "retired":
        verdict.refusal = Refusal("retired", f"{recipe.title} is retired: it does not replay "
                                  "for real.", _next_for_state("retired", door)
                                  + "." + _approved_elsewhere(playbook, conf, door))
        return verdict
    if state != "approved":
        studio = (db.session.get(Studio, playbook.studio_id)
                  if playbook is not None and playbook.studio_id is not None else None)
        if own_session and conf.teacher_replay and (studio is None or studio.teacher_replays):
            verdict.basis = "teacher"
        else:
            why = ""
            if own_session and not conf.teacher_replay:
                why = " The teacher's own replays are off here (PLAYBOOK_TEACHER_REPLAY=off)."
            elif own_session and studio is not None:
                why = (f" The studio {studio.handle} replays approved recipes only "
                       "(its settings: teacher_replays off).")
            verdict.refusal = Refusal(
                "approval", f"{recipe.title} is a {state} recipe: only approved versions "
                f"replay for real.{why}", _next_for_state(state, door) + "."
                + _approved_elsewhere(playbook, conf, door))
            return verdict
    if not counted and not _dry_run_done(verdict, identity, conf):
        minutes = conf.dryrun_window / 60
        verdict.refusal = Refusal(
            "dry_run_first", f"First run is always a dry run: {recipe.title} has no successful "
            f"dry run with these arguments by you in the last {minutes:g} minutes.",
            f"replay it with {_words(door)['how_dry']} and the same {_words(door)['args']}, "
            f"check the planned effects, then run it for real within {minutes:g} minutes.")
    return verdict


def _dry_run_done(verdict: Verdict, identity: Identity | None, conf: settings.Settings) -> bool:
    mine = PlaybookRun.user_id == user_of(identity) if user_of(identity) is not None \
        else PlaybookRun.user_id.is_(None)
    same = (PlaybookRun.recipe_digest == verdict.digest,
            PlaybookRun.args_digest == verdict.args_digest, PlaybookRun.status == "ok", mine)
    since = utcnow() - timedelta(seconds=conf.dryrun_window)
    dry = db.session.scalars(select(PlaybookRun.id).where(
        *same, PlaybookRun.dry_run.is_(True), PlaybookRun.created_at >= since).limit(1)).first()
    if dry is not None:
        return True
    # Not the first real run: one already succeeded with these arguments.
    return db.session.scalars(select(PlaybookRun.id).where(
        *same, PlaybookRun.dry_run.is_(False)).limit(1)).first() is not None


# ------------------------------------------------------------------ audit

def audit(event: str, identity: Identity | None, playbook: Playbook | None = None,
          version: RecipeVersion | None = None, run: PlaybookRun | None = None,
          detail: dict[str, Any] | None = None) -> PlaybookAudit:
    """One audit row, in the caller's transaction (it commits with the change it records)."""
    row = PlaybookAudit(playbook_id=playbook.id if playbook is not None else None,
                        version_id=version.id if version is not None else None,
                        run_id=run.id if run is not None else None, event=event[:24],
                        user_id=user_of(identity), actor=actor_label(identity)[:120],
                        detail=detail or {})
    db.session.add(row)
    return row


def audit_of(playbook: Playbook, limit: int = 50) -> list[PlaybookAudit]:
    return list(db.session.scalars(select(PlaybookAudit).where(
        PlaybookAudit.playbook_id == playbook.id).order_by(
        PlaybookAudit.created_at.desc()).limit(limit)).all())


def real_run_of(run: PlaybookRun) -> dict[str, Any] | None:
    """What a dry run said a real run with its arguments would meet (kept in its audit row)."""
    detail = db.session.scalars(select(PlaybookAudit.detail).where(
        PlaybookAudit.run_id == run.id).limit(1)).first()
    answer = detail.get("realRun") if isinstance(detail, dict) else None
    return answer if isinstance(answer, dict) else None

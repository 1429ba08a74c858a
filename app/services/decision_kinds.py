"""The kinds of decision and their settings, as a new decision takes them.

A decision is asked as one kind (``tallies.KINDS``) with the settings that kind allows: dots
for a dot vote, slots for a time poll, who votes and who proposes options, a quorum, a
required share, "none of the above", anonymous ballots and results hidden until close.
``settings_of`` checks them all at once: a refusal names every bad one with its path. What
they mean when ballots are counted is ``tallies.Rules`` (``rules_of``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from app.models import Studio
from app.models.studios import ROLES
from app.services import cycles, deadlines, tallies
from app.services.deadlines import NO_DEADLINE
from app.services.errors import Invalid

KINDS = tallies.KINDS
DEFAULT = "acceptance"
LABELS = {"acceptance": "Acceptance vote", "consent": "Proposal", "sense_check": "Sense check",
          "single_choice": "Poll", "score": "Score poll", "dot_vote": "Dot vote",
          "ranked_choice": "Ranked choice", "time_poll": "Time poll"}
# Kinds decided by fixed stances: no options to add.
STANCE_KINDS = tuple(tallies.STANCES)
# Kinds whose options are time slots (added as a start and a length).
SLOT_KINDS = ("time_poll",)
NONE_OF_THE_ABOVE_KINDS = tallies.NONE_OF_THE_ABOVE_KINDS
REQUIRED_SHARE_KINDS = tallies.REQUIRED_SHARE_KINDS
# Acceptance votes keep their own storage, one row per (option, voter) with the voter on it:
# they cannot be anonymous, nor hide what every voter's row already shows.
BALLOT_KINDS = tuple(k for k in KINDS if k != "acceptance")
DOTS_DEFAULT = 10
DOTS_MAX = 1000
SLOT_MINUTES_MAX = 7 * 24 * 60
SLOTS_MAX = 100
HANDLES_MAX = 500
VOTER_ROLES = tuple(r for r in ROLES if r != "guest")  # guests read only


def has_options(kind: str) -> bool:
    return kind not in STANCE_KINDS


@dataclass(frozen=True)
class Slot:
    starts_at: datetime  # UTC
    minutes: int


def slot_title(slot: Slot, zone: ZoneInfo) -> str:
    """A slot as people read it, in the studio's time zone: 'Tue 1 Dec 2026, 14:00–15:30 CET'."""
    start = slot.starts_at.astimezone(zone)
    end = start + timedelta(minutes=slot.minutes)
    day = f"{start:%a} {start.day} {start:%b %Y}"
    until = f"{end:%H:%M}" if end.date() == start.date() else \
        f"{end:%a} {end.day} {end:%b %Y}, {end:%H:%M}"
    return f"{day}, {start:%H:%M}–{until} {start:%Z}".strip()


def slot_problems(value: Any, zone: ZoneInfo, path: str) -> tuple[Slot | None,
                                                                    list[dict[str, str]]]:
    """One slot ``{starts_at, minutes}``: the slot, or every problem with its path."""
    problems: list[dict[str, str]] = []
    param = path.split(".")[0].split("[")[0]
    if not isinstance(value, dict):
        return None, [{"param": param, "path": path,
                       "message": f"{path}: must be an object {{starts_at, minutes}}"}]
    start: datetime | None = None
    raw = value.get("starts_at")
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in NO_DEADLINE | {""}):
        problems.append(_problem(param, f"{path}.starts_at", "is required"))
    else:
        try:
            start = deadlines.parse(raw, zone, param=f"{path}.starts_at")
        except Invalid as exc:
            problems += [_problem(param, f"{path}.starts_at", e["message"])
                         for e in exc.errors or []]
    minutes = value.get("minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, int):
        problems.append(_problem(param, f"{path}.minutes", "must be a whole number of minutes"))
    elif not 1 <= minutes <= SLOT_MINUTES_MAX:
        problems.append(_problem(param, f"{path}.minutes",
                                 f"must be from 1 to {SLOT_MINUTES_MAX}"))
    unknown = sorted(set(value) - {"starts_at", "minutes"})
    if unknown:
        problems.append(_problem(param, path, f"unknown keys: {', '.join(unknown)} "
                                              "(a slot is {starts_at, minutes})"))
    if problems or start is None or not isinstance(minutes, int):
        return None, problems
    return Slot(start, minutes), []


def _problem(param: str, path: str, message: str) -> dict[str, str]:
    return {"param": param, "path": path, "message": f"{path}: {message}"}


@dataclass(frozen=True)
class Chosen:
    """A new decision's kind, settings (as stored) and slots, checked."""

    kind: str
    settings: dict[str, Any]
    slots: list[Slot]


def settings_of(studio: Studio, params: dict[str, Any],
                members: dict[str, tuple[str, str]]) -> Chosen:
    """Check a new decision's kind and settings together. ``members``: the studio's members
    by handle, as (user id, role). Invalid names every problem, each with its path."""
    kind = params.get("kind") or DEFAULT
    errors: list[dict[str, str]] = []

    def refuse(name: str, message: str, path: str | None = None) -> None:
        entry = {"param": name, "message": f"{path}: {message}" if path else message}
        if path:
            entry["path"] = path
        errors.append(entry)

    if kind not in KINDS:
        refuse("kind", f"must be one of: {', '.join(KINDS)}")
        raise Invalid("invalid parameters for create_decision", errors=errors)
    settings: dict[str, Any] = {}
    given = {k: v for k, v in params.items() if v is not None}
    if kind in STANCE_KINDS and given.get("options"):
        refuse("options", f"a {LABELS[kind].lower()} has no options: people answer with a "
                          "stance")
    if kind in SLOT_KINDS and given.get("options"):
        refuse("options", "a time poll's options are slots: give slots [{starts_at, minutes}]")
    if "slots" in given and kind not in SLOT_KINDS:
        refuse("slots", "only for a time poll (kind time_poll)")
    if "dots" in given:
        if kind != "dot_vote":
            refuse("dots", "only for a dot vote (kind dot_vote)")
        elif not 1 <= int(given["dots"]) <= DOTS_MAX:
            refuse("dots", f"must be from 1 to {DOTS_MAX}")
        else:
            settings["dots"] = int(given["dots"])
    elif kind == "dot_vote":
        settings["dots"] = DOTS_DEFAULT
    if given.get("none_of_the_above"):
        if kind not in NONE_OF_THE_ABOVE_KINDS:
            refuse("none_of_the_above", "only for " + ", ".join(NONE_OF_THE_ABOVE_KINDS))
        else:
            settings["none_of_the_above"] = True
    if "required_share" in given:
        share = given["required_share"]
        if kind not in REQUIRED_SHARE_KINDS:
            refuse("required_share", "only for " + ", ".join(REQUIRED_SHARE_KINDS))
        elif not 0 < share <= 1:
            refuse("required_share", "must be a share above 0 and at most 1 (0.5: half)")
        else:
            settings["required_share"] = float(share)
    if "quorum" in given:
        if given["quorum"] < 1:
            refuse("quorum", "must be at least 1")
        else:
            settings["quorum"] = int(given["quorum"])
    if "quorum_share" in given:
        if not 0 < given["quorum_share"] <= 1:
            refuse("quorum_share", "must be a share above 0 and at most 1 (0.5: half the "
                                   "eligible)")
        else:
            settings["quorum_share"] = float(given["quorum_share"])
    for flag in ("anonymous", "hide_results"):
        if given.get(flag):
            if kind == "acceptance":
                refuse(flag, "not for an acceptance vote (its votes are one row per voter): "
                             "choose another kind")
            else:
                settings[flag] = True
    for who in ("voters", "proposers"):
        if who not in given:
            continue
        if who == "proposers" and not has_options(kind):
            refuse(who, f"a {LABELS[kind].lower()} has no options to propose")
            continue
        rule = _who(who, given[who], members, refuse)
        if rule is not None:
            settings[who] = rule
    slots: list[Slot] = []
    if kind in SLOT_KINDS:
        zone = _zone(studio)
        for i, value in enumerate(given.get("slots") or []):
            slot, found = slot_problems(value, zone, f"slots[{i}]")
            errors += found
            if slot is not None:
                slots.append(slot)
        if len(given.get("slots") or []) > SLOTS_MAX:
            refuse("slots", f"at most {SLOTS_MAX} slots (add more with add_slot)")
        titles = [slot_title(s, zone) for s in slots]
        repeated = sorted({t for t in titles if titles.count(t) > 1})
        if repeated:
            refuse("slots", f"each slot at most once (repeated: {', '.join(repeated)})")
    if errors:
        raise Invalid("invalid parameters for create_decision", errors=errors)
    return Chosen(kind, settings, slots)


def _zone(studio: Studio) -> ZoneInfo:
    return cycles.zone_of(studio)


def _who(name: str, value: Any, members: dict[str, tuple[str, str]],
         refuse: Any) -> dict[str, Any] | None:
    """``{"role": r}`` or ``{"handles": [...]}`` as stored: ``{"role": r}`` or
    ``{"user_ids": [...]}`` (ids, so a renamed handle keeps its place)."""
    if not isinstance(value, dict) or len(value) != 1 or not ({"role", "handles"} & set(value)):
        refuse(name, "give either {\"role\": ...} or {\"handles\": [...]} (leave it out: "
                     "every member)")
        return None
    if "role" in value:
        if value["role"] not in VOTER_ROLES:
            refuse(name, f"must be one of: {', '.join(VOTER_ROLES)}", f"{name}.role")
            return None
        return {"role": value["role"]}
    handles = value["handles"]
    if not isinstance(handles, list) or not handles:
        refuse(name, "must list at least one handle", f"{name}.handles")
        return None
    if len(handles) > HANDLES_MAX:
        refuse(name, f"at most {HANDLES_MAX} handles", f"{name}.handles")
        return None
    ids: list[str] = []
    bad = False
    for i, handle in enumerate(handles):
        found = members.get(str(handle).lstrip("@").lower())
        if found is None:
            refuse(name, f"no member of this studio has the handle {handle!r}",
                   f"{name}.handles[{i}]")
            bad = True
        elif found[1] == "guest":
            refuse(name, f"{handle!r} is a guest of this studio (guests read only)",
                   f"{name}.handles[{i}]")
            bad = True
        elif found[0] not in ids:
            ids.append(found[0])
    return None if bad else {"user_ids": ids}


def rules_of(kind: str, settings: dict[str, Any], eligible: int | None) -> tallies.Rules:
    """What counting needs to know of a decision's settings."""
    return tallies.Rules(kind=kind, dots=int(settings.get("dots", DOTS_DEFAULT)),
                         eligible=eligible, quorum=settings.get("quorum"),
                         quorum_share=settings.get("quorum_share"),
                         required_share=settings.get("required_share"),
                         none_of_the_above=bool(settings.get("none_of_the_above")))


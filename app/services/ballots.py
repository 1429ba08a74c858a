"""Ballots of every kind of decision but acceptance: cast, replace, read.

A ballot arrives as its action's parameters (option titles, as people and agents see them) and
is stored as ``tallies`` reads it (option ids as keys): ``choices_from`` turns one into the
other and names every problem with the parameter's path, ``tallies.ballot_problems`` judges
the rest. One ballot per voter: voting again replaces it. Who took part is kept apart from how
(``decision_participants``), with the representative who voted for them.

Anonymous ballots are stored unlinked: the ballot row has no voter, no representative and no
time. Storage order could still link a ballot to its voter (SQLite's rowid, PostgreSQL's heap
order follow insertion, as do the participants'), so each anonymous ballot cast rewrites all
of the decision's ballots: deleted and inserted again in a random order, each with a fresh
random id, under an exclusive lock on the decision. An anonymous ballot cannot be changed once
cast (nothing links it to its voter any more).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.orm import aliased

from app.db import Query, conflicts
from app.db.reads import known
from app.extensions import db
from app.models import User, provenance
from app.models.base import utcnow
from app.models.collab import Decision, DecisionBallot, DecisionParticipant, Option
from app.services import decision_kinds, eligibility, people, tallies
from app.services.errors import Conflict, Forbidden, Invalid
from app.services.locking import lock_row

_SHUFFLE = random.SystemRandom()  # the order anonymous ballots are written in: unguessable


def anonymous(decision: Decision) -> bool:
    return bool((decision.settings or {}).get("anonymous"))


def results_hidden(decision: Decision) -> bool:
    """Results are hidden until the decision closes (a setting), on every door."""
    return bool((decision.settings or {}).get("hide_results")) and not decision.closed


# Options as counting sees them --------------------------------------------------------------

def option_keys(decision: Decision) -> Query[list[tallies.OptionKey]]:
    """The decision's live options, in the order they were added, as counting keys them."""
    return Query(_OPTIONS, {"decision_id": decision.id},
                 lambda rows: [tallies.OptionKey(str(i), t, int(r)) for i, t, r in rows])


# From an action's parameters to a ballot ----------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """Where a ballot's list parameter keeps its titles and values: ``scores`` holds
    ``{option_title, score}`` items, stored as ``{"scores": {key: score}}``."""

    param: str
    value: str


ENTRIES = {"score": Entry("scores", "score"), "dot_vote": Entry("dots", "dots"),
           "time_poll": Entry("slots", "answer")}


def choices_from(kind: str, params: dict[str, Any], options: list[tallies.OptionKey]
                 ) -> tuple[dict[str, Any], list[dict[str, str]], dict[str, str]]:
    """(choices, problems, where): the ballot in ``tallies``' terms, every problem found in
    the titles (unknown, repeated) with its path, and each option key's path in the params."""
    by_title = {o.title: o.key for o in options}
    listed = ", ".join(f"'{o.title}'" for o in options) or "none yet"
    problems: list[dict[str, str]] = []
    where: dict[str, str] = {}

    def key_of(title: Any, path: str, param: str) -> str | None:
        text = " ".join(str(title if title is not None else "").split())
        if text not in by_title:
            problems.append(_problem(param, path, f"no option titled {text!r} (options: "
                                                  f"{listed})"))
            return None
        key = by_title[text]
        if key in where:
            problems.append(_problem(param, path, f"{text!r} is given twice (first at "
                                                  f"{where[key]})"))
            return None
        where[key] = path
        return key

    if kind in decision_kinds.STANCE_KINDS:
        choices = {"stance": params.get("stance"), "reason": (params.get("reason") or "").strip()}
        return choices, problems, where
    if kind == "single_choice":
        if params.get("none_of_the_above") and params.get("option_title"):
            problems.append(_problem("option_title", "option_title",
                                     "give option_title or none_of_the_above, not both"))
            return {}, problems, where
        if params.get("none_of_the_above"):
            return {"none_of_the_above": True}, problems, where
        if not params.get("option_title"):
            problems.append(_problem("option_title", "option_title", "is required (or "
                                     "none_of_the_above: true)"))
            return {}, problems, where
        key = key_of(params["option_title"], "option_title", "option_title")
        return ({"option": key} if key else {}), problems, where
    if kind == "ranked_choice":
        if params.get("none_of_the_above"):
            if params.get("ranking"):
                problems.append(_problem("ranking", "ranking",
                                         "give ranking or none_of_the_above, not both"))
            return {"none_of_the_above": True}, problems, where
        if not params.get("ranking"):
            problems.append(_problem("ranking", "ranking", "rank at least one option (or "
                                     "none_of_the_above: true)"))
            return {}, problems, where
        keys = [key_of(t, f"ranking[{i}]", "ranking")
                for i, t in enumerate(params["ranking"])]
        return {"ranking": [k for k in keys if k]}, problems, where
    entry = ENTRIES[kind]
    items = params.get(entry.param) or []
    if kind in ("score", "dot_vote") and params.get("none_of_the_above"):
        if items:
            problems.append(_problem(entry.param, entry.param,
                                     f"give {entry.param} or none_of_the_above, not both"))
        return {"none_of_the_above": True}, problems, where
    if not items:
        problems.append(_problem(entry.param, entry.param, "give at least one option"))
    found: dict[str, Any] = {}
    for i, item in enumerate(items):
        key = key_of(item.get("option_title"), f"{entry.param}[{i}].option_title", entry.param)
        if key:
            found[key] = item.get(entry.value)
            where[key] = f"{entry.param}[{i}].{entry.value}"
    return {entry.param: found}, problems, where


def _problem(param: str, path: str, message: str) -> dict[str, str]:
    return {"param": param, "path": path, "message": f"{path}: {message}"}


def judged(rules: tallies.Rules, options: list[tallies.OptionKey], choices: dict[str, Any],
           where: dict[str, str]) -> list[dict[str, str]]:
    """``tallies.ballot_problems`` in the parameters' terms: a path into the stored choices
    that names an option key becomes that option's path in the call."""
    titles = {o.key: o.title for o in options}
    found = []
    for path, message in tallies.ballot_problems(rules, options, choices):
        for key, title in titles.items():
            message = message.replace(key, title)
        at = next((where[k] for k in where if k in path), None) or _param_path(path)
        found.append(_problem(at.split(".")[0].split("[")[0], at, message))
    return found


def _param_path(path: str) -> str:
    return "option_title" if path == "option" else path


# Casting ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cast:
    """A ballot cast: what it says in titles (empty when anonymous), and whether it replaced
    the voter's earlier one."""

    choices: dict[str, Any]
    replaced: bool
    anonymous: bool


def cast(decision: Decision, user: User, role: str | None, params: dict[str, Any]) -> Cast:
    """Record ``user``'s ballot (their earlier one replaced). Forbidden when they may not vote,
    Conflict when the decision closed or their anonymous ballot is already cast, Invalid with
    every problem's path."""
    secret = anonymous(decision)
    # Exclusive for an anonymous ballot: its rewrite of the decision's ballots must not
    # interleave with another; shared otherwise (closing takes it exclusively).
    decision = lock_row(Decision, decision.id, shared=not secret)
    if decision.closed:
        raise Conflict("this decision is closed and no longer accepts votes")
    reason = eligibility.may_vote(decision, user.id, role)
    if reason:
        raise Forbidden(reason)
    options = db.session.execute(_OPTIONS, {"decision_id": decision.id}).all()
    keys = [tallies.OptionKey(str(i), t, int(r)) for i, t, r in options]
    choices, problems, where = choices_from(decision.kind, params, keys)
    if not problems:
        rules = decision_kinds.rules_of(decision.kind, decision.settings or {}, None)
        problems = judged(rules, keys, choices, where)
    if problems:
        raise Invalid(f"this ballot has {len(problems)} problem"
                      f"{'s' if len(problems) != 1 else ''}", errors=problems)
    representative = provenance.representative()
    if secret:
        _cast_unlinked(decision, user, representative, choices)
        return Cast({}, False, True)
    replaced = _cast_linked(decision, user, representative, choices)
    return Cast(in_titles(choices, {o.key: o.title for o in keys}), replaced, False)


def _cast_linked(decision: Decision, user: User, representative: uuid.UUID | None,
                 choices: dict[str, Any]) -> bool:
    before = db.session.scalar(select(DecisionBallot.id).where(
        DecisionBallot.decision_id == decision.id, DecisionBallot.user_id == user.id))
    now = utcnow()
    stmt = conflicts.insert(DecisionBallot).values(
        id=uuid.uuid4(), decision_id=decision.id, user_id=user.id, choices=choices,
        representative_id=representative, created_at=now, updated_at=now)
    # One ballot per voter whatever the interleaving: the database decides.
    db.session.execute(stmt.on_conflict_do_update(
        index_elements=["decision_id", "user_id"],
        set_={"choices": choices, "representative_id": representative, "updated_at": now}))
    took_part = conflicts.insert(DecisionParticipant).values(
        id=uuid.uuid4(), decision_id=decision.id, user_id=user.id,
        representative_id=representative)
    db.session.execute(took_part.on_conflict_do_update(
        index_elements=["decision_id", "user_id"], set_={"representative_id": representative}))
    return before is not None


def _cast_unlinked(decision: Decision, user: User, representative: uuid.UUID | None,
                   choices: dict[str, Any]) -> None:
    if db.session.scalar(select(DecisionParticipant.id).where(
            DecisionParticipant.decision_id == decision.id,
            DecisionParticipant.user_id == user.id)) is not None:
        raise Conflict("you have already cast your ballot on this anonymous decision, and an "
                       "anonymous ballot cannot be changed: nothing links it to you any more")
    db.session.execute(insert(DecisionParticipant).values(
        id=uuid.uuid4(), decision_id=decision.id, user_id=user.id,
        representative_id=representative))
    kept = list(db.session.scalars(select(DecisionBallot.choices).where(
        DecisionBallot.decision_id == decision.id)))
    kept.append(choices)
    _SHUFFLE.shuffle(kept)
    db.session.execute(delete(DecisionBallot).where(DecisionBallot.decision_id == decision.id))
    db.session.execute(insert(DecisionBallot), [
        {"id": uuid.uuid4(), "decision_id": decision.id, "user_id": None,
         "representative_id": None, "choices": c, "created_at": None, "updated_at": None}
        for c in kept])


def in_titles(choices: dict[str, Any], titles: dict[str, str]) -> dict[str, Any]:
    """A stored ballot as people read it: option keys replaced by titles."""
    out: dict[str, Any] = {}
    for name, value in choices.items():
        if name == "option":
            out["option_title"] = titles.get(value, value)
        elif name == "ranking":
            out[name] = [titles.get(k, k) for k in value]
        elif isinstance(value, dict):
            out[name] = {titles.get(k, k): v for k, v in value.items()}
        else:
            out[name] = value
    return out


# Reading ------------------------------------------------------------------------------------

def ballots(decision: Decision) -> Query[list[dict[str, Any]]]:
    """Every ballot's choices (no voter: counting needs none)."""
    return Query(_BALLOTS, {"decision_id": decision.id}, lambda rows: [r[0] for r in rows])


def mine(decision: Decision, user: User | None) -> Query[dict[str, Any] | None]:
    """The caller's own ballot (keys as stored); None when they have none or it is
    anonymous (nothing says which one is theirs)."""
    if user is None or anonymous(decision):
        return known(None)
    return Query(_MINE, {"decision_id": decision.id, "user_id": user.id},
                 lambda rows: rows[0][0] if rows else None)


def participants(decision: Decision) -> Query[list[people.Voter]]:
    """Who took part, by name (no time is kept: nothing orders them beside the ballots)."""
    return Query(_PARTICIPANTS, {"decision_id": decision.id}, people.voters_from)


@dataclass(frozen=True)
class Reason:
    """A voter's stance with the reason they gave (a proposal, a sense check)."""

    person: people.Person
    stance: str
    reason: str


def reasons(decision: Decision) -> Query[list[Reason]]:
    """The reasons given with stances, by whom, oldest first; none for anonymous ballots
    (their rows name nobody)."""
    if anonymous(decision) or decision.kind not in decision_kinds.STANCE_KINDS:
        return known([])
    return Query(_REASONS, {"decision_id": decision.id}, lambda rows: [
        Reason(people.Person(*row[:3]), str(row[3].get("stance")), str(row[3]["reason"]))
        for row in rows if isinstance(row[3], dict) and str(row[3].get("reason") or "").strip()])


def any_cast(decision: Decision) -> bool:
    return db.session.scalar(select(DecisionBallot.id).where(
        DecisionBallot.decision_id == decision.id).limit(1)) is not None


def took_part(decision: Decision, user: User | None) -> bool:
    if user is None:
        return False
    return db.session.scalar(select(DecisionParticipant.id).where(
        DecisionParticipant.decision_id == decision.id,
        DecisionParticipant.user_id == user.id)) is not None


_REASONS = (select(*people.COLUMNS, DecisionBallot.choices)
            .join(DecisionBallot, DecisionBallot.user_id == User.id)
            .where(DecisionBallot.decision_id == bindparam("decision_id"))
            .order_by(DecisionBallot.created_at))
_REPRESENTATIVE = aliased(User)
_OPTIONS = (select(Option.id, Option.title, Option.random_id)
            .where(Option.decision_id == bindparam("decision_id"), Option.deleted_at.is_(None))
            .order_by(Option.created_at, Option.title))
_BALLOTS = select(DecisionBallot.choices).where(
    DecisionBallot.decision_id == bindparam("decision_id"))
_MINE = select(DecisionBallot.choices).where(
    DecisionBallot.decision_id == bindparam("decision_id"),
    DecisionBallot.user_id == bindparam("user_id"))
_PARTICIPANTS = (select(*people.COLUMNS, _REPRESENTATIVE.id, _REPRESENTATIVE.handle,
                        _REPRESENTATIVE.name)
                 .join(DecisionParticipant, DecisionParticipant.user_id == User.id)
                 .outerjoin(_REPRESENTATIVE,
                            _REPRESENTATIVE.id == DecisionParticipant.representative_id)
                 .where(DecisionParticipant.decision_id == bindparam("decision_id"))
                 .order_by(User.name, User.handle))

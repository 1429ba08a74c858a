"""Decisions: questions, options, acceptance votes, results and closing.

A decision is of one kind (``decision_kinds``); this module keeps what every kind shares and
acceptance voting's own votes; the other kinds' ballots are ``ballots``. Rules: option titles
are unique per decision; a vote is an upsert per (option, voter); a closed decision refuses
options and votes; only the creator edits settings or closes it, and a closed decision's
deadline can't change. Votes hold a shared lock on the decision and closing an exclusive one,
so no vote slips in after a decision has closed.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from operator import attrgetter
from typing import Any, NamedTuple

from sqlalchemy import bindparam, case, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased

from app.db import Query, conflicts
from app.db.reads import known
from app.extensions import db
from app.models import Membership, Studio, User, provenance
from app.models.base import utcnow
from app.models.collab import Decision, DecisionParticipant, Option, Vote
from app.services import (
    closing,
    cycles,
    deadlines,
    decision_kinds,
    eligibility,
    items,
    links,
    people,
    permissions,
    revisions,
)
from app.services.errors import Conflict, Forbidden, Invalid, invalid_param
from app.services.locking import lock_row

QUESTION_MAX = 500
DESCRIPTION_MAX = 20_000
OPTION_MAX = 256
OPTIONS_AT_CREATION_MAX = 100  # options given with the question; add_option adds more

items.register(items.ItemKind("decision", "d", Decision, lambda d: d.question,
                                label=("short_id", "question")))


def option_titles(values: list[Any]) -> list[str]:
    """Titles given together (a new decision's options): each as add_option would take it, and
    none twice. Invalid names every problem under ``options``."""
    titles = [" ".join(str(v if v is not None else "").split()) for v in values]
    problems = [f"[{i}] is blank" for i, t in enumerate(titles) if not t]
    problems += [f"[{i}] at most {OPTION_MAX} characters" for i, t in enumerate(titles)
                 if len(t) > OPTION_MAX]
    if len(titles) > OPTIONS_AT_CREATION_MAX:
        problems.append(f"at most {OPTIONS_AT_CREATION_MAX} options (add more with add_option)")
    repeated = sorted({t for t in titles if t and titles.count(t) > 1})
    if repeated:
        problems.append(f"each title at most once (repeated: {', '.join(repeated)})")
    if problems:
        raise invalid_param("options", "; ".join(problems))
    return titles


def _members(studio: Studio) -> dict[str, tuple[str, str]]:
    """The studio's members by handle, as (user id, role): what a rule naming handles needs."""
    rows = db.session.execute(select(User.handle, User.id, Membership.role)
                              .join(Membership, Membership.user_id == User.id)
                              .where(Membership.studio_id == studio.id))
    return {handle.lower(): (str(ident), role) for handle, ident, role in rows}


def create_decision(studio: Studio, user: User, question: str, description: str | None = None,
                    options_open: bool | None = None, deadline: Any = None,
                    base_url: str = "", options: list[Any] | None = None,
                    **settings: Any) -> Decision:
    """A new decision of ``settings["kind"]`` (acceptance when not given) with that kind's
    settings; ``options`` (titles) or, for a time poll, ``slots`` are added at once, in the
    order given. Invalid names every problem of the question, options and settings at once."""
    errors: list[dict[str, Any]] = []
    zone = cycles.zone_of(studio)
    text = titles = when = None
    try:
        text = items.one_line(question, "question", QUESTION_MAX)
    except Invalid as exc:
        errors += exc.errors or []
    try:
        titles = option_titles(options or [])
    except Invalid as exc:
        errors += exc.errors or []
    try:
        items.description(description, DESCRIPTION_MAX)
    except Invalid as exc:
        errors += exc.errors or []
    try:
        when = deadlines.parse(deadline, zone)
    except Invalid as exc:
        errors += exc.errors or []
    needs_members = any(isinstance(settings.get(w), dict) and "handles" in settings[w]
                        for w in ("voters", "proposers"))
    try:
        chosen = decision_kinds.settings_of(studio, {"options": options, **settings},
                                            _members(studio) if needs_members else {})
    except Invalid as exc:
        errors += exc.errors or []
    if errors or text is None or titles is None or when is None:
        raise Invalid("invalid parameters for create_decision", errors=errors)
    decision = Decision(studio_id=studio.id, question=text, description=description or "",
                        options_open=True if options_open is None else options_open,
                        deadline=when, created_by_id=user.id, kind=chosen.kind,
                        settings=chosen.settings)
    decision.assign_ids()
    db.session.add(decision)
    db.session.flush()
    now = utcnow()
    added = [(title, None) for title in titles] + [
        (decision_kinds.slot_title(slot, zone), slot) for slot in chosen.slots]
    for index, (title, slot) in enumerate(added):
        # A microsecond apart: the page lists options by creation, so they keep this order.
        db.session.add(Option(decision_id=decision.id, title=title, created_by_id=user.id,
                              random_id=secrets.randbelow(2**31),
                              created_at=now + timedelta(microseconds=index),
                              starts_at=slot.starts_at if slot else None,
                              minutes=slot.minutes if slot else None))
    links.sync(studio, "decision", decision.id, decision.description, base_url)
    return decision


def option_titles_of(decision: Decision) -> list[str]:
    """The decision's live options' titles, in the order they were added."""
    return list(db.session.scalars(select(Option.title).where(
        Option.decision_id == decision.id, Option.deleted_at.is_(None))
        .order_by(Option.created_at, Option.title)))


def update_settings(decision: Decision, studio: Studio, user: User, question: str | None = None,
                    description: str | None = None, options_open: bool | None = None,
                    deadline: Any = None, base_url: str = "") -> Decision:
    permissions.require_manage(studio, user, decision.created_by_id, "decision")
    decision = lock_row(Decision, decision.id)
    before = revisions.snapshot("decision", decision)
    if deadline is not None:
        closing.move_deadline(studio, "decision", decision, deadline)
    if question is not None:
        decision.question = items.one_line(question, "question", QUESTION_MAX)
    if description is not None:
        decision.description = items.description(description, DESCRIPTION_MAX)
        links.sync(studio, "decision", decision.id, decision.description, base_url)
    if options_open is not None:
        decision.options_open = options_open
    decision.updated_at = utcnow()
    revisions.record(studio, user, "decision", decision, "edit", before,
                     revisions.snapshot("decision", decision))
    return decision


def close(decision: Decision, user: User) -> Decision:
    if decision.created_by_id != user.id:
        raise Forbidden("only the decision's creator can close it")
    decision = lock_row(Decision, decision.id)
    if decision.closed:
        raise Conflict("this decision is already closed")
    decision.deadline = utcnow()
    decision.updated_at = decision.deadline
    # What follows a close (its page's change, the people told, webhooks) as at its deadline.
    closing.settle("decision", decision, user, decision.deadline)
    return decision


def _open_for_writes(decision: Decision) -> Decision:
    """The decision, share-locked and freshly read; Conflict when it has closed."""
    decision = lock_row(Decision, decision.id, shared=True)
    if decision.closed:
        raise Conflict("this decision is closed and no longer accepts options or votes")
    return decision


def can_add_options(decision: Decision, user: User | None, role: str | None) -> bool:
    return user is not None and decision_kinds.has_options(decision.kind) and \
        eligibility.may_propose(decision, user.id, role) is None


def _role(studio_id: Any, user: User) -> str | None:
    return db.session.scalar(select(Membership.role).where(
        Membership.studio_id == studio_id, Membership.user_id == user.id))


def add_option(decision: Decision, user: User, title: str,
               slot: decision_kinds.Slot | None = None) -> Option:
    """A new option (a time poll's: a slot, titled by its start and length)."""
    if not decision_kinds.has_options(decision.kind):
        raise Conflict(f"a {decision_kinds.LABELS[decision.kind].lower()} has no options: "
                       "people answer with a stance")
    if (slot is None) != (decision.kind not in decision_kinds.SLOT_KINDS):
        raise Conflict("a time poll's options are slots: add one with add_slot" if slot is None
                       else "only a time poll has slots: add an option with add_option")
    title = items.one_line(title, "title", OPTION_MAX)
    reason = eligibility.may_propose(decision, user.id, _role(decision.studio_id, user))
    if reason:
        raise Forbidden(reason)
    decision = _open_for_writes(decision)
    option = Option(decision_id=decision.id, title=title, created_by_id=user.id,
                    random_id=secrets.randbelow(2**31),
                    starts_at=slot.starts_at if slot else None,
                    minutes=slot.minutes if slot else None)
    try:
        with db.session.begin_nested():  # a savepoint: a taken title undoes only this insert
            db.session.add(option)
    except IntegrityError:
        deleted = db.session.scalar(select(Option).where(
            Option.decision_id == decision.id, Option.title == title,
            Option.deleted_at.is_not(None)).limit(1))
        if deleted is not None:  # a deleted option keeps its title while it can be restored
            raise Conflict(f"an option titled '{title}' was deleted from this decision; restore "
                           f"it (restore_item with item_type option, id {deleted.id}) or pick "
                           f"another title") from None
        what = "this slot" if slot else f"an option titled '{title}'"
        raise Conflict(f"{what} already exists on this decision") from None
    return option


@dataclass(frozen=True)
class Ballot:
    option_title: str
    accept: bool
    prefer: bool


def ballots(params: dict[str, Any]) -> list[Ballot]:
    """The votes in a ``vote`` call: either option_title (with accept, prefer) or votes=[...].

    accept/prefer left false next to votes are ignored: an HTML form always posts its checkboxes.
    """
    if "votes" in params:
        clash = ["option_title"] if "option_title" in params else []
        clash += [name for name in ("accept", "prefer") if params.get(name)]
        if clash:
            raise Invalid("give either option_title (with accept, prefer) or votes, not both",
                          errors=[{"param": name, "message": "not allowed together with votes"}
                                  for name in clash])
        entries = params["votes"]
        if not entries:
            raise invalid_param("votes", "must contain at least one vote")
        found = [Ballot(" ".join(str(e.get("option_title", "")).split()),
                        bool(e.get("accept", False)), bool(e.get("prefer", False)))
                 for e in entries]
        titles = [b.option_title for b in found]
        repeated = sorted({t for t in titles if titles.count(t) > 1})
        if repeated:
            raise invalid_param("votes", f"each option at most once (repeated: "
                                         f"{', '.join(repeated)})")
        return found
    if "option_title" not in params:
        raise Invalid("say which option: give option_title (with accept, prefer) or votes",
                      errors=[{"param": "option_title", "message": "is required unless votes "
                                                                   "is given"},
                              {"param": "votes", "message": "is required unless option_title "
                                                            "is given"}])
    return [Ballot(" ".join(str(params["option_title"]).split()),
                   bool(params.get("accept", False)), bool(params.get("prefer", False)))]


def vote(decision: Decision, user: User, votes: list[Ballot], listed: bool = False
         ) -> list[Option]:
    """Record each ballot as an upsert; the options voted on, in ballot order. ``listed``: the
    ballots came as ``votes`` (a refusal names each unknown title by its place in it)."""
    if decision.kind != "acceptance":
        raise Conflict(f"this decision is a {decision_kinds.LABELS[decision.kind].lower()}, "
                       "not an acceptance vote")
    decision = _open_for_writes(decision)
    reason = eligibility.may_vote(decision, user.id, _role(decision.studio_id, user))
    if reason:
        raise Forbidden(reason)
    by_title = {o.title: o for o in db.session.scalars(
        select(Option).where(Option.decision_id == decision.id, Option.deleted_at.is_(None)))}
    missing = [(i, b.option_title) for i, b in enumerate(votes) if b.option_title not in by_title]
    if missing:
        known = ", ".join(f"'{t}'" for t in by_title) or "none yet"
        titles = ", ".join(repr(title) for _i, title in missing)
        if not listed:
            raise invalid_param("option_title", f"no option titled {titles} (options: {known})")
        raise Invalid(f"votes: no option titled {titles} (options: {known})", errors=[
            {"param": "votes", "path": f"votes[{i}].option_title",
             "message": f"[{i}].option_title: no option titled {title!r} (options: {known})"}
            for i, title in missing])
    now = utcnow()
    representative = provenance.representative()  # a representative voting for ``user``
    for ballot in votes:
        option = by_title[ballot.option_title]
        stmt = conflicts.insert(Vote).values(
            id=uuid.uuid4(), decision_id=decision.id, option_id=option.id, user_id=user.id,
            accepted=ballot.accept, preferred=ballot.prefer, created_at=now, updated_at=now,
            representative_id=representative)
        # One row per (option, voter) whatever the interleaving: the database decides.
        db.session.execute(stmt.on_conflict_do_update(
            index_elements=["option_id", "user_id"],
            set_={"accepted": ballot.accept, "preferred": ballot.prefer, "updated_at": now,
                  "representative_id": representative}))
    return [by_title[b.option_title] for b in votes]


# Reading --------------------------------------------------------------------------------------

class OptionRow(NamedTuple):
    """An option as the pages list it (plain columns: they show its title, vote by its id)."""
    id: uuid.UUID
    title: str


@dataclass(frozen=True)
class ResultRow:
    option: OptionRow
    accepted: int
    preferred: int
    votes: int
    place: int  # the option's place among the live options, oldest first (``in_order_added``)


def results(decision: Decision) -> Query[list[ResultRow]]:
    """Options by accepted desc, then preferred desc, then their fixed random tiebreak."""
    return Query(_RESULTS, {"decision_id": decision.id}, _results)


def _results(rows: Any) -> list[ResultRow]:
    return [ResultRow(OptionRow(i, t), int(a), int(p), int(n), int(k))
            for i, t, a, p, n, k in rows]


def in_order_added(results: list[ResultRow]) -> list[ResultRow]:
    """A tally's rows in the order their options were added (the order pages list options
    in): the tally holds every live option, so a page that shows both reads them once."""
    return sorted(results, key=attrgetter("place"))


def has_options(decision: Decision) -> bool:
    return db.session.scalar(_HAS_OPTIONS, {"decision_id": decision.id}) is not None


class MyVote(NamedTuple):
    """The caller's vote on one option, as the decision page shows it."""
    option_id: uuid.UUID
    accepted: bool
    preferred: bool


def my_votes(decision: Decision, user: User | None) -> Query[dict[uuid.UUID, MyVote]]:
    """The caller's votes by option (plain rows: the page only shows them)."""
    if user is None:
        return known({})
    return Query(_MY_VOTES, {"decision_id": decision.id, "user_id": user.id},
                 lambda rows: {row[0]: MyVote(*row) for row in rows})


def took_part(decision: Decision) -> Any:
    """A select of the ids of everyone who voted, for a decision of any kind (who took part is
    never secret, even when how they voted is)."""
    if decision.kind == "acceptance":
        return select(Vote.user_id).where(Vote.decision_id == decision.id).distinct()
    return select(DecisionParticipant.user_id).where(
        DecisionParticipant.decision_id == decision.id)


def voters(decision: Decision) -> Query[list[people.Voter]]:
    """Everyone who voted, in the order of their first vote, each with the representative who
    cast their newest vote for them, if one did (plain rows: a page links each)."""
    return Query(_VOTERS, {"decision_id": decision.id}, people.voters_from)


# The decision page runs all of these on every view: built once, bound per call. The tally and
# the voters are aggregated over the decision's votes first and joined to their options and
# people afterwards (fewer rows to group than the joined ones).
def _tally() -> Any:
    votes = (select(Vote.option_id,
                    func.count().filter(Vote.accepted).label("accepted"),
                    func.count().filter(Vote.preferred).label("preferred"),
                    func.count().label("votes"))
             .where(Vote.decision_id == bindparam("decision_id"))
             .group_by(Vote.option_id).subquery())
    accepted = func.coalesce(votes.c.accepted, 0)
    preferred = func.coalesce(votes.c.preferred, 0)
    # Each option's place in the order it was added (created, then title), counted by the
    # database so that it is the database's order of titles on both.
    place = func.row_number().over(order_by=(Option.created_at, Option.title))
    return (select(Option.id, Option.title, accepted, preferred,
                   func.coalesce(votes.c.votes, 0), place)
            .outerjoin(votes, votes.c.option_id == Option.id)
            .where(Option.decision_id == bindparam("decision_id"), Option.deleted_at.is_(None))
            .order_by(accepted.desc(), preferred.desc(), Option.random_id.desc()))


def _voters() -> Any:
    first = (select(Vote.user_id, func.min(Vote.created_at).label("first"),
                    func.count(Vote.representative_id).label("represented"))
             .where(Vote.decision_id == bindparam("decision_id"))
             .group_by(Vote.user_id).subquery())
    newest = (select(Vote.representative_id)
              .where(Vote.decision_id == bindparam("decision_id"),
                     Vote.user_id == first.c.user_id)
              .order_by(Vote.updated_at.desc()).limit(1).scalar_subquery())
    representative = aliased(User)
    # Only a voter with a vote a representative cast can have one on their newest vote: the
    # others skip that lookup (most voters vote themselves), which sorted each one's votes.
    return (select(*people.COLUMNS, representative.id, representative.handle,
                   representative.name)
            .join(first, first.c.user_id == User.id)
            .outerjoin(representative,
                       representative.id == case((first.c.represented > 0, newest)))
            .order_by(first.c.first, User.id))


_RESULTS = _tally()
_VOTERS = _voters()
_HAS_OPTIONS = (select(Option.id).where(Option.decision_id == bindparam("decision_id"),
                                        Option.deleted_at.is_(None)).limit(1))
_MY_VOTES = select(Vote.option_id, Vote.accepted, Vote.preferred).where(
    Vote.decision_id == bindparam("decision_id"), Vote.user_id == bindparam("user_id"))

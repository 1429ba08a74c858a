"""Collaboration actions: decisions, options and votes, commitments, heartbeats.

Each handler is a thin call into a service; the service enforces the rule again, so a request
that raced past a page's state (a vote as the decision closes) still gets an honest refusal.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from app.actions import rules
from app.actions.core import pin_actions
from app.actions.effects import DESTRUCTIVE, IDEMPOTENT_WRITE, WRITE
from app.actions.registry import Context, Param, Result, action
from app.db import read
from app.services import (
    ballots,
    commitments,
    cycles,
    decision_kinds,
    decisions,
    eligibility,
    heartbeats,
    items,
)

_WHEN = ("Optional: ISO 8601 (without an offset it is the studio's local time), a unix "
         "timestamp, relative like 30m, 3h, 7d, 1w, or 'none'")
DEADLINE = Param("deadline", "datetime", f"{_WHEN} (then it closes when the creator closes it)")
COMMITMENT_DEADLINE = Param("deadline", "datetime",
                            f"{_WHEN} (then it stays open until its limit is reached)")
QUESTION = Param("question", "string", "The question to decide", required=True,
                 max_length=decisions.QUESTION_MAX)
DESCRIPTION = Param("description", "text", "Markdown context",
                    max_length=decisions.DESCRIPTION_MAX)
OPTIONS_OPEN = Param("options_open", "boolean",
                     "Anyone in the studio may add options (otherwise only the creator)")
TITLE = Param("title", "string", "What you commit to", required=True,
              max_length=commitments.TITLE_MAX)
CRITICAL_MASS = Param("critical_mass", "integer",
                      "How many participants it takes for the commitment to hold", required=True,
                      minimum=1)
LIMIT = Param("limit", "integer",
              "Optional cap on participants; reaching it closes the commitment", minimum=1)
OPTIONS = Param("options", "array",
                "Optional: the options' titles, in order, e.g. [\"Tuesday\", \"Thursday\"] "
                "(each unique and not blank, as add_option takes them; add more later)",
                schema={"type": "array", "maxItems": decisions.OPTIONS_AT_CREATION_MAX,
                        "items": {"type": "string", "minLength": 1,
                                  "maxLength": decisions.OPTION_MAX}})
JOIN = Param("join", "boolean", "Join it yourself at once (default false): no separate "
                                "join_commitment needed")
VOTE_ITEM = {
    "type": "object",
    "properties": {
        "option_title": {"type": "string", "minLength": 1,
                         "maxLength": decisions.OPTION_MAX,
                         "description": "The option's title, as the decision page lists it"},
        "accept": {"type": "boolean", "description": "Accept this option (default false)"},
        "prefer": {"type": "boolean", "description": "Prefer this option (default false)"},
    },
    "required": ["option_title"],
    "additionalProperties": False,
}


_WHO = {"type": "object", "minProperties": 1, "maxProperties": 1,
        "properties": {"role": {"type": "string", "enum": list(decision_kinds.VOTER_ROLES)},
                       "handles": {"type": "array", "minItems": 1,
                                   "maxItems": decision_kinds.HANDLES_MAX,
                                   "items": {"type": "string", "minLength": 1,
                                             "maxLength": 40}}},
        "additionalProperties": False}
SLOT_ITEM = {"type": "object",
             "properties": {
                 "starts_at": {"type": "string", "minLength": 1,
                               "description": "When the slot starts: ISO 8601 (without an "
                                              "offset it is the studio's local time)"},
                 "minutes": {"type": "integer", "minimum": 1,
                             "maximum": decision_kinds.SLOT_MINUTES_MAX,
                             "description": "How long it lasts, in minutes"}},
             "required": ["starts_at", "minutes"], "additionalProperties": False}
KIND = Param("kind", "string", "How it is decided: acceptance (accept and prefer options; the "
             "default), consent (a proposal: agree / abstain / disagree / block), sense_check, "
             "single_choice, score (0-5 per option), dot_vote, ranked_choice (instant runoff), "
             "time_poll (yes / maybe / no per time slot)", enum=decision_kinds.KINDS,
             default=decision_kinds.DEFAULT)
KIND_SETTINGS = (
    Param("slots", "array", "time_poll: the time slots, [{starts_at, minutes}] (add more "
          "later with add_slot)",
          schema={"type": "array", "maxItems": decision_kinds.SLOTS_MAX, "items": SLOT_ITEM},
          example=[{"starts_at": "2030-01-07T10:00", "minutes": 60}]),
    Param("dots", "integer", f"dot_vote: the dots each voter places (default "
          f"{decision_kinds.DOTS_DEFAULT})", minimum=1, maximum=decision_kinds.DOTS_MAX),
    Param("voters", "object", "Who may vote: {\"role\": \"admin\"} or {\"handles\": [...]} "
          "(left out: every member)", schema=_WHO),
    Param("proposers", "object", "Who may add options: {\"role\": ...} or {\"handles\": "
          "[...]} (left out: as options_open says); the creator always may", schema=_WHO),
    Param("quorum", "integer", "How many must take part for the outcome to count", minimum=1),
    Param("quorum_share", "number", "The share of those who may vote who must take part "
          "(0.5: half); with quorum too, the larger", minimum=0, maximum=1),
    Param("required_share", "number", "consent: the share of agree among agree, disagree "
          "and block; single_choice, ranked_choice: the winner's share of the ballots "
          "(0.5: half)", minimum=0, maximum=1),
    Param("none_of_the_above", "boolean", "single_choice, ranked_choice, score, dot_vote: "
          "voters may choose none of the above"),
    Param("anonymous", "boolean", "Anonymous ballots: who voted is shown, how is stored "
          "unlinked and cannot be changed once cast (not for acceptance; set at creation "
          "only)"),
    Param("hide_results", "boolean", "Hide the results until the decision closes (not for "
          "acceptance)"),
)


def _optional(param: Param) -> Param:
    return dataclasses.replace(param, required=False)


def _deadline_value(ctx: Context) -> str | None:
    """An edit form's deadline: local ISO time, 'none', or empty once closed (it can't change)."""
    item = ctx.item
    if item.closed:
        return None
    if item.manual_close:
        return "none"
    return item.deadline.astimezone(cycles.zone_of(ctx.studio)).strftime("%Y-%m-%dT%H:%M")


def _since(ctx: Context) -> str:
    """When the page's item closed, in the studio's time zone."""
    return ctx.item.deadline.astimezone(cycles.zone_of(ctx.studio)).isoformat(timespec="minutes")


def _decision_closed(ctx: Context) -> str | None:
    if ctx.item.closed:
        return (f"the decision closed at {_since(ctx)}; its outcome is on the page "
                f"({ctx.path})")
    return None


def decision_has_options(ctx: Context) -> bool:
    """Whether the page's decision has a live option, asked once per page load: the decision
    page checks it for several actions (vote, edit and delete of options)."""
    key = f"has_options:{ctx.item.id}"
    if key not in ctx.extra:
        ctx.extra[key] = decisions.has_options(ctx.item)
    return bool(ctx.extra[key])


def known_options(ctx: Context, tally: list[Any], ballots_cast: bool = False) -> None:
    """The page read the decision's tally itself (its rows in the order the options were
    added) and whether any ballot was cast: no query for decision_has_options, nor for which
    options may still change."""
    ctx.extra[f"has_options:{ctx.item.id}"] = bool(tally)
    ctx.extra[f"unvoted:{ctx.item.id}"] = [] if ballots_cast else _unvoted(tally)


def _unvoted(tally: list[Any]) -> list[str]:
    return [row.option.title for row in tally if not row.votes]


def unvoted_options(ctx: Context) -> list[str]:
    """The titles of the decision's live options nobody has voted on, oldest first: the only
    ones that may still be renamed or deleted (``app.services.deletion``). The page's, else
    read (an action's own page, a form post)."""
    key = f"unvoted:{ctx.item.id}"
    if key not in ctx.extra:
        # A ballot names options by id: once one is cast, none of them changes.
        ctx.extra[key] = [] if ballots.any_cast(ctx.item) else \
            _unvoted(decisions.in_order_added(read(decisions.results(ctx.item))))
    return list(ctx.extra[key])


def option_choices(ctx: Context) -> dict[str, list[str]]:
    """What a person's form to rename or delete an option picks from."""
    return {"option_title": unvoted_options(ctx)}


def known_participation(ctx: Context, joined: bool) -> None:
    """The page read the commitment's participants itself: whether the caller joined is
    answered from them for join and leave, instead of a query each (a page view only; an
    action POST, which runs no view, still asks)."""
    ctx.extra[f"joined:{ctx.item.id}"] = joined


def _joined(ctx: Context) -> bool:
    key = f"joined:{ctx.item.id}"
    if key in ctx.extra:
        return bool(ctx.extra[key])
    return commitments.participant(ctx.item, ctx.user) is not None


def _vote_unavailable(ctx: Context) -> str | None:
    wrong = of_kind(ctx, "acceptance")
    if wrong:
        return wrong
    if not decision_has_options(ctx):
        return "the decision has no options yet: add one with add_option, then vote"
    return _decision_closed(ctx)


def _join_unavailable(ctx: Context) -> str | None:
    item = ctx.item
    limit = item.participant_limit
    if limit is not None and commitments.count(item) >= limit:
        return (f"the commitment is full: its limit of {limit} participants was reached at "
                f"{_since(ctx)}")
    if item.closed:
        return f"the commitment closed at {_since(ctx)}; nobody can join it any more"
    return None


def _path(ctx: Context, item_type: str, item: Any) -> str:
    return items.path_of(ctx.studio, item_type, item)


# Decisions -----------------------------------------------------------------------------------

# The action a person takes to vote on each kind of decision (app.actions.ballots).
BALLOT_ACTIONS = {"acceptance": "vote", "consent": "respond_to_proposal",
                  "sense_check": "check_sense", "single_choice": "choose",
                  "score": "score_options", "dot_vote": "place_dots",
                  "ranked_choice": "rank_options", "time_poll": "mark_availability"}


def _first_steps(ctx: Context, result: Result) -> list[str]:
    """With options (or none needed) it is ready for ballots; without, options first."""
    kind = result.data.get("kind", decision_kinds.DEFAULT)
    if decision_kinds.has_options(kind) and not result.data.get("options"):
        return ["add_slot" if kind in decision_kinds.SLOT_KINDS else "add_option"]
    return [BALLOT_ACTIONS[kind]]


@action("create_decision", "Ask the studio a question to decide: by acceptance voting (the "
        "default) or another kind (consent, sense_check, single_choice, score, dot_vote, "
        "ranked_choice, time_poll) with its settings",
        ("decision_new", "cycle"), rules.member,
        params=(QUESTION, DESCRIPTION, dataclasses.replace(OPTIONS_OPEN, default=True),
                DEADLINE, OPTIONS, KIND, *KIND_SETTINGS), effect=WRITE,
        next_steps=_first_steps)
def create_decision(ctx: Context, p: dict[str, Any]) -> Result:
    decision = decisions.create_decision(ctx.studio, ctx.user, base_url=ctx.base_url, **p)
    titles = decisions.option_titles_of(decision)
    with_options = f" with {len(titles)} options" if titles else ""
    label = decision_kinds.LABELS[decision.kind].lower()
    return Result(f"Created {label} “{decision.question}”{with_options}.",
                  _path(ctx, "decision", decision), created=True,
                  data={"id": decision.short_id, "question": decision.question,
                        "kind": decision.kind, "options": titles})


def option_proposer(ctx: Context) -> str | None:
    """Who may add options to the page's decision (``eligibility.may_propose``)."""
    reason = rules.member(ctx)
    if reason or ctx.member.role == "guest":  # a guest is told so by the registry's rule
        return reason
    return eligibility.may_propose(ctx.item, ctx.user.id, ctx.member.role)


def voter(ctx: Context) -> str | None:
    """Who may vote on the page's decision (``eligibility.may_vote``)."""
    reason = rules.member(ctx)
    if reason or ctx.member.role == "guest":  # a guest is told so by the registry's rule
        return reason
    return eligibility.may_vote(ctx.item, ctx.user.id, ctx.member.role)


def of_kind(ctx: Context, *kinds: str) -> str | None:
    """Why an action of ``kinds`` is not for the page's decision (None: it is)."""
    kind = ctx.item.kind
    if kind in kinds:
        return None
    label = decision_kinds.LABELS[kind].lower()
    if not decision_kinds.has_options(kind):
        return f"this decision is a {label}: it has no options; answer with " \
               f"{BALLOT_ACTIONS[kind]}"
    if kind in decision_kinds.SLOT_KINDS and "time_poll" not in kinds:
        return f"this decision is a {label}: its options are slots; add one with add_slot"
    return f"this decision is a {label}: not for {', '.join(kinds)}"


def _add_option_unavailable(ctx: Context) -> str | None:
    return of_kind(ctx, *(k for k in decision_kinds.KINDS if decision_kinds.has_options(k)
                          and k not in decision_kinds.SLOT_KINDS)) or _decision_closed(ctx)


@action("add_option", "Add an option to this decision (titles are unique)", "decision",
        option_proposer,
        available=lambda ctx: not ctx.item.closed and _add_option_unavailable(ctx) is None,
        unavailable_reason=_add_option_unavailable,
        params=(Param("title", "string", "The option's title", required=True,
                      max_length=decisions.OPTION_MAX),),
        effect=WRITE, next_steps=lambda ctx, result: [BALLOT_ACTIONS[ctx.item.kind]])
def add_option(ctx: Context, p: dict[str, Any]) -> Result:
    option = decisions.add_option(ctx.item, ctx.user, p["title"])
    return Result(f"Added option “{option.title}”.", ctx.path, created=True,
                  data={"title": option.title})


@action("vote", "Vote on several options in one call (votes: [{option_title, accept, "
                "prefer}], each option at most once) or on one (option_title, accept, prefer); "
                "voting again changes your vote; the decision page shows a worked example",
        "decision", voter,
        available=lambda ctx: (ctx.item.kind == "acceptance" and not ctx.item.closed
                               and decision_has_options(ctx)),
        unavailable_reason=_vote_unavailable,
        params=(Param("option_title", "string", "The option's title (single vote)",
                      max_length=decisions.OPTION_MAX),
                Param("accept", "boolean", "Accept this option (single vote; default false)"),
                Param("prefer", "boolean", "Prefer this option (single vote; default false)"),
                Param("votes", "array", "Several votes in one call: [{option_title, accept, "
                      "prefer}], each option at most once; options left out keep your vote",
                      schema={"type": "array", "items": VOTE_ITEM, "minItems": 1},
                      example=[{"option_title": "Café", "accept": True, "prefer": True},
                               {"option_title": "Park", "accept": True}])),
        effect=IDEMPOTENT_WRITE)
def vote(ctx: Context, p: dict[str, Any]) -> Result:
    ballots = decisions.ballots(p)
    voted = decisions.vote(ctx.item, ctx.user, ballots, listed="votes" in p)
    titles = ", ".join(f"“{o.title}”" for o in voted)
    return Result(f"Vote recorded on {titles}.", ctx.path,
                  data={"votes": [dataclasses.asdict(b) for b in ballots]})


@action("close_decision", "Close this decision now; the results become final", "decision",
        rules.creator, available=lambda ctx: not ctx.item.closed,
        unavailable_reason=_decision_closed, effect=DESTRUCTIVE)
def close_decision(ctx: Context, p: dict[str, Any]) -> Result:
    decisions.close(ctx.item, ctx.user)
    return Result("Decision closed.", ctx.path)


@action("update_decision_settings", "Change this decision's question, description, "
        "options_open or deadline (its creator or a studio admin)", "decision_settings",
        rules.creator_or_admin,
        params=(_optional(QUESTION), DESCRIPTION, OPTIONS_OPEN, DEADLINE),
        effect=IDEMPOTENT_WRITE,
        prefill=lambda ctx: {"question": ctx.item.question, "description": ctx.item.description,
                             "options_open": ctx.item.options_open,
                             "deadline": _deadline_value(ctx)})
def update_decision_settings(ctx: Context, p: dict[str, Any]) -> Result:
    decisions.update_settings(ctx.item, ctx.studio, ctx.user, base_url=ctx.base_url, **p)
    return Result("Decision settings saved.", _path(ctx, "decision", ctx.item))


pin_actions("decision", "decision_settings")


# Commitments ---------------------------------------------------------------------------------

@action("create_commitment", "Propose a commitment that holds once enough people join",
        ("commitment_new", "cycle"), rules.member,
        params=(TITLE, DESCRIPTION, CRITICAL_MASS, COMMITMENT_DEADLINE, LIMIT, JOIN),
        effect=WRITE,
        next_steps=lambda ctx, result: [] if "joined" in result.data else ["join_commitment"])
def create_commitment(ctx: Context, p: dict[str, Any]) -> Result:
    joins = bool(p.pop("join", False))
    commitment = commitments.create_commitment(ctx.studio, ctx.user, base_url=ctx.base_url,
                                               creator_joins=joins, **p)
    message = f"Created commitment “{commitment.title}”."
    data: dict[str, Any] = {"id": commitment.short_id, "title": commitment.title}
    if joins:
        state = commitments.progress(commitment)
        message += f" You joined it. {state.status_message}"
        data.update(joined=state.joined, critical_mass=state.critical_mass, status=state.status)
    return Result(message, _path(ctx, "commitment", commitment), created=True, data=data)


@action("join_commitment", "Join this commitment", "commitment", rules.member,
        available=lambda ctx: (not ctx.item.closed
                               and not _joined(ctx)),
        done=_joined,
        unavailable_reason=_join_unavailable,
        effect=IDEMPOTENT_WRITE)
def join_commitment(ctx: Context, p: dict[str, Any]) -> Result:
    _participant, created = commitments.join(ctx.item, ctx.user)
    state = commitments.progress(ctx.item)
    message = "Joined the commitment." if created else "You had already joined."
    return Result(f"{message} {state.status_message}", ctx.path,
                  data={"joined": state.joined, "critical_mass": state.critical_mass,
                        "status": state.status})


def _leave_unavailable(ctx: Context) -> str | None:
    if ctx.item.closed:
        return f"the commitment closed at {_since(ctx)}; its participants are final"
    if not _joined(ctx):
        return "you have not joined this commitment"
    return None


@action("leave_commitment", "Leave this commitment you joined, while it is open", "commitment",
        rules.member,
        available=lambda ctx: (not ctx.item.closed
                               and _joined(ctx)),
        done=lambda ctx: (not ctx.item.closed
                          and not _joined(ctx)),
        unavailable_reason=_leave_unavailable,
        effect=IDEMPOTENT_WRITE)
def leave_commitment(ctx: Context, p: dict[str, Any]) -> Result:
    left = commitments.leave(ctx.item, ctx.user)
    state = commitments.progress(ctx.item)
    message = "You left the commitment." if left else "You were not in it."
    return Result(f"{message} {state.status_message}", ctx.path,
                  data={"joined": state.joined, "critical_mass": state.critical_mass,
                        "status": state.status})


@action("update_commitment_settings", "Change this commitment's title, description, critical "
        "mass, deadline or limit (its creator or a studio admin)", "commitment_settings",
        rules.creator_or_admin,
        params=(_optional(TITLE), DESCRIPTION, _optional(CRITICAL_MASS), COMMITMENT_DEADLINE,
                LIMIT),
        effect=IDEMPOTENT_WRITE,
        prefill=lambda ctx: {"title": ctx.item.title, "description": ctx.item.description,
                             "critical_mass": ctx.item.critical_mass,
                             "deadline": _deadline_value(ctx),
                             "limit": ctx.item.participant_limit})
def update_commitment_settings(ctx: Context, p: dict[str, Any]) -> Result:
    commitments.update_settings(ctx.item, ctx.studio, ctx.user, base_url=ctx.base_url, **p)
    return Result("Commitment settings saved.", _path(ctx, "commitment", ctx.item))


pin_actions("commitment", "commitment_settings")


# Heartbeats ----------------------------------------------------------------------------------

def _heartbeat_unavailable(ctx: Context) -> str:
    if not ctx.studio.heartbeats_required:
        return "this studio does not ask for heartbeats"
    if ctx.member is not None and ctx.member.role == "guest":
        return "guests read the studio without checking in"
    return "you already checked in for this cycle"


@action("send_heartbeat", "Check in for this cycle (the studio asks its members to, to see "
        "its content): one click, no text", "studio",
        rules.member, available=lambda ctx: heartbeats.can_send(ctx.studio, ctx.user, ctx.member),
        unavailable_reason=_heartbeat_unavailable,
        effect=WRITE)
def send_heartbeat(ctx: Context, p: dict[str, Any]) -> Result:
    beat = heartbeats.send(ctx.studio, ctx.user)
    return Result("Checked in for this cycle: welcome back.", ctx.path, created=True,
                  data={"expires_at": beat.expires_at.isoformat()})

"""The ballot actions: one per kind of decision, named for what a person does, each offered
only on a decision of its kind (acceptance keeps ``vote``, in ``collab``), and ``add_slot`` for
a time poll. Each takes options by title; ``app.services.ballots`` checks and stores the
ballot (voting again replaces it; an anonymous ballot cannot be changed once cast).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.actions import ballot_secrecy
from app.actions.collab import (
    BALLOT_ACTIONS,
    decision_has_options,
    of_kind,
    option_proposer,
    voter,
)
from app.actions.effects import IDEMPOTENT_WRITE, WRITE
from app.actions.registry import Context, Param, Result, action
from app.services import ballots, cycles, decision_kinds, decisions, tallies
from app.services.errors import Invalid

TITLE = {"type": "string", "minLength": 1, "maxLength": decisions.OPTION_MAX,
         "description": "The option's title, as the decision page lists it"}
REASON = Param("reason", "text", "Why, in a few words (required to block)", max_length=2000)
NONE_OF_THE_ABOVE = Param("none_of_the_above", "boolean",
                          "None of the options (only where the decision allows it)")


def _entries(value: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "minItems": 1, "maxItems": 500, "description": description,
            "items": {"type": "object", "properties": {"option_title": TITLE, value: schema},
                      "required": ["option_title", value], "additionalProperties": False}}


def _unavailable(kind: str) -> Callable[[Context], str | None]:
    def reason(ctx: Context) -> str | None:
        wrong = of_kind(ctx, kind)
        if wrong:
            return wrong
        if ctx.item.closed:
            return "the decision is closed; its outcome is on the page"
        if decision_kinds.has_options(kind) and not decision_has_options(ctx):
            adder = "add_slot" if kind in decision_kinds.SLOT_KINDS else "add_option"
            return f"the decision has no options yet: add one with {adder}, then vote"
        if ballots.anonymous(ctx.item) and _cast(ctx):
            return ("you have cast your anonymous ballot, and an anonymous ballot cannot be "
                    "changed")
        return None
    return reason


def _cast(ctx: Context) -> bool:
    key = f"took_part:{ctx.item.id}"
    if key not in ctx.extra:
        ctx.extra[key] = ballots.took_part(ctx.item, ctx.user)
    return bool(ctx.extra[key])


def known_part(ctx: Context, took_part: bool) -> None:
    """The page read whether the caller took part: the ballot actions ask nothing more."""
    ctx.extra[f"took_part:{ctx.item.id}"] = took_part


def _run(ctx: Context, p: dict[str, Any]) -> Result:
    done = ballots.cast(ctx.item, ctx.user, ctx.member.role, p)
    if done.anonymous:
        # Nothing of the choices in the message or data: both are stored with the caller
        # (webhook payloads, MCP tasks' results).
        return Result("Your anonymous ballot was cast. It cannot be changed.", ctx.path,
                      data={"anonymous": True})
    said = "Your ballot replaced your earlier one." if done.replaced else "Your ballot was cast."
    return Result(said, ctx.path, data={"ballot": done.choices, "replaced": done.replaced})


def ballot_action(kind: str, name: str, description: str, params: tuple[Param, ...]) -> None:
    """Register ``name``: ``kind``'s ballot, offered on that kind's decisions only."""
    reason = _unavailable(kind)
    ballot_secrecy.BALLOT_ACTIONS.add(name)
    # The kind is asked first: a decision page weighs every kind's ballot action, and the
    # reason a ballot of another kind is not offered is words nobody reads there.
    action(name, description, "decision", voter,
           available=lambda ctx: ctx.item.kind == kind and reason(ctx) is None,
           unavailable_reason=reason,
           params=params, effect=IDEMPOTENT_WRITE)(_run)


ballot_action("consent", BALLOT_ACTIONS["consent"],
              "Respond to this proposal: agree, abstain, disagree or block (a block needs a "
              "reason); responding again replaces your response",
              (Param("stance", "string", "agree, abstain, disagree or block", required=True,
                     enum=tallies.STANCES["consent"]), REASON))
ballot_action("sense_check", BALLOT_ACTIONS["sense_check"],
              "Say how this looks to you: looks_good, not_sure or concerned, with a reason if "
              "you like; answering again replaces your answer",
              (Param("stance", "string", "looks_good, not_sure or concerned", required=True,
                     enum=tallies.STANCES["sense_check"]),
               Param("reason", "text", "Why, in a few words", max_length=2000)))
ballot_action("single_choice", BALLOT_ACTIONS["single_choice"],
              "Choose one option (option_title), or none_of_the_above where allowed; choosing "
              "again replaces your choice",
              (Param("option_title", "string", "The option you choose",
                     max_length=decisions.OPTION_MAX), NONE_OF_THE_ABOVE))
ballot_action("score", BALLOT_ACTIONS["score"],
              f"Score options from 0 to {tallies.SCORE_MAX}: scores [{{option_title, score}}], "
              "each option at most once (options left out are not scored); scoring again "
              "replaces your ballot",
              (Param("scores", "array", "[{option_title, score}]",
                     schema=_entries("score", {"type": "integer", "minimum": 0,
                                               "maximum": tallies.SCORE_MAX},
                                     f"Each option's score, 0 to {tallies.SCORE_MAX}"),
                     example=[{"option_title": "Park", "score": 5},
                              {"option_title": "Café", "score": 2}]),
               NONE_OF_THE_ABOVE))
ballot_action("dot_vote", BALLOT_ACTIONS["dot_vote"],
              "Place your dots on options: dots [{option_title, dots}], at most the decision's "
              "number of dots in all; placing again replaces your ballot",
              (Param("dots", "array", "[{option_title, dots}]",
                     schema=_entries("dots", {"type": "integer", "minimum": 0},
                                     "How many of your dots each option gets"),
                     example=[{"option_title": "Park", "dots": 7},
                              {"option_title": "Café", "dots": 3}]),
               NONE_OF_THE_ABOVE))
ballot_action("ranked_choice", BALLOT_ACTIONS["ranked_choice"],
              "Rank options, most wanted first: ranking [option_title, ...] (you may leave "
              "some out; each at most once), or none_of_the_above where allowed; ranking again "
              "replaces your ballot",
              (Param("ranking", "array", "Option titles, most wanted first",
                     schema={"type": "array", "minItems": 1, "maxItems": 500, "items": TITLE},
                     example=["Park", "Café"]),
               NONE_OF_THE_ABOVE))
ballot_action("time_poll", BALLOT_ACTIONS["time_poll"],
              "Say which slots suit you: slots [{option_title, answer: yes | maybe | no}] "
              "(slots left out: no answer); answering again replaces your ballot",
              (Param("slots", "array", "[{option_title, answer}]",
                     schema=_entries("answer", {"type": "string",
                                                "enum": list(tallies.SLOT_ANSWERS)},
                                     "Each slot's title with yes, maybe or no"),
                     example=[{"option_title": "Mon 7 Jan 2030, 10:00–11:00 UTC",
                               "answer": "yes"}]),))


def _slot_unavailable(ctx: Context) -> str | None:
    return of_kind(ctx, "time_poll") or (
        "the decision is closed; its outcome is on the page" if ctx.item.closed else None)


@action("add_slot", "Add a time slot to this time poll: when it starts and how many minutes "
        "it lasts (its title says both, in the studio's time zone)", "decision",
        option_proposer, available=lambda ctx: _slot_unavailable(ctx) is None,
        unavailable_reason=_slot_unavailable,
        params=(Param("starts_at", "string", "When it starts: ISO 8601 (without an offset it "
                      "is the studio's local time)", required=True, max_length=64),
                Param("minutes", "integer", "How long it lasts, in minutes", required=True,
                      minimum=1, maximum=decision_kinds.SLOT_MINUTES_MAX)),
        effect=WRITE, next_steps=lambda ctx, result: [BALLOT_ACTIONS["time_poll"]])
def add_slot(ctx: Context, p: dict[str, Any]) -> Result:
    zone = cycles.zone_of(ctx.studio)
    slot, problems = decision_kinds.slot_problems(p, zone, "slot")
    if slot is None:
        raise Invalid("invalid parameters for add_slot", errors=[
            {"param": e["path"].split(".")[-1], "message": e["message"].split(": ", 1)[-1]}
            for e in problems])
    option = decisions.add_option(ctx.item, ctx.user, decision_kinds.slot_title(slot, zone),
                                  slot)
    return Result(f"Added the slot “{option.title}”.", ctx.path, created=True,
                  data={"title": option.title})

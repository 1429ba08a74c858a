"""Counting for every kind of decision: what is wrong with one ballot, and the tally of all.

Pure Python, no database and no Flask: the caller passes the rules, the options and the
ballots (one JSON-able dict per voter) and gets rows best first, the rounds of a ranked-choice
count, a proposal's stances, whether quorum and the required share were met, and one sentence
for people. docs/DECISIONS.md ("Counting") says the same for readers.

How each kind is counted:
- acceptance: by accepted, then preferred; the options' fixed random tiebreak only orders
  rows that tie on both (they share a place, and share first place as winners).
- single_choice / dot_vote / score: most votes / dots / total score wins; equal top figures
  are a tie (several winners). A single-choice option wins only with more votes than "none
  of the above"; in score and dot vote it is only counted.
- ranked_choice: instant runoff. Each round counts every ballot for its highest-ranked
  continuing option; an option with more than half of the continuing (not exhausted) ballots
  wins; otherwise the option with the fewest votes is eliminated. A tie for fewest goes to the
  one with fewer votes in the previous round, going back round by round to round 1 (the first
  preferences); still tied, the lowest tiebreak is eliminated; Round.note says which decided.
  Options with no votes at all are eliminated together (no ballot moves when they go, so one
  at a time would end the same). Two left with equal votes are a tie.
- time_poll: ranked by yes, then maybe; the figure is yes + maybe/2.
- consent / sense_check: the stances are counted. A proposal carries when somebody voted,
  nobody blocked, and quorum and the required share (agree / (agree + disagree + block)) are
  met where set.
- quorum: needed = the larger of the number and the share of the eligible, rounded up; met
  when voters >= needed. Quorum and the required share never change the count: the tally says
  whether they were met. The required share of single and ranked choice is the winner's votes
  (in the last round) over all ballots counted.
- Nobody voted (or no ballot gave any option anything): rows keep the options in the order
  given, place None, no winners.

A ballot is counted as far as it still fits: choices for options no longer listed are dropped;
a ballot that then has problems (see ballot_problems) is not counted (Tally.uncounted).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

KINDS = ("acceptance", "consent", "sense_check", "single_choice", "score", "dot_vote",
         "ranked_choice", "time_poll")
STANCES = {"consent": ("agree", "abstain", "disagree", "block"),
           "sense_check": ("looks_good", "not_sure", "concerned")}
SLOT_ANSWERS = ("yes", "maybe", "no")
SCORE_MAX = 5
NONE_OF_THE_ABOVE_KINDS = ("single_choice", "ranked_choice", "score", "dot_vote")
REQUIRED_SHARE_KINDS = ("consent", "single_choice", "ranked_choice")

# The fields each kind's ballot takes; the first names the choice itself.
BALLOT_FIELDS = {"acceptance": ("accept", "prefer"), "consent": ("stance", "reason"),
                 "sense_check": ("stance", "reason"),
                 "single_choice": ("option", "none_of_the_above"),
                 "score": ("scores", "none_of_the_above"),
                 "dot_vote": ("dots", "none_of_the_above"),
                 "ranked_choice": ("ranking", "none_of_the_above"), "time_poll": ("slots",)}
_OPTION_FIELDS = ("accept", "prefer", "option", "scores", "dots", "ranking", "slots")

Problems = list[tuple[str, str]]


@dataclass(frozen=True)
class OptionKey:
    """An option as counting sees it."""
    key: str        # the option's id as a string
    title: str
    tiebreak: int   # the option's fixed random number (Option.random_id): last resort for ties


@dataclass(frozen=True)
class Rules:
    kind: str
    dots: int = 10                       # dot_vote: dots each voter may place
    eligible: int | None = None          # how many may vote (None: unknown)
    quorum: int | None = None            # voters needed, as a number ...
    quorum_share: float | None = None    # ... or as a share of the eligible (0..1]; both: larger
    required_share: float | None = None  # consent: agree / (agree+disagree+block); single_choice,
                                         # ranked_choice: the winner's share of the ballots
    none_of_the_above: bool = False      # single_choice, ranked_choice, score, dot_vote allow it


@dataclass(frozen=True)
class Row:
    key: str
    title: str
    counts: dict[str, int]  # acceptance {"accepted","preferred"}; single_choice {"votes"};
                            # score {"total","scored"}; dot_vote {"dots"}; ranked_choice {"first",
                            # "final"}; time_poll {"yes","maybe","no"}
    figure: float           # what ranks the row
    share: float            # 0..1: the row's bar width
    place: int | None       # 1 = first; tied rows share a place; None when nobody voted


@dataclass(frozen=True)
class Round:
    """One round of an instant-runoff count."""
    number: int
    counts: dict[str, int]  # continuing options' votes this round
    eliminated: list[str]   # keys eliminated after this round (empty in the last)
    exhausted: int          # ballots with no continuing option left
    note: str               # how a tie for elimination was broken, in words ("" when none)


@dataclass(frozen=True)
class Tally:
    kind: str
    voters: int
    rows: list[Row]
    stances: dict[str, int]
    none_of_the_above: int
    rounds: list[Round]
    winners: list[str]
    quorum_needed: int | None
    quorum_met: bool | None
    share: float | None
    share_met: bool | None
    blocked: bool
    carried: bool | None
    summary: str
    uncounted: int = 0      # ballots that no longer fit the rules or the options, not counted


# --- one ballot ---------------------------------------------------------------------------

def ballot_problems(rules: Rules, options: Sequence[OptionKey],
                    choices: Mapping[str, Any]) -> Problems:
    """Every problem with one ballot as (path, message); empty when the ballot is valid.
    Never raises for bad input."""
    if rules.kind not in KINDS:
        return [("kind", f"is not a kind of decision (one of {', '.join(KINDS)})")]
    if not isinstance(choices, Mapping):
        return [("", "a ballot is an object")]
    titles = {o.key: o.title for o in options}
    fields = BALLOT_FIELDS[rules.kind]
    takes = [f for f in fields if f != "none_of_the_above" or rules.none_of_the_above]
    problems = [(str(name), f"is not part of this ballot (it takes {', '.join(takes)})")
                for name in choices if name not in fields]
    nota, nota_problems = _none_of_the_above(rules, choices)
    problems += nota_problems
    main = fields[0]
    if nota:
        return problems
    if main not in choices:
        if rules.kind in STANCES:
            return problems + [(main, f"is required (one of {', '.join(STANCES[rules.kind])})")]
        return problems + [(main, "is required")]
    return problems + _CHECKS[rules.kind](rules, titles, choices)


def _none_of_the_above(rules: Rules, choices: Mapping[str, Any]) -> tuple[bool, Problems]:
    if "none_of_the_above" not in choices or rules.kind not in NONE_OF_THE_ABOVE_KINDS:
        return False, []
    value = choices["none_of_the_above"]
    if not isinstance(value, bool):
        return False, [("none_of_the_above", "is true or false")]
    if not value:
        return False, []
    problems: Problems = []
    if not rules.none_of_the_above:
        problems.append(("none_of_the_above", "is not offered in this decision"))
    main = BALLOT_FIELDS[rules.kind][0]
    if main in choices:
        problems.append(("none_of_the_above", f"cannot be given with {main}"))
    return True, problems


def _option(titles: Mapping[str, str], value: Any, path: str) -> Problems:
    if not isinstance(value, str):
        return [(path, "is an option's id (text)")]
    if value not in titles:
        return [(path, f"is not an option of this decision ({value[:40]!r})")]
    return []


def _option_list(titles: Mapping[str, str], value: Any, path: str) -> tuple[list[str], Problems]:
    if not isinstance(value, list):
        return [], [(path, "is a list of options")]
    problems: Problems = []
    seen: list[str] = []
    for i, item in enumerate(value):
        item_problems = _option(titles, item, f"{path}[{i}]")
        if item_problems:
            problems += item_problems
        elif item in seen:
            problems.append((f"{path}[{i}]", f"repeats {titles[item]!r}"))
        else:
            seen.append(item)
    return seen, problems


def _option_map(titles: Mapping[str, str], value: Any, path: str,
                check: Callable[[Any], str]) -> tuple[dict[str, Any], Problems]:
    """An object keyed by option: every key an option, every value passing ``check``
    (which returns "" or what is wrong)."""
    if not isinstance(value, Mapping):
        return {}, [(path, "is an object keyed by option")]
    problems: Problems = []
    good: dict[str, Any] = {}
    for key, item in value.items():
        wrong = [(f"{path}.{key}", message) for _, message in _option(titles, key, path)]
        message = check(item)
        if message:
            wrong.append((f"{path}.{key}", message))
        problems += wrong
        if not wrong:
            good[key] = item
    return good, problems


def _whole(low: int, high: int | None) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        ok = (isinstance(value, int) and not isinstance(value, bool) and value >= low
              and (high is None or value <= high))
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        return "" if ok else f"is a whole number {span} (got {value!r})"
    return check


def _check_acceptance(rules: Rules, titles: Mapping[str, str],
                      choices: Mapping[str, Any]) -> Problems:
    accepted, problems = _option_list(titles, choices["accept"], "accept")
    if "prefer" in choices:
        preferred, prefer_problems = _option_list(titles, choices["prefer"], "prefer")
        problems += prefer_problems
        if isinstance(choices["accept"], list):
            problems += [(f"prefer[{choices['prefer'].index(key)}]",
                          f"{titles[key]!r} is preferred but not accepted")
                         for key in preferred if key not in accepted]
    return problems


def _check_stance(rules: Rules, titles: Mapping[str, str],
                  choices: Mapping[str, Any]) -> Problems:
    stances = STANCES[rules.kind]
    stance, reason = choices["stance"], choices.get("reason", "")
    problems: Problems = []
    if stance not in stances:
        problems.append(("stance", f"is one of {', '.join(stances)} (got {stance!r})"))
    if not isinstance(reason, str):
        problems.append(("reason", "is text"))
    elif stance == "block" and not reason.strip():
        problems.append(("reason", "is required to block"))
    return problems


def _check_single(rules: Rules, titles: Mapping[str, str],
                  choices: Mapping[str, Any]) -> Problems:
    return _option(titles, choices["option"], "option")


def _check_score(rules: Rules, titles: Mapping[str, str],
                 choices: Mapping[str, Any]) -> Problems:
    scores, problems = _option_map(titles, choices["scores"], "scores", _whole(0, SCORE_MAX))
    if not problems and not scores:
        problems.append(("scores", "score at least one option"))
    return problems


def _check_dots(rules: Rules, titles: Mapping[str, str], choices: Mapping[str, Any]) -> Problems:
    dots, problems = _option_map(titles, choices["dots"], "dots", _whole(0, None))
    placed = sum(dots.values())
    if placed > rules.dots:
        problems.append(("dots", f"at most {rules.dots} dots in all (placed {placed})"))
    elif not problems and placed == 0:
        problems.append(("dots", "place at least one dot"))
    return problems


def _check_ranking(rules: Rules, titles: Mapping[str, str],
                   choices: Mapping[str, Any]) -> Problems:
    ranked, problems = _option_list(titles, choices["ranking"], "ranking")
    if not problems and not ranked:
        problems.append(("ranking", "rank at least one option"))
    return problems


def _check_slots(rules: Rules, titles: Mapping[str, str], choices: Mapping[str, Any]) -> Problems:
    def answer(value: Any) -> str:
        return "" if value in SLOT_ANSWERS else f"is yes, maybe or no (got {value!r})"
    slots, problems = _option_map(titles, choices["slots"], "slots", answer)
    if not problems and not slots:
        problems.append(("slots", "answer at least one time"))
    return problems


_CHECKS: dict[str, Callable[[Rules, Mapping[str, str], Mapping[str, Any]], Problems]] = {
    "acceptance": _check_acceptance, "consent": _check_stance, "sense_check": _check_stance,
    "single_choice": _check_single, "score": _check_score, "dot_vote": _check_dots,
    "ranked_choice": _check_ranking, "time_poll": _check_slots}


# --- the tally ----------------------------------------------------------------------------

@dataclass
class _Count:
    rows: list[Row]
    winners: list[str]
    lead: str                       # the summary's first sentence
    stances: dict[str, int]
    none_of_the_above: int = 0
    rounds: list[Round] | None = None
    share: Fraction | None = None   # the measured share, exact


def tally(rules: Rules, options: Sequence[OptionKey],
          ballots: Sequence[Mapping[str, Any]]) -> Tally:
    """Count the ballots under the rules (see the module's docstring for each kind)."""
    if rules.kind not in KINDS:
        raise ValueError(f"unknown kind of decision: {rules.kind!r}")
    counted = [b for b in (_fitting(rules, options, ballot) for ballot in ballots) if b is not None]
    voters = len(counted)
    count = _COUNTERS[rules.kind](rules, options, counted)
    needed = quorum_needed(rules)
    quorum_met = None if needed is None else voters >= needed
    required = rules.required_share if rules.kind in REQUIRED_SHARE_KINDS else None
    share_met = (None if required is None
                 else count.share is not None and count.share >= _exact(required))
    blocked = count.stances.get("block", 0) > 0
    carried = (voters > 0 and not blocked and quorum_met is not False and share_met is not False
               if rules.kind == "consent" else None)
    summary = count.lead
    if rules.kind == "consent" and voters:
        summary = f"{'Carried' if carried else 'Not carried'}: {summary}"
    if voters and quorum_met is False:
        summary += f" Quorum not met: {voters} of {needed} voters needed."
    if voters and share_met is False and required is not None:
        measured = "no share" if count.share is None else f"{float(count.share):.0%}"
        summary += f" Required share not met: {measured} of {required:.0%} needed."
    return Tally(kind=rules.kind, voters=voters, rows=count.rows, stances=count.stances,
                 none_of_the_above=count.none_of_the_above, rounds=count.rounds or [],
                 winners=count.winners, quorum_needed=needed, quorum_met=quorum_met,
                 share=None if count.share is None else float(count.share), share_met=share_met,
                 blocked=blocked, carried=carried, summary=summary,
                 uncounted=len(ballots) - voters)


def quorum_needed(rules: Rules) -> int | None:
    """Voters needed: the larger of the number and the share of the eligible (rounded up);
    None when no quorum is set (a share with the eligible unknown cannot be measured)."""
    needs = [] if rules.quorum is None else [rules.quorum]
    if rules.quorum_share is not None and rules.eligible is not None:
        needs.append(math.ceil(_exact(rules.quorum_share) * rules.eligible))
    return max(needs) if needs else None


def _exact(share: float) -> Fraction:
    # The share as written (0.1 is a tenth), so 10% of 10 needs 1 voter, not 2.
    return Fraction(repr(share))


def _fitting(rules: Rules, options: Sequence[OptionKey],
             ballot: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ballot without choices for options no longer listed, or None when it does not fit."""
    if not isinstance(ballot, Mapping):
        return None
    known = {o.key for o in options}

    def listed(value: Any) -> Any:
        if isinstance(value, list):
            return [v for v in value if not isinstance(v, str) or v in known]
        if isinstance(value, Mapping):
            return {k: v for k, v in value.items() if k in known}
        return value

    cleaned = {name: listed(value) if name in _OPTION_FIELDS and name != "option" else value
               for name, value in ballot.items()}
    return None if ballot_problems(rules, options, cleaned) else cleaned


def _names(titles: Sequence[str]) -> str:
    if len(titles) < 2:
        return "".join(titles)
    return f"{', '.join(titles[:-1])} and {titles[-1]}"


def _ranked_rows(options: Sequence[OptionKey], counts: Mapping[str, dict[str, int]],
                 rank: Callable[[str], tuple[float, ...]],
                 figure: Callable[[dict[str, int]], float],
                 whole: float) -> list[Row]:
    """Rows best first by ``rank`` of their key (then tiebreak), sharing places on equal
    ``rank``; bars are figure / whole. When no option has anything: the options in the order
    given, place None."""
    def bar(c: dict[str, int]) -> float:
        return min(1.0, figure(c) / whole) if whole else 0.0

    if not any(figure(counts[o.key]) for o in options):
        return [Row(o.key, o.title, counts[o.key], float(figure(counts[o.key])), 0.0, None)
                for o in options]
    order = sorted(options, key=lambda o: (rank(o.key), o.tiebreak), reverse=True)
    rows: list[Row] = []
    place, previous = 0, None
    for i, o in enumerate(order):
        c = counts[o.key]
        if rank(o.key) != previous:
            place, previous = i + 1, rank(o.key)
        rows.append(Row(o.key, o.title, c, float(figure(c)), bar(c), place))
    return rows


def _firsts(rows: Sequence[Row]) -> list[str]:
    return [r.key for r in rows if r.place == 1]


def _lead(rows: Sequence[Row], winners: Sequence[str], what: str) -> str:
    """"X wins with <what>." or "X and Y tie with <what> each." (what: from the top row)."""
    if not winners:
        return "No option has any votes."
    titles = [r.title for r in rows if r.key in winners]
    if len(titles) == 1:
        return f"{titles[0]} wins with {what}."
    return f"{_names(titles)} tie with {what} each."


def _nobody(kind: str, options: Sequence[OptionKey], counts: Mapping[str, dict[str, int]]
            ) -> _Count:
    rows = [Row(o.key, o.title, counts[o.key], 0.0, 0.0, None) for o in options]
    return _Count(rows, [], "Nobody has voted.", {s: 0 for s in STANCES.get(kind, ())})


def _count_acceptance(rules: Rules, options: Sequence[OptionKey],
                      ballots: Sequence[Mapping[str, Any]]) -> _Count:
    counts = {o.key: {"accepted": 0, "preferred": 0} for o in options}
    for ballot in ballots:
        for key in ballot["accept"]:
            counts[key]["accepted"] += 1
        for key in ballot.get("prefer", []):
            counts[key]["preferred"] += 1
    if not ballots:
        return _nobody(rules.kind, options, counts)
    rows = _ranked_rows(options, counts, lambda k: (counts[k]["accepted"], counts[k]["preferred"]),
                        lambda c: c["accepted"], len(ballots))
    winners = _firsts(rows)
    lead = "Nobody accepted any option."
    if winners:
        top = rows[0].counts
        lead = _lead(rows, winners, f"{top['accepted']} of {len(ballots)} accepting"
                                    f" and {top['preferred']} preferring")
    return _Count(rows, winners, lead, {})


def _count_stances(rules: Rules, options: Sequence[OptionKey],
                   ballots: Sequence[Mapping[str, Any]]) -> _Count:
    stances = {s: 0 for s in STANCES[rules.kind]}
    for ballot in ballots:
        stances[ballot["stance"]] += 1
    if not ballots:
        return _Count([], [], "Nobody has voted.", stances)
    lead = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in stances.items()) + "."
    share = None
    if rules.kind == "consent":
        weighed = stances["agree"] + stances["disagree"] + stances["block"]
        share = Fraction(stances["agree"], weighed) if weighed else None
    return _Count([], [], lead, stances, share=share)


def _count_single(rules: Rules, options: Sequence[OptionKey],
                  ballots: Sequence[Mapping[str, Any]]) -> _Count:
    counts = {o.key: {"votes": 0} for o in options}
    nota = 0
    for ballot in ballots:
        if ballot.get("none_of_the_above") is True:
            nota += 1
        else:
            counts[ballot["option"]]["votes"] += 1
    if not ballots:
        return _nobody(rules.kind, options, counts)
    voters = len(ballots)
    rows = _ranked_rows(options, counts, lambda k: (counts[k]["votes"],),
                        lambda c: c["votes"], voters)
    top = max((c["votes"] for c in counts.values()), default=0)
    winners = _firsts(rows) if top > nota else []
    share = Fraction(top, voters) if top else None
    if top and not winners:
        lead = f"No option wins: none of the above has {nota} of {voters} votes."
    else:
        lead = _lead(rows, winners, f"{top} of {voters} votes")
    return _Count(rows, winners, lead, {}, nota, share=share)


def _count_points(rules: Rules, options: Sequence[OptionKey],
                  ballots: Sequence[Mapping[str, Any]]) -> _Count:
    """Score and dot vote: the most points (total score, dots) wins."""
    field, name = ("scores", "total") if rules.kind == "score" else ("dots", "dots")
    counts = {o.key: ({"total": 0, "scored": 0} if field == "scores" else {"dots": 0})
              for o in options}
    nota = 0
    for ballot in ballots:
        if ballot.get("none_of_the_above") is True:
            nota += 1
            continue
        for key, points in ballot[field].items():
            counts[key][name] += points
            if field == "scores":
                counts[key]["scored"] += 1
    if not ballots:
        return _nobody(rules.kind, options, counts)
    placed = sum(c[name] for c in counts.values())
    # A score bar is the share of the highest total possible; a dot bar the share of all dots.
    whole = SCORE_MAX * (len(ballots) - nota) if field == "scores" else placed
    rows = _ranked_rows(options, counts, lambda k: (counts[k][name],), lambda c: c[name],
                        whole)
    winners = _firsts(rows)
    top = rows[0].counts[name] if winners else 0
    what = (f"{top} points from {len(ballots) - nota} voters" if field == "scores"
            else f"{top} of {placed} dots")
    return _Count(rows, winners, _lead(rows, winners, what), {}, nota)


def _count_slots(rules: Rules, options: Sequence[OptionKey],
                 ballots: Sequence[Mapping[str, Any]]) -> _Count:
    counts = {o.key: {a: 0 for a in SLOT_ANSWERS} for o in options}
    for ballot in ballots:
        for key, answer in ballot["slots"].items():
            counts[key][answer] += 1
    if not ballots:
        return _nobody(rules.kind, options, counts)
    rows = _ranked_rows(options, counts, lambda k: (counts[k]["yes"], counts[k]["maybe"]),
                        lambda c: c["yes"] + c["maybe"] / 2, len(ballots))
    winners = _firsts(rows)
    top = rows[0].counts
    what = f"{top['yes']} yes and {top['maybe']} maybe from {len(ballots)} voters"
    lead = _lead(rows, winners, what) if winners else "No time suits anybody."
    return _Count(rows, winners, lead, {})


def _count_ranked(rules: Rules, options: Sequence[OptionKey],
                  ballots: Sequence[Mapping[str, Any]]) -> _Count:
    rankings = [b["ranking"] for b in ballots if b.get("none_of_the_above") is not True]
    nota = len(ballots) - len(rankings)
    by_key = {o.key: o for o in options}
    continuing = [o.key for o in options]
    history: list[dict[str, int]] = []
    rounds: list[Round] = []
    last_in: dict[str, int] = {}        # the last round each option was counted in
    while True:
        counts = {key: 0 for key in continuing}
        exhausted = 0
        for ranking in rankings:
            top = next((key for key in ranking if key in counts), None)
            if top is None:
                exhausted += 1
            else:
                counts[top] += 1
        history.append(counts)
        number = len(history)
        last_in.update({key: number for key in counts})
        total, best = sum(counts.values()), max(counts.values(), default=0)
        if total == 0:
            winners: list[str] = []
        elif best * 2 > total or len(continuing) <= 2:
            # Two left without a majority between them have equal votes: a tie.
            winners = [key for key in continuing if counts[key] == best]
        else:
            out, note = _eliminate(counts, history, by_key)
            rounds.append(Round(number, counts, out, exhausted, note))
            continuing = [key for key in continuing if key not in out]
            continue
        rounds.append(Round(number, counts, [], exhausted, ""))
        break
    table = {o.key: {"first": history[0].get(o.key, 0),
                     "final": history[last_in[o.key] - 1].get(o.key, 0)} for o in options}
    voters = len(ballots)
    if not ballots:
        return _nobody(rules.kind, options, table)
    standing = {key: (key in winners, last_in[key], c["final"]) for key, c in table.items()}
    # Winners first, then the options that lasted longer, then by votes in their last round.
    rows = _ranked_rows(options, table, standing.__getitem__, lambda c: c["final"],
                        voters)
    winners = [r.key for r in rows if r.key in winners]
    final = rounds[-1].counts
    top = max(final.values(), default=0)
    if not winners:
        lead = (f"No option wins: none of the above has {nota} of {voters} votes." if nota
                else "No option has any votes.")
    elif len(winners) == 1:
        lead = (f"{by_key[winners[0]].title} wins in round {len(rounds)}"
                f" with {top} of {voters} votes.")
    else:
        lead = (f"{_names([by_key[k].title for k in winners])} tie in round {len(rounds)}"
                f" with {top} of {voters} votes each.")
    share = Fraction(top, voters) if winners else None
    return _Count(rows, winners, lead, {}, nota, rounds, share)


def _eliminate(counts: Mapping[str, int], history: Sequence[Mapping[str, int]],
               by_key: Mapping[str, OptionKey]) -> tuple[list[str], str]:
    """Who goes after this round, and how a tie for fewest was broken (in words)."""
    fewest = min(counts.values())
    tied = [key for key, votes in counts.items() if votes == fewest]
    if len(tied) == 1:
        return tied, ""
    titles = _names([by_key[k].title for k in tied])
    if fewest == 0:
        return tied, f"{titles} had no votes and were eliminated together."
    start = f"{titles} tied for fewest votes ({fewest});"
    for number in range(len(history) - 1, 0, -1):
        earlier = history[number - 1]
        low = min(earlier[k] for k in tied)
        narrowed = [k for k in tied if earlier[k] == low]
        if len(narrowed) < len(tied):
            votes = ", ".join(f"{by_key[k].title} {earlier[k]}" for k in tied)
            which = "first preferences" if number == 1 else f"votes in round {number}"
            if len(narrowed) == 1:
                return narrowed, (f"{start} {by_key[narrowed[0]].title} had fewer {which}"
                                  f" ({votes}) and was eliminated.")
            tied = narrowed
            fewer = _names([by_key[k].title for k in tied])
            start = f"{start} {fewer} had fewer {which} ({votes});"
    loser = min(tied, key=lambda k: by_key[k].tiebreak)
    before = "no earlier round tells them apart" if len(history) == 1 else (
        "they tied in every earlier round too")
    return [loser], (f"{start} {before}, so {by_key[loser].title} was eliminated by lot"
                     " (the order drawn when the options were added).")


_Counter = Callable[[Rules, Sequence[OptionKey], Sequence[Mapping[str, Any]]], _Count]
_COUNTERS: dict[str, _Counter] = {
    "acceptance": _count_acceptance, "consent": _count_stances, "sense_check": _count_stances,
    "single_choice": _count_single, "score": _count_points, "dot_vote": _count_points,
    "ranked_choice": _count_ranked, "time_poll": _count_slots}

"""Where a decision stands: its tally (``tallies.tally``, for every kind), who took part out of
how many may, and whether its quorum and required share are met, in words for its pages.

An acceptance vote's ballots are read from its votes (one per voter: what they accept and
prefer), so its quorum is counted by the same rules as every other kind's. Results hidden until
close (``ballots.results_hidden``) leave out the tally's rows, stances, rounds and share: the
page says only how many took part.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select

from app.db import Query, read_many
from app.models.collab import Decision, Vote
from app.services import ballots, decision_kinds, eligibility, tallies


@dataclass(frozen=True)
class Standing:
    kind: str
    tally: tallies.Tally
    eligible: int
    hidden: bool  # results hidden until close: show only ``participation``
    titles: dict[str, str]  # option key -> title
    participation: str  # "4 of 9 eligible took part; quorum 5 — not met."
    share_line: str | None  # "Required share 60%: 67% — met." (None: no required share)

    @property
    def winners(self) -> list[str]:
        return [self.titles.get(k, k) for k in self.tally.winners]


def _accepted(rows: Any) -> list[dict[str, Any]]:
    by_voter: dict[uuid.UUID, dict[str, list[str]]] = {}
    for user_id, option_id, accepted, preferred in rows:
        ballot = by_voter.setdefault(user_id, {"accept": [], "prefer": []})
        if accepted:
            ballot["accept"].append(str(option_id))
        if preferred:
            ballot["prefer"].append(str(option_id))
    return list(by_voter.values())


def acceptance_ballots(decision: Decision) -> Query[list[dict[str, Any]]]:
    """An acceptance vote's ballots, one per voter, as ``tallies`` reads them."""
    return Query(_VOTES, {"decision_id": decision.id}, _accepted)


def percent(share: float) -> str:
    return f"{round(share * 100)}%"


def standing(decision: Decision) -> Standing:
    """The decision's standing now: three reads, in one round trip where it can."""
    cast = (acceptance_ballots(decision) if decision.kind == "acceptance"
            else ballots.ballots(decision))
    options, found, eligible = read_many(ballots.option_keys(decision), cast,
                                         eligibility.eligible(decision))
    rules = decision_kinds.rules_of(decision.kind, decision.settings or {}, eligible)
    tally = tallies.tally(rules, options, found)
    hidden = ballots.results_hidden(decision)
    return Standing(decision.kind, tally, eligible, hidden, {o.key: o.title for o in options},
                    _participation(tally, eligible),
                    None if hidden else _share(rules, tally))


def _participation(tally: tallies.Tally, eligible: int) -> str:
    line = f"{tally.voters} of {eligible} eligible took part"
    if tally.quorum_needed is not None:
        line += f"; quorum {tally.quorum_needed} — {'met' if tally.quorum_met else 'not met'}"
    return line + "."


def _share(rules: tallies.Rules, tally: tallies.Tally) -> str | None:
    if rules.required_share is None:
        return None
    line = f"Required share {percent(rules.required_share)}: "
    if tally.share is None:
        return line + "no votes yet."
    return line + f"{percent(tally.share)} — {'met' if tally.share_met else 'not met'}."


def outcome(decision: Decision) -> str:
    """The outcome in one sentence, for the close's notification and webhooks."""
    found = standing(decision)
    return found.tally.summary + " " + found.participation


_VOTES = select(Vote.user_id, Vote.option_id, Vote.accepted, Vote.preferred).where(
    Vote.decision_id == bindparam("decision_id"))

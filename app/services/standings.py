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
    return _took_part(tally.voters, eligible, tally.quorum_needed)


def _took_part(voters: int, eligible: int, needed: int | None) -> str:
    line = f"{voters} of {eligible} eligible took part"
    if needed is not None:
        line += f"; quorum {needed} — {'met' if voters >= needed else 'not met'}"
    return line + "."


@dataclass(frozen=True)
class Participation:
    """All an acceptance vote's page shows of its standing: who took part out of how many may,
    and the quorum (it has no required share nor hidden results)."""

    participation: str
    hidden: bool = False
    share_line: str | None = None


def participation(decision: Decision, voters: int, eligible: int) -> Participation:
    """An acceptance vote's participation from what its page read anyway (its voters, the
    eligible count): its page ranks the options with its own aggregate, so nothing is
    recounted ballot by ballot on each view."""
    rules = decision_kinds.rules_of(decision.kind, decision.settings or {}, eligible)
    return Participation(_took_part(voters, eligible, tallies.quorum_needed(rules)))


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

"""Counting every kind of decision (app/services/tallies.py) against worked examples with known
results, ties included, and properties that hold for any ballots."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.services.tallies import (
    KINDS,
    SCORE_MAX,
    SLOT_ANSWERS,
    STANCES,
    OptionKey,
    Rules,
    ballot_problems,
    quorum_needed,
    tally,
)

# The "Tennessee capital" electorate (Wikipedia, "Instant-runoff voting", and the same voters in
# "Plurality voting" and "Score voting"): 100 voters in four blocs by where they live.
MEMPHIS, NASHVILLE, CHATTANOOGA, KNOXVILLE = "m", "n", "c", "k"
TENNESSEE = [OptionKey(MEMPHIS, "Memphis", 40), OptionKey(NASHVILLE, "Nashville", 30),
             OptionKey(CHATTANOOGA, "Chattanooga", 20), OptionKey(KNOXVILLE, "Knoxville", 10)]
BLOCS = {MEMPHIS: (42, ["m", "n", "c", "k"]), NASHVILLE: (26, ["n", "c", "k", "m"]),
         CHATTANOOGA: (15, ["c", "k", "n", "m"]), KNOXVILLE: (17, ["k", "c", "n", "m"])}


def options(*titles: str) -> list[OptionKey]:
    """Options keyed by their title's first letter, tiebreak descending in the order given."""
    return [OptionKey(t[0].lower(), t, 100 - i) for i, t in enumerate(titles)]


def ranked(*groups: tuple[int, list[str]]) -> list[dict[str, Any]]:
    return [{"ranking": ranking} for n, ranking in groups for _ in range(n)]


def places(t: Any) -> dict[str, int | None]:
    return {r.key: r.place for r in t.rows}


# --- ranked choice ---------------------------------------------------------------------------

def test_ranked_choice_tennessee_knoxville_wins_in_round_3() -> None:
    # Wikipedia, "Instant-runoff voting", Tennessee example: Chattanooga (15) goes first, its
    # votes go to Knoxville (32); then Nashville (26), whose votes also reach Knoxville: 58-42.
    t = tally(Rules("ranked_choice"), TENNESSEE, ranked(*BLOCS.values()))
    assert [(r.number, r.counts, r.eliminated, r.exhausted) for r in t.rounds] == [
        (1, {"m": 42, "n": 26, "c": 15, "k": 17}, ["c"], 0),
        (2, {"m": 42, "n": 26, "k": 32}, ["n"], 0),
        (3, {"m": 42, "k": 58}, [], 0)]
    assert t.winners == [KNOXVILLE]
    assert t.summary == "Knoxville wins in round 3 with 58 of 100 votes."
    assert [(r.key, r.counts, r.place) for r in t.rows] == [
        ("k", {"first": 17, "final": 58}, 1), ("m", {"first": 42, "final": 42}, 2),
        ("n", {"first": 26, "final": 26}, 3), ("c", {"first": 15, "final": 15}, 4)]
    assert t.rows[0].share == 0.58 and t.share == 0.58
    assert all(r.note == "" for r in t.rounds)


def test_ranked_choice_exhausted_ballots_leave_the_majority_of_those_continuing() -> None:
    # The Tennessee voters, but Chattanooga's bloc ranks only Chattanooga: once it is out those
    # 15 ballots are exhausted, Knoxville (17) goes next, its ballots pass over Chattanooga to
    # Nashville, and Nashville wins with 43 of the 85 still counting (not of 100).
    blocs = dict(BLOCS, c=(15, ["c"]))
    t = tally(Rules("ranked_choice", required_share=0.5), TENNESSEE, ranked(*blocs.values()))
    assert [(r.counts, r.exhausted) for r in t.rounds] == [
        ({"m": 42, "n": 26, "c": 15, "k": 17}, 0), ({"m": 42, "n": 26, "k": 17}, 15),
        ({"m": 42, "n": 43}, 15)]
    assert t.winners == [NASHVILLE]
    # The required share is of all ballots: 43% is short of half.
    assert (t.share, t.share_met) == (0.43, False)
    assert t.summary == ("Nashville wins in round 3 with 43 of 100 votes."
                         " Required share not met: 43% of 50% needed.")


def test_ranked_choice_tie_for_fewest_broken_by_the_previous_round() -> None:
    # Round 3: Bus and Car tie on 7. Round 2 had Bus 7, Car 5, so Car goes (round 1 had them
    # level on 5, which is why the previous round, not the first preferences, decides).
    opts = options("Amble", "Bus", "Car", "Drive", "E-bike")
    ballots = ranked((10, ["a"]), (5, ["b"]), (5, ["c", "a"]), (2, ["d", "c"]), (1, ["d"]),
                     (2, ["e", "b"]))
    t = tally(Rules("ranked_choice"), opts, ballots)
    assert [(r.counts, r.eliminated) for r in t.rounds] == [
        ({"a": 10, "b": 5, "c": 5, "d": 3, "e": 2}, ["e"]),
        ({"a": 10, "b": 7, "c": 5, "d": 3}, ["d"]),
        ({"a": 10, "b": 7, "c": 7}, ["c"]),
        ({"a": 15, "b": 7}, [])]
    assert t.rounds[2].note == ("Bus and Car tied for fewest votes (7); Car had fewer votes in"
                                " round 2 (Bus 7, Car 5) and was eliminated.")
    assert [r.note for r in t.rounds if r.number != 3] == ["", "", ""]
    assert t.rounds[2].exhausted == 1
    assert t.winners == ["a"]
    assert t.summary == "Amble wins in round 4 with 15 of 25 votes."


def test_ranked_choice_tie_for_fewest_broken_by_first_preferences() -> None:
    # Round 2: Bus 7 and Car 7 (Drive's two ballots went to Car); Car had 6 first preferences
    # against Bus's 7, so Car goes and its ballots carry Bus past Amble.
    opts = options("Amble", "Bus", "Car", "Drive")
    ballots = ranked((10, ["a"]), (7, ["b"]), (6, ["c", "b"]), (1, ["d", "c"]), (1, ["d"]))
    t = tally(Rules("ranked_choice"), opts, ballots)
    assert [(r.counts, r.eliminated) for r in t.rounds] == [
        ({"a": 10, "b": 7, "c": 6, "d": 2}, ["d"]),
        ({"a": 10, "b": 7, "c": 7}, ["c"]),
        ({"a": 10, "b": 13}, [])]
    assert t.rounds[1].note == ("Bus and Car tied for fewest votes (7); Car had fewer first"
                                " preferences (Bus 7, Car 6) and was eliminated.")
    assert t.winners == ["b"]
    assert [r.exhausted for r in t.rounds] == [0, 1, 2]


def test_ranked_choice_tie_in_the_first_round_goes_by_lot() -> None:
    # Bus and Car tie in round 1, so nothing earlier tells them apart: the lower fixed tiebreak
    # (Car's, options() gives later options lower numbers) goes.
    opts = options("Amble", "Bus", "Car")
    t = tally(Rules("ranked_choice"), opts,
              ranked((4, ["a"]), (2, ["b", "c"]), (1, ["c", "b"]), (1, ["c"])))
    assert t.rounds[0].eliminated == ["c"]
    assert t.rounds[0].note == ("Bus and Car tied for fewest votes (2); no earlier round tells"
                                " them apart, so Car was eliminated by lot (the order drawn"
                                " when the options were added).")
    assert (t.rounds[1].counts, t.rounds[1].exhausted) == ({"a": 4, "b": 3}, 1)
    assert t.winners == ["a"]


def test_ranked_choice_unbreakable_final_tie_has_two_winners() -> None:
    opts = options("Amble", "Bus", "Car")
    t = tally(Rules("ranked_choice"), opts, ranked((3, ["a"]), (2, ["b"]), (1, ["c", "b"])))
    assert t.rounds[-1].counts == {"a": 3, "b": 3}
    assert t.winners == ["a", "b"]
    assert places(t) == {"a": 1, "b": 1, "c": 3}
    assert t.summary == "Amble and Bus tie in round 2 with 3 of 6 votes each."


def test_ranked_choice_options_without_votes_go_together() -> None:
    opts = options("Amble", "Bus", "Car", "Drive")
    t = tally(Rules("ranked_choice"), opts, ranked((2, ["a"]), (2, ["b"]), (1, ["d", "b"])))
    assert t.rounds[0].eliminated == ["c"]
    assert t.rounds[1].counts == {"a": 2, "b": 2, "d": 1}
    assert t.winners == ["b"]
    t = tally(Rules("ranked_choice"), options("Amble", "Bus", "Car", "Drive", "Eel"),
              ranked((3, ["a"]), (2, ["b"])))
    assert t.rounds[0].counts == {"a": 3, "b": 2, "c": 0, "d": 0, "e": 0}
    assert t.winners == ["a"]   # a majority in round 1: nobody needs eliminating
    t = tally(Rules("ranked_choice"), options("Amble", "Bus", "Car", "Drive", "Eel"),
              ranked((2, ["a"]), (2, ["b"]), (1, ["e", "a"])))
    assert (t.rounds[0].eliminated, t.rounds[0].note) == (
        ["c", "d"], "Car and Drive had no votes and were eliminated together.")
    assert places(t) == {"a": 1, "b": 2, "e": 3, "c": 4, "d": 4}


def test_ranked_choice_none_of_the_above() -> None:
    opts = options("Amble", "Bus")
    rules = Rules("ranked_choice", none_of_the_above=True, required_share=0.5)
    t = tally(rules, opts, ranked((3, ["a", "b"]), (2, ["b"])) + [{"none_of_the_above": True}] * 4)
    assert (t.voters, t.none_of_the_above) == (9, 4)
    assert t.rounds[0].counts == {"a": 3, "b": 2} and t.rounds[0].exhausted == 0
    assert t.winners == ["a"]
    assert t.share_met is False     # 3 of 9 ballots
    t = tally(rules, opts, [{"none_of_the_above": True}] * 2)
    assert t.winners == [] and [r.place for r in t.rows] == [None, None]
    assert t.summary.startswith("No option wins: none of the above has 2 of 2 votes.")


# --- single choice, score, dot vote ----------------------------------------------------------

def test_single_choice_tennessee_plurality_memphis() -> None:
    # Wikipedia, "Plurality voting": on first choices alone Memphis wins with 42%.
    ballots = [{"option": key} for key, (n, _) in BLOCS.items() for _ in range(n)]
    t = tally(Rules("single_choice", required_share=0.5), TENNESSEE, ballots)
    assert [(r.key, r.counts["votes"], r.place) for r in t.rows] == [
        ("m", 42, 1), ("n", 26, 2), ("k", 17, 3), ("c", 15, 4)]
    assert t.winners == [MEMPHIS]
    assert (t.share, t.share_met) == (0.42, False)
    assert t.summary == ("Memphis wins with 42 of 100 votes."
                         " Required share not met: 42% of 50% needed.")


def test_single_choice_tie_and_none_of_the_above() -> None:
    opts = options("Amble", "Bus", "Car")
    rules = Rules("single_choice", none_of_the_above=True)
    t = tally(rules, opts, [{"option": "a"}, {"option": "b"}, {"option": "b"}, {"option": "a"},
                            {"none_of_the_above": True}])
    assert t.winners == ["a", "b"]
    assert places(t) == {"a": 1, "b": 1, "c": 3}
    assert t.summary == "Amble and Bus tie with 2 of 5 votes each."
    t = tally(rules, opts, [{"option": "a"}] + [{"none_of_the_above": True}] * 2)
    assert (t.winners, t.none_of_the_above) == ([], 2)
    assert t.summary == "No option wins: none of the above has 2 of 3 votes."


def test_score_tennessee_nashville() -> None:
    # After Wikipedia, "Score voting": its Tennessee example rates the cities 0-10 and
    # Nashville wins; here those ratings are halved (rounding up) for our 0-5 scale, totals
    # worked by hand: Memphis 210, Nashville 310, Chattanooga 237, Knoxville 156.
    ratings = {MEMPHIS: {"m": 5, "n": 2, "c": 1, "k": 0},
               NASHVILLE: {"m": 0, "n": 5, "c": 2, "k": 1},
               CHATTANOOGA: {"m": 0, "n": 3, "c": 5, "k": 3},
               KNOXVILLE: {"m": 0, "n": 3, "c": 4, "k": 5}}
    ballots = [{"scores": ratings[key]} for key, (n, _) in BLOCS.items() for _ in range(n)]
    t = tally(Rules("score"), TENNESSEE, ballots)
    assert [(r.key, r.counts, r.place) for r in t.rows] == [
        ("n", {"total": 310, "scored": 100}, 1), ("c", {"total": 237, "scored": 100}, 2),
        ("m", {"total": 210, "scored": 100}, 3), ("k", {"total": 156, "scored": 100}, 4)]
    assert t.winners == [NASHVILLE]
    assert t.rows[0].share == 310 / (SCORE_MAX * 100)
    assert t.summary == "Nashville wins with 310 points from 100 voters."


def test_score_tie_and_unscored_options() -> None:
    opts = options("Amble", "Bus", "Car")
    t = tally(Rules("score"), opts, [{"scores": {"a": 5, "b": 2}}, {"scores": {"b": 3}},
                                     {"scores": {"a": 0, "c": 1}}])
    assert {r.key: r.counts for r in t.rows} == {"a": {"total": 5, "scored": 2},
                                                 "b": {"total": 5, "scored": 2},
                                                 "c": {"total": 1, "scored": 1}}
    assert t.winners == ["a", "b"]
    assert places(t) == {"a": 1, "b": 1, "c": 3}


def test_dot_vote_sums_dots() -> None:
    opts = options("Amble", "Bus", "Car")
    t = tally(Rules("dot_vote", dots=5), opts,
              [{"dots": {"a": 5}}, {"dots": {"b": 3, "c": 2}}, {"dots": {"b": 1, "a": 0}}])
    assert [(r.key, r.counts["dots"], r.share) for r in t.rows] == [
        ("a", 5, 5 / 11), ("b", 4, 4 / 11), ("c", 2, 2 / 11)]
    assert t.winners == ["a"]
    assert t.summary == "Amble wins with 5 of 11 dots."


# --- acceptance, time poll -------------------------------------------------------------------

def test_acceptance_ranks_by_accepted_then_preferred_then_tiebreak() -> None:
    opts = [OptionKey("a", "Amble", 1), OptionKey("b", "Bus", 2), OptionKey("c", "Car", 3),
            OptionKey("d", "Drive", 4)]
    ballots = [{"accept": ["a", "b", "c"], "prefer": ["a"]}, {"accept": ["a", "b", "c"]},
               {"accept": ["b", "c"], "prefer": ["b"]}, {"accept": []}]
    t = tally(Rules("acceptance"), opts, ballots)
    # Bus and Car tie on accepted (3) and preferred (Bus 1, Car 0) split them; Amble has fewer
    # acceptances despite a preference; Drive nobody accepted.
    assert [(r.key, r.counts, r.place) for r in t.rows] == [
        ("b", {"accepted": 3, "preferred": 1}, 1), ("c", {"accepted": 3, "preferred": 0}, 2),
        ("a", {"accepted": 2, "preferred": 1}, 3), ("d", {"accepted": 0, "preferred": 0}, 4)]
    assert t.winners == ["b"]
    assert t.rows[0].share == 0.75
    assert t.summary == "Bus wins with 3 of 4 accepting and 1 preferring."
    # Equal on both: the tiebreak orders the rows (higher first) but they share first place.
    t = tally(Rules("acceptance"), opts, [{"accept": ["a", "d"]}])
    assert [(r.key, r.place) for r in t.rows][:2] == [("d", 1), ("a", 1)]
    assert t.winners == ["d", "a"]


def test_time_poll_ranks_by_yes_then_maybe() -> None:
    opts = options("Monday", "Tuesday", "Wednesday", "Friday")
    ballots = [{"slots": {"m": "yes", "t": "maybe", "w": "yes", "f": "no"}},
               {"slots": {"m": "yes", "t": "maybe", "w": "yes"}},
               {"slots": {"m": "no", "t": "yes", "w": "maybe"}},
               {"slots": {"t": "maybe", "w": "no"}}]
    t = tally(Rules("time_poll"), opts, ballots)
    # Wednesday and Monday both have 2 yes; Wednesday's maybe puts it first. Tuesday has the
    # largest figure (1 + 3/2) but fewer yes, so it comes after them.
    assert [(r.key, r.counts, r.figure, r.place) for r in t.rows] == [
        ("w", {"yes": 2, "maybe": 1, "no": 1}, 2.5, 1),
        ("m", {"yes": 2, "maybe": 0, "no": 1}, 2.0, 2),
        ("t", {"yes": 1, "maybe": 3, "no": 0}, 2.5, 3),
        ("f", {"yes": 0, "maybe": 0, "no": 1}, 0.0, 4)]
    assert t.winners == ["w"]
    assert t.summary == "Wednesday wins with 2 yes and 1 maybe from 4 voters."
    t = tally(Rules("time_poll"), opts, [{"slots": {"m": "yes", "t": "yes", "w": "maybe"}}])
    assert t.winners == ["m", "t"]


# --- consent, sense check, quorum ------------------------------------------------------------

def test_consent_one_block_is_not_carried() -> None:
    ballots = ([{"stance": "agree"}] * 6 + [{"stance": "abstain"}]
               + [{"stance": "block", "reason": "It breaks our budget"}])
    t = tally(Rules("consent", required_share=0.5), [], ballots)
    assert t.stances == {"agree": 6, "abstain": 1, "disagree": 0, "block": 1}
    assert (t.blocked, t.carried, t.share, t.share_met) == (True, False, 6 / 7, True)
    assert t.summary == "Not carried: 6 agree, 1 abstain, 0 disagree, 1 block."
    assert (t.rows, t.winners) == ([], [])


def test_consent_carries_on_its_required_share() -> None:
    ballots = [{"stance": "agree"}] * 2 + [{"stance": "disagree", "reason": "too soon"}]
    t = tally(Rules("consent", required_share=0.66), [], ballots)
    assert (t.share, t.share_met, t.carried) == (2 / 3, True, True)
    assert t.summary == "Carried: 2 agree, 0 abstain, 1 disagree, 0 block."
    t = tally(Rules("consent", required_share=0.75), [], ballots)
    assert (t.share_met, t.carried) == (False, False)


def test_quorum_as_a_share_rounds_up() -> None:
    # Half of 7 eligible is 3.5 people: 4 are needed.
    rules = Rules("consent", eligible=7, quorum_share=0.5)
    assert quorum_needed(rules) == 4
    t = tally(rules, [], [{"stance": "agree"}] * 3)
    assert (t.quorum_needed, t.quorum_met, t.carried) == (4, False, False)
    assert t.summary == ("Not carried: 3 agree, 0 abstain, 0 disagree, 0 block."
                         " Quorum not met: 3 of 4 voters needed.")
    assert tally(rules, [], [{"stance": "agree"}] * 4).carried is True
    # A share as written: a tenth of 10 is 1, not 2 (0.1 is not exact in binary).
    assert quorum_needed(Rules("sense_check", eligible=10, quorum_share=0.1)) == 1
    # A number and a share: the larger.
    assert quorum_needed(Rules("score", eligible=10, quorum=3, quorum_share=0.2)) == 3
    assert quorum_needed(Rules("score", eligible=10, quorum=1, quorum_share=0.2)) == 2
    assert quorum_needed(Rules("score", quorum_share=0.5)) is None   # eligible unknown
    assert tally(Rules("score"), [], []).quorum_met is None


def test_sense_check_counts_every_stance() -> None:
    t = tally(Rules("sense_check"), [], [{"stance": "looks_good"}, {"stance": "concerned",
                                                                    "reason": "hm"}])
    assert t.stances == {"looks_good": 1, "not_sure": 0, "concerned": 1}
    assert (t.carried, t.blocked) == (None, False)
    assert t.summary == "1 looks good, 0 not sure, 1 concerned."


def test_nobody_voted() -> None:
    opts = options("Amble", "Bus", "Car")
    for kind in KINDS:
        t = tally(Rules(kind, quorum=2), opts, [])
        assert t.voters == 0 and t.winners == [] and t.summary == "Nobody has voted."
        assert t.quorum_met is False and t.carried in (None, False)
        if kind in STANCES:
            assert t.rows == [] and set(t.stances) == set(STANCES[kind])
            assert not any(t.stances.values())
        else:
            assert [(r.key, r.place, r.share) for r in t.rows] == [
                ("a", None, 0.0), ("b", None, 0.0), ("c", None, 0.0)]


def test_ballots_for_removed_options_count_as_far_as_they_fit() -> None:
    # Bus was removed after voting: rankings skip it, a single choice for it is not counted.
    opts = options("Amble", "Car")
    t = tally(Rules("ranked_choice"), opts, ranked((1, ["b", "c"]), (1, ["b"]), (1, ["a"])))
    assert (t.voters, t.uncounted, t.rounds[0].counts) == (2, 1, {"a": 1, "c": 1})
    t = tally(Rules("single_choice"), opts, [{"option": "b"}, {"option": "a"}, "junk"])  # type: ignore[list-item]
    assert (t.voters, t.uncounted, t.winners) == (1, 2, ["a"])


# --- one ballot's problems -------------------------------------------------------------------

OPTS = options("Amble", "Bus", "Car")


def test_ballot_problems_names_every_problem_with_its_path() -> None:
    assert ballot_problems(Rules("acceptance"), OPTS, {
        "accept": ["a", "a", "zz", 7], "prefer": ["b"], "vote": 1}) == [
        ("vote", "is not part of this ballot (it takes accept, prefer)"),
        ("accept[1]", "repeats 'Amble'"),
        ("accept[2]", "is not an option of this decision ('zz')"),
        ("accept[3]", "is an option's id (text)"),
        ("prefer[0]", "'Bus' is preferred but not accepted")]
    assert ballot_problems(Rules("consent"), OPTS, {"stance": "block", "reason": "  "}) == [
        ("reason", "is required to block")]
    assert ballot_problems(Rules("consent"), OPTS, {"stance": "yes", "reason": 3}) == [
        ("stance", "is one of agree, abstain, disagree, block (got 'yes')"),
        ("reason", "is text")]
    assert ballot_problems(Rules("dot_vote", dots=10), OPTS, {"dots": {"a": 7, "b": 5}}) == [
        ("dots", "at most 10 dots in all (placed 12)")]
    assert ballot_problems(Rules("score"), OPTS, {"scores": {"a": 6, "b": True, "q": 1}}) == [
        ("scores.a", "is a whole number from 0 to 5 (got 6)"),
        ("scores.b", "is a whole number from 0 to 5 (got True)"),
        ("scores.q", "is not an option of this decision ('q')")]
    assert ballot_problems(Rules("ranked_choice"), OPTS, {"ranking": ["c", "b", "c"],
                                                           "none_of_the_above": False}) == [
        ("ranking[2]", "repeats 'Car'")]
    assert ballot_problems(Rules("ranked_choice"), OPTS, {"ranking": ["a"],
                                                           "none_of_the_above": True}) == [
        ("none_of_the_above", "is not offered in this decision"),
        ("none_of_the_above", "cannot be given with ranking")]
    assert ballot_problems(Rules("time_poll"), OPTS, {"slots": {"a": "perhaps"}}) == [
        ("slots.a", "is yes, maybe or no (got 'perhaps')")]
    assert ballot_problems(Rules("single_choice"), OPTS, {}) == [("option", "is required")]
    assert ballot_problems(Rules("sense_check"), OPTS, {}) == [
        ("stance", "is required (one of looks_good, not_sure, concerned)")]
    assert ballot_problems(Rules("ranked_choice"), OPTS, {"ranking": []}) == [
        ("ranking", "rank at least one option")]
    assert ballot_problems(Rules("score"), OPTS, ["a"]) == [("", "a ballot is an object")]  # type: ignore[arg-type]
    assert ballot_problems(Rules("poll"), OPTS, {})[0][0] == "kind"


# --- properties ------------------------------------------------------------------------------

@st.composite
def election(draw: st.DrawFn) -> tuple[list[OptionKey], list[dict[str, Any]]]:
    n = draw(st.integers(1, 5))
    tiebreaks = draw(st.lists(st.integers(0, 2**31), min_size=n, max_size=n, unique=True))
    opts = [OptionKey(str(i), f"Option {i}", tiebreaks[i]) for i in range(n)]
    keys = [o.key for o in opts]
    ballot = st.one_of(
        st.permutations(keys).flatmap(lambda p: st.integers(1, len(p)).map(
            lambda k: {"ranking": list(p[:k])})),
        st.just({"none_of_the_above": True}))
    return opts, draw(st.lists(ballot, max_size=30))


# Drawing a whole election takes a while on a busy machine (the suite runs in parallel):
# that is not what these properties test.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(election())
def test_ranked_choice_winner_has_a_majority_of_continuing_ballots_unless_tied(
        case: tuple[list[OptionKey], list[dict[str, Any]]]) -> None:
    opts, ballots = case
    t = tally(Rules("ranked_choice", none_of_the_above=True), opts, ballots)
    if not ballots:
        assert t.rounds == [] and t.winners == []
        return
    last = t.rounds[-1]
    for r in t.rounds:
        # Every ranking ballot is either counted for a continuing option or exhausted.
        assert sum(r.counts.values()) + r.exhausted == t.voters - t.none_of_the_above
        assert r.eliminated or r is last
    if len(t.winners) == 1:
        assert 2 * last.counts[t.winners[0]] > sum(last.counts.values())
    elif t.winners:
        assert len(last.counts) == 2 and len(set(last.counts.values())) == 1
    else:
        assert not any(last.counts.values())
    gone = [k for r in t.rounds for k in r.eliminated]
    assert sorted(gone + list(last.counts)) == sorted(o.key for o in opts)


def ballots_for(kind: str, keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    some = st.lists(st.sampled_from(keys), min_size=1, unique=True)
    return {
        "acceptance": st.lists(st.sampled_from(keys), unique=True).flatmap(
            lambda acc: st.lists(st.sampled_from(acc), unique=True).map(
                lambda pre: {"accept": acc, "prefer": pre}) if acc else st.just({"accept": []})),
        "consent": st.sampled_from(STANCES["consent"]).map(
            lambda s: {"stance": s, "reason": "because"}),
        "sense_check": st.sampled_from(STANCES["sense_check"]).map(lambda s: {"stance": s}),
        "single_choice": st.sampled_from(keys).map(lambda k: {"option": k}),
        "score": st.dictionaries(st.sampled_from(keys), st.integers(0, SCORE_MAX),
                                 min_size=1).map(lambda d: {"scores": d}),
        "dot_vote": st.dictionaries(st.sampled_from(keys), st.integers(0, 3), min_size=1)
        .filter(lambda d: 0 < sum(d.values()) <= 10).map(lambda d: {"dots": d}),
        "ranked_choice": some.map(lambda r: {"ranking": r}),
        "time_poll": st.dictionaries(st.sampled_from(keys), st.sampled_from(SLOT_ANSWERS),
                                     min_size=1).map(lambda d: {"slots": d}),
    }[kind]


@st.composite
def any_tally(draw: st.DrawFn) -> tuple[str, list[OptionKey], list[dict[str, Any]]]:
    kind = draw(st.sampled_from(KINDS))
    opts = [OptionKey(k, f"Option {k}", i) for i, k in enumerate("abcd")]
    return kind, opts, draw(st.lists(ballots_for(kind, ["a", "b", "c", "d"]), max_size=12))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(any_tally())
def test_valid_ballots_have_no_problems_and_all_count(
        case: tuple[str, list[OptionKey], list[dict[str, Any]]]) -> None:
    kind, opts, ballots = case
    rules = Rules(kind)
    assert all(ballot_problems(rules, opts, b) == [] for b in ballots)
    t = tally(rules, opts, ballots)
    assert (t.voters, t.uncounted) == (len(ballots), 0)
    if kind in STANCES:
        assert sum(t.stances.values()) == len(ballots)
        return
    totals = {"acceptance": ("accepted", lambda b: len(b["accept"])),
              "single_choice": ("votes", lambda b: 1),
              "score": ("total", lambda b: sum(b["scores"].values())),
              "dot_vote": ("dots", lambda b: sum(b["dots"].values())),
              "ranked_choice": ("first", lambda b: 1),
              "time_poll": ("yes", lambda b: list(b["slots"].values()).count("yes"))}
    name, per_ballot = totals[kind]
    assert sum(r.counts[name] for r in t.rows) == sum(per_ballot(b) for b in ballots)
    assert sorted(r.key for r in t.rows) == ["a", "b", "c", "d"]
    assert all(0.0 <= r.share <= 1.0 for r in t.rows)
    placed = [r.place for r in t.rows]
    if t.winners:
        assert placed[0] == 1 and placed == sorted(placed)  # type: ignore[type-var]
        assert t.winners == [r.key for r in t.rows if r.place == 1]
    else:
        assert all(p is None for p in placed)

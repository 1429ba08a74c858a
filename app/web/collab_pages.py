"""Collaboration pages: decisions, commitments, cycles, and the heartbeat gate on studio pages."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, NamedTuple

from flask import Blueprint, Response, request

from app.actions import Context
from app.actions.ballots import known_part
from app.actions.collab import BALLOT_ACTIONS, known_options, known_participation
from app.actions.registry import ACTIONS
from app.db import read, read_many
from app.models.base import utcnow
from app.services import (
    ballots,
    commitments,
    cycles,
    deadlines,
    decision_calendar,
    decision_kinds,
    decisions,
    eligibility,
    heartbeats,
    items,
    outcomes,
    standings,
    studios,
)
from app.services.errors import Forbidden
from app.web import ballot_forms, chrome, core_pages, loaders
from app.web.auth import signed_in_reader
from app.web.pages import REFUSAL_WORDS, Page, form_state, page

bp = Blueprint("collab", __name__)


# Shared presentation ---------------------------------------------------------------------------

def _item_nav(ctx: Context, label: str) -> list[tuple[str, str]]:
    path = ctx.path.removesuffix("/settings").removesuffix("/close")
    return core_pages.studio_nav(ctx) + [(label, path)]


# Decisions -------------------------------------------------------------------------------------

VOTE_EXAMPLE_OPTIONS = 3  # the worked example names at most this many of the options


def vote_example(path: str, options: list[Any]) -> dict[str, str] | None:
    """A worked batch ``vote`` call on this decision's own options, as HTTP and MCP bodies.

    Agents otherwise vote option by option (one call each) or guess the ``votes`` shape; an
    example with real titles shows the one-call form: accept and prefer the first option,
    accept the second, leave the others unaccepted.
    """
    if not options:
        return None
    votes: list[dict[str, Any]] = []
    for i, option in enumerate(options[:VOTE_EXAMPLE_OPTIONS]):
        entry: dict[str, Any] = {"option_title": option.title, "accept": i < 2}
        if i == 0:
            entry["prefer"] = True
        votes.append(entry)
    # One vote a line: short enough to read, and still JSON to copy as it is.
    lines = ",\n".join("    " + json.dumps(v, ensure_ascii=False) for v in votes)
    params = f'{{"votes": [\n{lines}\n]}}'
    call = {"action": "vote", "path": path}
    return {
        "http": f"POST {path.rstrip('/')}/actions/vote\n{params}",
        "mcp": json.dumps(call, ensure_ascii=False)[:-1] + f', "params": {params}}}',
    }


@page(bp, "decision_new", "/studios/<handle>/decide",
      loaders.studio_page("decision_new", "/decide"))
def decision_new(ctx: Context) -> Page:
    members = read(studios.members(ctx.studio)) if ctx.studio else []
    return Page(ctx, "New decision", "decisions/new", {
        "kinds": [(kind, decision_kinds.LABELS[kind]) for kind in decision_kinds.KINDS],
        "members": [m for m in members if m.role != "guest"],
        "zone": cycles.zone_of(ctx.studio).key,
        "slot_kinds": decision_kinds.SLOT_KINDS, "stance_kinds": decision_kinds.STANCE_KINDS,
        "none_kinds": decision_kinds.NONE_OF_THE_ABOVE_KINDS,
        "share_kinds": decision_kinds.REQUIRED_SHARE_KINDS,
        "ballot_kinds": decision_kinds.BALLOT_KINDS,
        "dots_default": decision_kinds.DOTS_DEFAULT,
        **_sent_rows(form_state("create_decision")),
    }, nav=core_pages.studio_nav(ctx))


def _sent_rows(state: dict[str, Any] | None) -> dict[str, Any]:
    """A refused new decision's form keeps every time typed (and one empty row more) and
    opens the people it named."""
    sent = list((state or {}).get("values") or {})
    slots = [k for k in sent if k.startswith("slots[") and k.endswith("][starts_at]")]
    return {"slot_rows": max(3, len(slots) + 1),
            "voters_named": any(k.startswith("voters[handles]") for k in sent)}


@page(bp, "decision", "/studios/<handle>/d/<decision_id>",
      loaders.item_page("decision", "decision", "decision_id"))
def decision_show(ctx: Context) -> Page:
    decision = ctx.item
    acceptance = decision.kind == "acceptance"
    voters_read = (decisions.voters(decision) if acceptance
                   else ballots.participants(decision))
    results, mine, voters, eligible, pinned, comments, backlinks = read_many(
        decisions.results(decision), decisions.my_votes(decision, ctx.user), voters_read,
        eligibility.eligible(decision), studios.is_pinned(ctx.studio, "decision", decision.id),
        *core_pages.discussion(ctx))
    in_order = decisions.in_order_added(results)
    options = [row.option for row in in_order]
    # The vote and option actions ask the database nothing.
    known_options(ctx, in_order, ballots_cast=not acceptance and bool(voters))
    # An acceptance voter is whoever has votes: the caller took part if they have their own.
    took_part = ctx.user is not None and (bool(mine) if acceptance else
                                          any(v.id == ctx.user.id for v in voters))
    if not acceptance:
        known_part(ctx, took_part)
    shown = {
        "decision": decision,
        "closed": decision.closed,
        "deadline": chrome.deadline_text(decision, ctx.studio),
        "options": options,
        "vote_example": vote_example(ctx.path, options) if acceptance else None,
        "mine": mine,
        "results": results,
        "voters": voters,
        "can_add_options": decisions.can_add_options(
            decision, ctx.user, getattr(ctx.member, "role", None)),
        "pinned": pinned,
        "outcome": outcomes.shown(decision, options),  # decisions/_outcome: written, or None
        **core_pages.discussed(ctx, comments, backlinks),
        **(kind_shown(ctx, took_part) if not acceptance else {
            # The options in order added, each with the caller's own vote on it (or None).
            "options_mine": [(option, mine.get(option.id)) for option in options],
            "standing": standings.participation(decision, len(voters), eligible),
            "ballot_kind": "acceptance", "kind_label": decision_kinds.LABELS["acceptance"],
            "ballot_action": BALLOT_ACTIONS["acceptance"], "settings": decision.settings or {},
            "who_votes": eligibility.describe((decision.settings or {}).get("voters")),
            "took_part": took_part}),
    }
    return Page(ctx, decision.question, "decisions/show", shown, nav=core_pages.studio_nav(ctx))


def kind_shown(ctx: Context, took_part: bool) -> dict[str, Any]:
    """What a decision's page shows of its kind: the ballot and results it draws
    (decisions/ballots/<kind>, decisions/results/<kind>), its settings in words, where it
    stands, and the caller's own ballot."""
    decision = ctx.item
    settings = decision.settings or {}
    mine, reasons = (read_many(ballots.mine(decision, ctx.user), ballots.reasons(decision))
                     if decision.kind != "acceptance" else (None, []))
    standing = standings.standing(decision)
    action = BALLOT_ACTIONS[decision.kind]
    in_titles = ballots.in_titles(mine, standing.titles) if mine else None
    return {
        "ballot": ballot_forms.shown(in_titles, form_state(action)),
        "reasons": [] if standing.hidden else reasons,
        "choice_labels": [f"{ballot_forms.ordinal(n)} choice"
                          for n in range(1, len(standing.titles) + 1)],
        "ballot_kind": decision.kind, "kind_label": decision_kinds.LABELS[decision.kind],
        "ballot_action": action,
        "standing": standing, "settings": settings,
        "anonymous": ballots.anonymous(decision),
        "took_part": took_part,
        "my_ballot": json.dumps(in_titles, ensure_ascii=False) if in_titles else None,
        "who_votes": eligibility.describe(settings.get("voters")),
        "studio_zone": cycles.zone_of(ctx.studio).key,
        "who_proposes": (eligibility.describe(settings["proposers"]) + " and its creator"
                         if settings.get("proposers") else None),
    }


@page(bp, "decision_close", "/studios/<handle>/d/<decision_id>/close",
      loaders.item_page("decision_close", "decision", "decision_id", "/close"))
def decision_close(ctx: Context) -> Page:
    """The confirmation step before close_decision: what closing now would decide."""
    decision = ctx.item
    results, voters = read_many(decisions.results(decision), decisions.voters(decision)
                                if decision.kind == "acceptance"
                                else ballots.participants(decision))
    return Page(ctx, f"Close: {decision.question}", "decisions/close",
                {"decision": decision, "decision_path": ctx.path.removesuffix("/close"),
                 "results": results, "voters": voters,
                 "standing": standings.standing(decision),
                 "can_close": ACTIONS["close_decision"].refusal(ctx) is None},
                nav=_item_nav(ctx, f"Decision: {decision.question}"), show_actions=False)


@bp.get("/studios/<handle>/d/<decision_id>/calendar.ics")
def decision_calendar_file(handle: str, decision_id: str) -> Response:
    """A closed time poll's chosen time as an iCalendar file: the same checks as its page."""
    ctx = loaders.item_page("decision", "decision", "decision_id")(
        user=signed_in_reader(), handle=handle, decision_id=decision_id)
    body = decision_calendar.ics(ctx.item, request.host_url.rstrip("/") + ctx.path)
    response = Response(body, mimetype="text/calendar")
    response.headers["Content-Disposition"] = \
        f'attachment; filename="decision-{ctx.item.short_id}.ics"'
    response.headers["Cache-Control"] = "private, no-cache"
    return response


@page(bp, "decision_settings", "/studios/<handle>/d/<decision_id>/settings",
      loaders.item_page("decision_settings", "decision", "decision_id", "/settings"))
def decision_settings(ctx: Context) -> Page:
    return Page(ctx, f"Settings: {ctx.item.question}", "decisions/settings",
                {"decision": ctx.item, "deadline": chrome.deadline_text(ctx.item, ctx.studio),
                 "pinned": read(studios.is_pinned(ctx.studio, "decision", ctx.item.id))},
                nav=_item_nav(ctx, f"Decision: {ctx.item.question}"))


# Commitments -----------------------------------------------------------------------------------

@page(bp, "commitment_new", "/studios/<handle>/commit",
      loaders.studio_page("commitment_new", "/commit"))
def commitment_new(ctx: Context) -> Page:
    return Page(ctx, "New commitment", "commitments/new", nav=core_pages.studio_nav(ctx))


@page(bp, "commitment", "/studios/<handle>/c/<commitment_id>",
      loaders.item_page("commitment", "commitment", "commitment_id"))
def commitment_show(ctx: Context) -> Page:
    commitment = ctx.item
    # Everyone who joined, read once: the count, whether the caller is among them and the
    # join/leave actions' availability come from this list instead of three more queries.
    joined_by, pinned, comments, backlinks = read_many(
        commitments.participants(commitment),
        studios.is_pinned(ctx.studio, "commitment", commitment.id), *core_pages.discussion(ctx))
    joined = ctx.user is not None and any(p.user.id == ctx.user.id for p in joined_by)
    known_participation(ctx, joined)
    shown = {
        "commitment": commitment,
        "closed": commitment.closed,
        "deadline": chrome.deadline_text(commitment, ctx.studio),
        "progress": commitments.progress(commitment, joined=len(joined_by)),
        "participants": joined_by,
        "joined": joined,
        "pinned": pinned,
        **core_pages.discussed(ctx, comments, backlinks),
    }
    return Page(ctx, commitment.title, "commitments/show", shown,
                nav=core_pages.studio_nav(ctx))


@page(bp, "commitment_settings", "/studios/<handle>/c/<commitment_id>/settings",
      loaders.item_page("commitment_settings", "commitment", "commitment_id", "/settings"))
def commitment_settings(ctx: Context) -> Page:
    return Page(ctx, f"Settings: {ctx.item.title}", "commitments/settings",
                {"commitment": ctx.item, "deadline": chrome.deadline_text(ctx.item, ctx.studio),
                 "progress": commitments.progress(ctx.item),
                 "pinned": read(studios.is_pinned(ctx.studio, "commitment", ctx.item.id))},
                nav=_item_nav(ctx, f"Commitment: {ctx.item.title}"))


# Cycles ----------------------------------------------------------------------------------------

@page(bp, "cycles", "/studios/<handle>/cycles", loaders.studio_page("cycles", "/cycles"))
def cycle_index(ctx: Context) -> Page:
    return Page(ctx, f"Cycles of {ctx.studio.name}", "cycles/index",
                {"overview": cycles.overview(ctx.studio),
                 "current": cycles.current(ctx.studio)},
                nav=core_pages.studio_nav(ctx) + [("Cycles", f"/studios/{ctx.studio.handle}"
                                                              "/cycles")])


@loaders.joining
def _cycle_loader(user: loaders.Person, handle: str, cycle_name: str, **_: Any) -> Context:
    ctx = loaders.studio_ctx("cycle", user, handle, f"/cycles/{cycle_name}")
    ctx.extra["cycle"] = cycles.cycle(cycle_name, cycles.zone_of(ctx.studio))
    return ctx


def _cycle_href(ctx: Context, sort: str, filters: list[str] | tuple[str, ...]) -> str:
    """The cycle page's link with this sort and these filters, as ``urlencode`` writes it: every
    sort value and filter name is a word of letters, "-" and "_" (``parse_query`` refuses any
    other), so only the commas between filters are quoted."""
    href = f"{ctx.path}?sort={sort}"
    return f"{href}&filter={'%2C'.join(filters)}" if filters else href


def _filter_links(ctx: Context, query: cycles.Query) -> list[tuple[str, str, bool]]:
    """(label, href, active) for each filter: a click toggles it, keeping the sort."""
    result = []
    for name in cycles.FILTERS:
        active = name in query.filters
        chosen = [f for f in query.filters if f != name] + ([] if active else [name])
        result.append((name, _cycle_href(ctx, query.sort_param, chosen), active))
    return result


def _sort_links(ctx: Context, query: cycles.Query) -> list[tuple[str, str, bool]]:
    return [(value, _cycle_href(ctx, value, query.filters), value == query.sort_param)
            for value in ("created-desc", "created-asc", "deadline-asc", "deadline-desc")]


class CycleRow(NamedTuple):
    """An item of the cycle page's lists as both formats show it."""
    path: str
    title: str
    by: str  # its author's name
    created_at: datetime
    deadline: str  # in words, in the reader's zone


def _cycle_rows(ctx: Context, kind: str, found: list[Any], now: datetime) -> list[CycleRow]:
    # Every deadline is told against the "now" the lists were read with, in the reader's zone.
    studio, zone = ctx.studio, chrome.viewer_zone(ctx.studio)
    return [CycleRow(items.path_of(studio, kind, item), items.title_of(kind, item),
                     item.created_by.name, item.created_at,
                     deadlines.describe(item, studio, now=now, zone=zone)) for item in found]


@page(bp, "cycle", "/studios/<handle>/cycles/<cycle_name>", _cycle_loader)
def cycle_show(ctx: Context) -> Page:
    window: cycles.Cycle = ctx.extra["cycle"]
    query = cycles.parse_query(request.args)
    now = utcnow()
    # The three kinds' lists are read together.
    lists = cycles.items_in(ctx.studio, window, ctx.user, query, now=now)
    found = {kind: _cycle_rows(ctx, kind, answer, now)
             for kind, answer in zip(lists, read_many(*lists.values()), strict=True)}
    return Page(ctx, f"{window.label} in {ctx.studio.name}", "cycles/show", {
        "cycle": window, "query": query, "found": found,
        "filter_links": _filter_links(ctx, query), "sort_links": _sort_links(ctx, query),
        "names": list(cycles.NAMES), "shown_max": cycles.ITEMS_SHOWN,
    }, nav=core_pages.studio_nav(ctx) + [("Cycles", f"/studios/{ctx.studio.handle}/cycles")])


# The heartbeat gate, the studio home's links and the team page's heartbeat column ----------------

def heartbeat_gate(ctx: Context) -> None:
    """Members of a studio that requires heartbeats see only send_heartbeat until they send one."""
    if not heartbeats.needed(ctx.studio, ctx.user, ctx.member):
        return
    home = f"/studios/{ctx.studio.handle}"
    action_name = (request.view_args or {}).get("action_name")
    if ctx.page == "studio" and action_name in (None, "send_heartbeat"):
        ctx.extra["heartbeat_needed"] = True  # the home page shows only the heartbeat prompt
        return
    window = cycles.current(ctx.studio)
    raise Forbidden(f"this studio asks its members to check in every cycle: a heartbeat is a "
                    f"one-click check-in that tells the team you are here; send one for "
                    f"{window.label.lower()} ({window.span}) at {home} (action send_heartbeat), "
                    f"then come back", link=home)


def _last_heartbeats(latest: dict[Any, Any], users: list[studios.Teammate]) -> dict[Any, str]:
    return {user.id: latest[user.id].strftime("%Y-%m-%d %H:%M UTC") if user.id in latest
            else "never" for user in users}


loaders.STUDIO_GATES.append(heartbeat_gate)
REFUSAL_WORDS.update({name: ballot_forms.refusal for kind, name in BALLOT_ACTIONS.items()
                      if kind != "acceptance"})
core_pages.STUDIO_SECTIONS[1:1] = [("New decision", "decide"), ("New commitment", "commit"),
                                   ("Cycles", "cycles")]
core_pages.TEAM_DETAILS.append(("Last heartbeat", heartbeats.latest, _last_heartbeats))

"""Cycles: boundaries in a studio's time zone (Pacific/Auckland, America/Los_Angeles, across
DST changes), which items a cycle holds for relative and absolute deadlines, the cycle pages in
both formats, filters and sorting."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.db import read
from app.services import cycles
from tests.helpers import action_names, parse_md

AKL, LAX = ZoneInfo("Pacific/Auckland"), ZoneInfo("America/Los_Angeles")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(("zone", "now", "name", "start", "end"), [
    # 00:30 on Thursday 26 November in Auckland (NZDT, +13) is still Wednesday in UTC.
    (AKL, utc(2026, 11, 25, 11, 30), "today", utc(2026, 11, 25, 11), utc(2026, 11, 26, 11)),
    (AKL, utc(2026, 11, 25, 11, 30), "yesterday", utc(2026, 11, 24, 11), utc(2026, 11, 25, 11)),
    (AKL, utc(2026, 11, 25, 10, 59), "today", utc(2026, 11, 24, 11), utc(2026, 11, 25, 11)),
    # Same instant in Los Angeles (PST, -8): 03:30 on Wednesday.
    (LAX, utc(2026, 11, 25, 11, 30), "today", utc(2026, 11, 25, 8), utc(2026, 11, 26, 8)),
    (LAX, utc(2026, 11, 25, 11, 30), "tomorrow", utc(2026, 11, 26, 8), utc(2026, 11, 27, 8)),
    # DST ends in Auckland on 5 April 2026: that day has 25 hours.
    (AKL, utc(2026, 4, 5, 0), "today", utc(2026, 4, 4, 11), utc(2026, 4, 5, 12)),
    # DST starts in Los Angeles on 8 March 2026: that day has 23 hours.
    (LAX, utc(2026, 3, 8, 20), "today", utc(2026, 3, 8, 8), utc(2026, 3, 9, 7)),
    # Sunday 21:00 in Los Angeles is Monday in UTC: still the week that began on Monday 23rd.
    (LAX, utc(2026, 11, 30, 5), "this-week", utc(2026, 11, 23, 8), utc(2026, 11, 30, 8)),
    (ZoneInfo("UTC"), utc(2026, 11, 30, 5), "this-week", utc(2026, 11, 30), utc(2026, 12, 7)),
    (LAX, utc(2026, 11, 30, 5), "next-week", utc(2026, 11, 30, 8), utc(2026, 12, 7, 8)),
    # 00:30 on 1 December in Auckland: December already, while UTC is in November.
    (AKL, utc(2026, 11, 30, 11, 30), "this-month", utc(2026, 11, 30, 11), utc(2026, 12, 31, 11)),
    (AKL, utc(2027, 1, 10), "last-month", utc(2026, 11, 30, 11), utc(2026, 12, 31, 11)),
    (LAX, utc(2026, 12, 31, 20), "next-month", utc(2027, 1, 1, 8), utc(2027, 2, 1, 8)),
    (AKL, utc(2026, 12, 31, 12), "this-year", utc(2026, 12, 31, 11), utc(2027, 12, 31, 11)),
    (LAX, utc(2027, 1, 1, 7), "last-year", utc(2025, 1, 1, 8), utc(2026, 1, 1, 8)),
])
def test_cycle_boundaries(zone, now, name, start, end) -> None:  # type: ignore[no-untyped-def]
    window = cycles.cycle(name, zone, now)
    assert (window.start, window.end) == (start, end)
    assert window.contains(now) == (name in ("today", "this-week", "this-month", "this-year"))


def test_unknown_cycle_names_list_the_valid_ones() -> None:
    from app.services.errors import NotFound

    with pytest.raises(NotFound) as info:
        cycles.cycle("someday", AKL)
    assert "this-week" in info.value.message


def test_relative_deadlines_around_midnight_in_both_zones(app, studio) -> None:  # type: ignore[no-untyped-def]
    """A decision made at 23:40 local with deadline 30m belongs to today and tomorrow; with
    deadline 10m only to today. The same UTC instant falls on different days in each zone."""
    from app.extensions import db
    from app.models import Studio, User
    from app.models.collab import Decision
    from app.services import deadlines, decisions

    with app.app_context():
        alice = db.session.query(User).filter(User.handle == "alice").one()
        for handle, zone in (("akl", "Pacific/Auckland"), ("lax", "America/Los_Angeles")):
            from app.services import studios

            place = studios.create_studio(alice, handle=handle, name=handle, timezone=zone,
                                          heartbeats_required=False)
            local = ZoneInfo(zone)
            made = datetime(2026, 11, 26, 23, 40, tzinfo=local).astimezone(UTC)
            for question, relative in (("short", "10m"), ("long", "30m"), ("week", "1w")):
                item = decisions.create_decision(place, alice, question=question)
                item.created_at = made
                item.deadline = deadlines.parse(relative, local, now=made)
            db.session.flush()
            at = made + timedelta(minutes=1)
            today = cycles.cycle("today", local, at)
            tomorrow = cycles.cycle("tomorrow", local, at)
            in_today = {d.question for d in read(cycles.items_in(place, today, alice, now=at)
                                                 ["decision"])}
            in_tomorrow = {d.question for d in read(cycles.items_in(place, tomorrow, alice,
                                                                    now=at)["decision"])}
            assert in_today == {"short", "long", "week"}, handle
            assert in_tomorrow == {"long", "week"}, handle
            # A week later the 1w deadline is behind: 'closed' holds it, 'open' does not.
            later = made + timedelta(days=8)
            this_week = cycles.cycle("last-week", local, later)
            closed = cycles.items_in(place, this_week, alice, cycles.Query(("closed",)), later)
            assert {d.question for d in read(closed["decision"])} == {"short", "long", "week"}
        db.session.rollback()
        assert db.session.query(Decision).count() == 0
        assert db.session.query(Studio).filter(Studio.handle == "akl").count() == 0


def test_absolute_deadlines_in_local_time_over_http(studio, app) -> None:  # type: ignore[no-untyped-def]
    """ISO times without an offset are the studio's local time: 23:59 today stays in today,
    00:01 tomorrow reaches tomorrow; the same with explicit offsets and unix timestamps."""
    for zone in ("Pacific/Auckland", "America/Los_Angeles"):
        assert studio.act("/studios/team/settings", "update_studio_settings",
                          timezone=zone).status_code == 200
        local = ZoneInfo(zone)
        today = cycles.cycle("today", local)
        last_minute = (today.end - timedelta(minutes=1)).astimezone(local)
        first_minute = (today.end + timedelta(minutes=1)).astimezone(local)
        made = {}
        for label, deadline in (
                ("naive-before", last_minute.strftime("%Y-%m-%dT%H:%M")),
                ("naive-after", first_minute.strftime("%Y-%m-%dT%H:%M")),
                ("offset-after", first_minute.isoformat()),
                ("unix-before", int((today.end - timedelta(minutes=2)).timestamp()))):
            if label.endswith("before") and today.end - datetime.now(UTC) < timedelta(minutes=3):
                continue  # midnight is about to pass: "before midnight" is already history
            r = studio.act("/studios/team/decide", "create_decision",
                           question=f"{zone} {label}", deadline=deadline)
            assert r.status_code == 201, r.get_data(as_text=True)
            made[label] = r.json["location"]
        tomorrow_page = studio.get("/studios/team/cycles/tomorrow").get_data(as_text=True)
        for label, path in made.items():
            assert (path in tomorrow_page) == label.endswith("after"), (zone, label)
        today_page = studio.get("/studios/team/cycles/today").get_data(as_text=True)
        assert all(path in today_page for path in made.values())
        shown = (today.end + timedelta(minutes=1)).astimezone(local).strftime("%Y-%m-%d %H:%M")
        assert shown in studio.get(made["naive-after"]).get_data(as_text=True)


def test_relative_deadline_over_http_crosses_into_tomorrow(studio) -> None:  # type: ignore[no-untyped-def]
    assert studio.act("/studios/team/settings", "update_studio_settings",
                      timezone="Pacific/Auckland").status_code == 200
    today = cycles.cycle("today", AKL)
    minutes_left = math.floor((today.end - datetime.now(UTC)).total_seconds() / 60)
    after = studio.act("/studios/team/commit", "create_commitment", title="after",
                       critical_mass=1, deadline=f"{minutes_left + 30}m")
    assert after.status_code == 201
    page = studio.get("/studios/team/cycles/tomorrow").get_data(as_text=True)
    assert after.json["location"] in page
    if minutes_left > 31:  # room for a deadline before midnight
        before = studio.act("/studios/team/commit", "create_commitment", title="before",
                            critical_mass=1, deadline=f"{minutes_left - 30}m")
        page = studio.get("/studios/team/cycles/tomorrow").get_data(as_text=True)
        assert before.json["location"] not in page
        assert before.json["location"] in studio.get("/studios/team/cycles/today").get_data(
            as_text=True)


def test_cycle_pages_filters_and_sort(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    assert bob.act("/studios/team/join", "join_studio").status_code == 200
    mine = studio.act("/studios/team/decide", "create_decision", question="Mine soon",
                      deadline="2h").json["location"]
    theirs = bob.act("/studios/team/decide", "create_decision", question="Theirs later",
                     deadline="3d").json["location"]
    note = bob.act("/studios/team/note", "create_note", text="A note").json["location"]
    front, body = parse_md(studio.get("/studios/team/cycles/today").get_data(as_text=True))
    assert front["title"] == "Today in Team"
    assert {"create_note", "create_decision", "create_commitment"} <= set(
        a["name"] for a in front["actions"])
    assert "## Decisions (2)" in body and "## Notes (1)" in body and note in body

    def listed(query: str) -> str:
        r = studio.get(f"/studios/team/cycles/this-week?{query}")
        assert r.status_code == 200, r.get_data(as_text=True)
        return parse_md(r.get_data(as_text=True))[1]

    text = listed("filter=mine")
    assert mine in text and theirs not in text and note not in text
    text = listed("filter=not_mine")
    assert theirs in text and mine not in text
    text = listed("filter=closing_soon")
    assert mine in text and theirs not in text
    text = listed("filter=open&filter=mine")
    assert mine in text and theirs not in text
    text = listed("filter=closed")
    assert mine not in text and theirs not in text and note in text  # a note closes when written
    text = listed("sort=deadline-asc")
    assert text.index(mine) < text.index(theirs)
    text = listed("sort=deadline-desc")
    assert text.index(theirs) < text.index(mine)
    text = listed("sort=created")  # newest first
    assert text.index(theirs) < text.index(mine)
    r = studio.get("/studios/team/cycles/this-week?filter=bogus&sort=size",
                   accept="application/json")
    assert r.status_code == 422
    assert {e["param"] for e in r.json["error"]["errors"]} == {"filter", "sort"}
    assert studio.get("/studios/team/cycles/fortnight").status_code == 404
    html = studio.get("/studios/team/cycles/this-week?filter=mine", accept="text/html").get_data(
        as_text=True)
    assert 'aria-current="true"' in html and "Mine soon" in html and "Theirs later" not in html


def test_cycles_index_counts(studio) -> None:  # type: ignore[no-untyped-def]
    # An absolute deadline an hour away: in the last hour of a month it reaches into the
    # next one, and the next month's row counts these decisions too.
    deadline = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
    for question in ("one", "two"):
        studio.act("/studios/team/decide", "create_decision", question=question,
                   deadline=deadline.isoformat())
    reaching = "2" if deadline > cycles.cycle("next-month", ZoneInfo("UTC")).start else "0"
    studio.act("/studios/team/commit", "create_commitment", title="c", critical_mass=1,
               deadline="40d")
    front, body = parse_md(studio.get("/studios/team/cycles").get_data(as_text=True))
    assert front["title"] == "Cycles of Team"
    assert action_names(studio.get("/studios/team/cycles").get_data(as_text=True)) == []
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[3:6]]
            for line in body.splitlines() if line.startswith("| [")}
    assert rows["[this-week](/studios/team/cycles/this-week)"][1] == "2"
    assert rows["[next-month](/studios/team/cycles/next-month)"] == ["0", reaching, "1"]
    assert rows["[yesterday](/studios/team/cycles/yesterday)"] == ["0", "0", "0"]


ZONES = ("Pacific/Auckland", "America/Los_Angeles", "Pacific/Chatham", "Asia/Kathmandu",
         "America/Santiago", "Europe/London", "UTC")


@settings(max_examples=300, deadline=None)
@given(moment=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 1, 1),
                           timezones=st.just(UTC)),
       zone_name=st.sampled_from(ZONES))
def test_cycles_tile_time_and_start_at_local_midnight(moment: datetime, zone_name: str) -> None:
    zone = ZoneInfo(zone_name)
    for before, current, after in (("yesterday", "today", "tomorrow"),
                                   ("last-week", "this-week", "next-week"),
                                   ("last-month", "this-month", "next-month"),
                                   ("last-year", "this-year", "next-year")):
        a, b, c = (cycles.cycle(n, zone, moment) for n in (before, current, after))
        assert b.contains(moment)
        assert a.end == b.start and b.end == c.start  # no gap, no overlap
        local = b.start.astimezone(zone)
        # Midnight, unless the zone skipped midnight that day (DST at 00:00).
        assert (local.hour, local.minute) == (0, 0) or local.hour == 1
        if b.unit == "week":
            assert local.weekday() == 0


def test_a_cycles_notes_taken_from_the_newest_notes_are_the_ones_it_reads(app, studio) -> None:  # type: ignore[no-untyped-def]
    """The studio home hands items_in the notes it just read (notes.recent): whatever their
    number and however the window falls among them, the cycle's notes are those that
    items_in reads itself (notes before the window with a deadline inside it included)."""
    from app.extensions import db
    from app.models import User
    from app.services import notes, studios

    with app.app_context():
        alice = db.session.query(User).filter(User.handle == "alice").one()
        place = studios.create_studio(alice, handle="many", name="many", timezone="UTC",
                                      heartbeats_required=False)
        start = utc(2026, 11, 23)  # a Monday: this-week runs to the 30th
        for day in range(-6, 7):  # a week before, the week itself (some with deadlines)
            note = notes.create_note(place, alice, text=f"day {day}", title=f"day {day}")
            note.created_at = start + timedelta(days=day, hours=1)
            note.deadline = start + timedelta(days=2) if day in (-5, -2) else None
        db.session.flush()
        window = cycles.cycle("this-week", ZoneInfo("UTC"), utc(2026, 11, 26))
        found = [n.title for n in read(cycles.items_in(place, window, alice)["note"])]
        for read_limit in (1, 3, 7, 8, 13, 20):
            for limit in (1, 3, 7, 20):
                newest = read(notes.recent(place, limit=read_limit))
                taken = cycles.notes_among(newest, read_limit, window, limit)
                if taken is None:  # the newest may not hold them all: the page reads them
                    taken = read(cycles.items_in(place, window, alice, limit=limit)["note"])
                assert [n.title for n in taken] == found[:limit], (read_limit, limit)
        db.session.rollback()

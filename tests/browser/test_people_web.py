"""The people's web in a real Chromium, over a studio with every kind of content: no link
leads to a 404 or a 500, axe finds no serious or critical problem in either theme, no page
scrolls sideways at 390 px, a refused form comes back with its input and messages, and error
pages keep the signed-in person's header. Screenshots for the README land in
docs/screenshots/ when HARMONIC_SCREENSHOTS=1."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from flask import Flask

from tests.helpers import join_studio, log_in, open_studio

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PLAN = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) label "main"
    room Storage right-of Office size (4 x 4)
  }
"""
LONG_TITLE = "Supercalifragilistic" * 12  # one unbroken word, far wider than a phone


def seed(app: Flask, make_agent: Any) -> dict[str, str]:
    """A studio like the demo: notes with a comment, a decision with votes, a commitment, a
    floorplan, a taught playbook with a dry run, a workflow run. Returns their paths."""
    from tests.playbooks.conftest import rpc

    app.test_cli_runner().invoke(args=["design-model", "load-demo", "--reset"])
    alice = make_agent("alice", password="alice-password")
    open_studio(app, "alice")
    bob = join_studio(make_agent, "bob")
    paths: dict[str, str] = {}
    note = alice.act("/studios/team/note", "create_note", title="Plan for the week",
                     text="# Plan\n\nWe **ship** on Friday. See [the venue](/studios/team).")
    paths["note"] = note.get_json()["location"]
    bob.act(paths["note"], "add_comment", text="Sounds good.")
    long = alice.act("/studios/team/note", "create_note", title=LONG_TITLE, text=LONG_TITLE)
    paths["long_note"] = long.get_json()["location"]
    decision = alice.act("/studios/team/decide", "create_decision",
                         question="Where is the offsite?", deadline="7d",
                         options=["Lisbon", "Oslo", "Turin"])
    paths["decision"] = decision.get_json()["location"]
    bob.post(f"{paths['decision']}/actions/vote", json={"option_title": "Oslo", "accept": True})
    commitment = alice.act("/studios/team/commit", "create_commitment",
                           title="Book the venue", critical_mass=2, deadline="3d")
    paths["commitment"] = commitment.get_json()["location"]
    alice.act(paths["commitment"], "join_commitment")
    plan = alice.act("/studios/team/floorplans", "create_floorplan", name="office", dsl=PLAN)
    paths["floorplan"] = plan.get_json()["location"]
    started = alice.act("/playbooks", "start_teach", name="walls")
    short = started.get_json()["result"]["id"]
    rpc(alice, "update_wall_parameter", {"selector": {"category": "OST_Walls",
                                                      "typeName": "RC150", "levelName": "1FL"},
                                         "param": "Comments", "value": "Taught"})
    alice.act(f"/playbooks/{short}", "stop_teach")
    alice.act(f"/playbooks/{short}", "generate_recipe")
    dry = alice.act(f"/playbooks/{short}", "dry_run", args={"param_value": "Preview"})
    paths["playbook"] = f"/playbooks/{short}"
    paths["playbook_run"] = dry.get_json()["location"]
    run = alice.act("/workflows/studio-check", "run_workflow", inputs={"studio": "team"})
    paths["run"] = run.get_json()["location"]
    for key, value in paths.items():
        assert value.startswith("/"), (key, value)
    return paths


@pytest.fixture
def seeded(app: Flask, make_agent: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setitem(app.config, "WORKFLOWS_WORKER", "off")
    return seed(app, make_agent)


def page_kinds(paths: dict[str, str]) -> dict[str, str]:
    """One URL of every kind of page a member meets."""
    return {
        "home": "/", "studios": "/studios", "studio_new": "/studios/new",
        "studio": "/studios/team", "team": "/studios/team/team",
        "studio_settings": "/studios/team/settings", "backlinks": "/studios/team/backlinks",
        "note_new": "/studios/team/note", "note": paths["note"],
        "note_edit": paths["note"] + "/edit", "note_settings": paths["note"] + "/settings",
        "long_note": paths["long_note"],
        "decision_new": "/studios/team/decide", "decision": paths["decision"],
        "decision_settings": paths["decision"] + "/settings",
        "commitment_new": "/studios/team/commit", "commitment": paths["commitment"],
        "cycles": "/studios/team/cycles", "cycle": "/studios/team/cycles/this-week",
        "floorplans": "/studios/team/floorplans", "floorplan": paths["floorplan"],
        "floorplan_versions": paths["floorplan"] + "/versions",
        "user": "/u/alice", "user_settings": "/u/alice/settings",
        "tokens": "/u/alice/settings/tokens", "agent_activity": "/u/alice/agent-activity",
        "playbooks": "/playbooks", "playbook": paths["playbook"],
        "workflows": "/workflows", "workflow": "/workflows/studio-check", "run": paths["run"],
        "playbook_run": paths["playbook_run"],
        "actions_index": "/studios/team/actions",
        "action": "/studios/team/note/actions/create_note",
        "not_found": "/studios/team/n/00000000",
    }


# The crawler ----------------------------------------------------------------------------------

class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.hrefs.append(found["href"] or "")
        if tag == "link" and found.get("rel") == "alternate" and found.get("href"):
            self.hrefs.append(found["href"] or "")


def _pattern(path: str) -> str:
    """Pages of one kind share a pattern: ids and numbers become '*'."""
    parts = [re.sub(r"^(?:[0-9a-f]{8}|[0-9a-f-]{36}|\d+)$", "*", p) for p in path.split("/")]
    return "/".join(parts)


def test_every_internal_link_from_every_page_works(seeded, page, live_server) -> None:  # type: ignore[no-untyped-def]
    log_in(page, "alice", "alice-password")
    request = page.context.request
    queue, seen, per_pattern = ["/"], set(), {}  # type: ignore[var-annotated]
    seen_from: dict[str, str] = {}  # where each link was found, for the failure message
    broken: list[tuple[str, int | str, str]] = []
    fetched = 0
    while queue and fetched < 400:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        pattern = _pattern(path)
        if per_pattern.get(pattern, 0) >= 3:
            continue
        per_pattern[pattern] = per_pattern.get(pattern, 0) + 1
        response = request.get(path, max_redirects=5)
        fetched += 1
        if response.status == 404 or response.status >= 500:
            broken.append((path, response.status, seen_from.get(path, "")))
            continue
        if "text/html" not in response.headers.get("content-type", ""):
            continue
        text = response.text()
        if '<link rel="alternate" type="text/markdown"' not in text:
            broken.append((path, "no Markdown alternate", ""))
        links = _Links()
        links.feed(text)
        for href in links.hrefs:
            target = urlsplit(urljoin(live_server + path, href))
            if target.netloc != urlsplit(live_server).netloc or target.path.startswith("/static/"):
                continue
            full = target.path + (f"?{target.query}" if target.query else "")
            if full not in seen:
                seen_from.setdefault(full, path)
                queue.append(full)
    assert broken == [], broken
    # The crawl reached every kind of page from the home page by clicking alone.
    visited = {_pattern(p.split("?")[0]) for p in seen}
    for kind, url in page_kinds(seeded).items():
        if kind in ("not_found", "action"):
            continue
        assert _pattern(url) in visited, f"{kind} ({url}) is not reachable from the home page"
    assert fetched > 40



# Accessibility, themes, the phone -------------------------------------------------------------

# axe on the page as loaded, keeping only what this test fails on; the page's own
# prefers-color-scheme rules decide the colours axe's contrast rule reads.
AXE_RUN = """axe.run({resultTypes: ["violations"]}).then(r => r.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => [v.id, v.nodes.slice(0, 3).map(n => n.target)]))"""


def _axe_in_both_themes(page: Any, label: str) -> list[tuple[str, str, str, Any]]:
    """axe's serious and critical findings on the loaded page, in the light then the dark theme.

    One load and one injection of axe serve both themes: switching the emulated colour scheme
    re-applies the stylesheet's ``prefers-color-scheme`` rules in place (the theme is CSS only,
    without transitions). The body's background is read in each theme, so a switch that did not
    restyle the page fails here instead of checking the light theme twice."""
    from axe_playwright_python.base import AXE_SCRIPT

    page.evaluate(AXE_SCRIPT)
    problems, backgrounds = [], set()
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        backgrounds.add(page.evaluate("getComputedStyle(document.body).backgroundColor"))
        problems += [(scheme, label, rule, targets)
                     for rule, targets in page.evaluate(AXE_RUN)]
    assert len(backgrounds) == 2, f"{label}: the dark theme did not restyle the page"
    return problems


@pytest.mark.one_backend
def test_axe_finds_no_serious_problem_on_any_page_kind_in_either_theme(seeded, page) -> None:  # type: ignore[no-untyped-def]
    log_in(page, "alice", "alice-password")
    problems = []
    for kind, url in page_kinds(seeded).items():
        page.goto(url)
        problems += _axe_in_both_themes(page, kind)
    # And what a visitor sees before signing in.
    page.context.clear_cookies()
    for url in ("/", "/login", "/signup"):
        page.goto(url)
        problems += _axe_in_both_themes(page, url)
    assert problems == [], "\n".join(map(str, problems))


@pytest.mark.one_backend
def test_no_page_scrolls_sideways_at_390px(seeded, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(base_url=live_server, viewport={"width": 390, "height": 844})
    tab = context.new_page()
    try:
        log_in(tab, "alice", "alice-password")
        wide = []
        for kind, url in page_kinds(seeded).items():
            tab.goto(url)
            width = tab.evaluate("document.documentElement.scrollWidth")
            if width > 390:
                # Name the widest culprits, so a failure says what to fix.
                culprits = tab.evaluate("""[...document.querySelectorAll('body *')]
                    .filter(e => e.getBoundingClientRect().right > 391)
                    .slice(-3).map(e => e.tagName + '.' + e.className)""")
                wide.append((kind, width, culprits))
        assert wide == []
    finally:
        context.close()


@pytest.mark.one_backend
def test_screenshots_light_dark_and_phone(seeded, browser, live_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # HARMONIC_SCREENSHOTS=1 refreshes the README's pictures; otherwise they go to a temporary
    # folder, so an ordinary test run leaves the work tree clean.
    folder = SHOTS if os.environ.get("HARMONIC_SCREENSHOTS") else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    shots = {"studio": "/studios/team", "decision": seeded["decision"],
             "floorplan": seeded["floorplan"], "run": seeded["run"], "note": seeded["note"]}
    for scheme, viewport, suffix in (("light", {"width": 1200, "height": 900}, "light"),
                                     ("dark", {"width": 1200, "height": 900}, "dark"),
                                     ("light", {"width": 390, "height": 844}, "phone")):
        context = browser.new_context(base_url=live_server, viewport=viewport,
                                      color_scheme=scheme)
        tab = context.new_page()
        try:
            log_in(tab, "alice", "alice-password")
            for name, url in shots.items():
                tab.goto(url)
                target = folder / f"{name}-{suffix}.png"
                tab.screenshot(path=str(target), full_page=False)
                assert target.stat().st_size > 5000
        finally:
            context.close()


# Refused forms and error pages ----------------------------------------------------------------

def test_a_refused_form_comes_back_with_the_input_and_its_messages(app, make_agent, page) -> None:  # type: ignore[no-untyped-def]
    make_agent("hana", password="hana-password")
    open_studio(app, "hana")
    log_in(page, "hana", "hana-password")

    page.goto("/studios/new")
    form = page.locator("form[data-action=create_studio]")
    form.locator("[name=name]").fill("Hana's studio")
    form.locator("[name=handle]").fill("Bad Handle!")
    with page.expect_navigation() as nav:
        form.locator("button[type=submit]").click()
    assert nav.value.status == 422
    summary = page.get_by_role("alert")
    assert "nothing was saved" in summary.first.inner_text().lower()
    form = page.locator("form[data-action=create_studio]")
    assert form.locator("[name=name]").input_value() == "Hana's studio"
    assert form.locator("[name=handle]").input_value() == "Bad Handle!"
    handle = form.locator("[name=handle]")
    assert handle.get_attribute("aria-invalid") == "true"
    message = page.locator("#create_studio-handle-error")
    assert "a-z" in message.inner_text()
    assert "create_studio-handle-error" in (handle.get_attribute("aria-describedby") or "")
    # The summary links to the field; correcting it goes through.
    summary.first.locator("a[href='#create_studio-handle']").click()
    handle.fill("hana-s")
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    assert page.url.endswith("/studios/hana-s")

    page.goto("/studios/team/note")
    form = page.locator("form[data-action=create_note]")
    form.locator("[name=title]").fill("Empty inside")
    form.locator("[name=text]").fill("   \n  ")
    with page.expect_navigation() as nav:
        form.locator("button[type=submit]").click()
    assert nav.value.status == 422
    assert page.locator("form[data-action=create_note] [name=title]").input_value() == \
        "Empty inside"
    assert page.locator("#create_note-text-error").inner_text() == "is required"
    assert page.locator(".flash.success").count() == 0

    # A form the page draws itself (a floorplan's operations) comes back open, with its
    # message inside and what was typed put back.
    hana = app.test_client()
    made = hana.post("/studios/team/floorplans/actions/create_floorplan",
                     json={"name": "annex", "dsl": ""}, headers=_bearer(app, "hana"))
    assert made.status_code == 201, made.get_data(as_text=True)
    page.goto("/studios/team/f/annex")
    form = page.locator("form[data-action=add_room]")
    form.locator("[name=name]").fill("Bad Name!")
    with page.expect_navigation() as nav:
        form.locator("button[type=submit]").click()
    assert nav.value.status == 422
    form = page.locator("form[data-action=add_room]")
    assert form.locator("[name=name]").input_value() == "Bad Name!"
    assert "'Bad Name!' is not a valid room name" in form.locator("[role=alert]").inner_text()


def test_error_pages_keep_the_signed_in_person(app, make_agent, page) -> None:  # type: ignore[no-untyped-def]
    make_agent("hana", password="hana-password")
    make_agent("ivo")
    open_studio(app, "ivo", handle="ivos", name="Ivo's")
    log_in(page, "hana", "hana-password")
    for url, status in (("/studios/nope", 404), ("/u/ivo/settings", 403),
                        ("/studios/ivos/note", 403)):
        response = page.goto(url)
        assert response is not None and response.status == status, url
        header = page.locator("header.top")
        assert "Hana" in header.inner_text(), url
        assert header.locator("a[href='/login']").count() == 0, url
        assert page.locator("main [role=alert]").count() == 1, url
        assert page.locator("main a[href='/']").count() >= 1, url
    # A body over the size limit is refused before the identity loads: still Hana's header.
    limit = int(app.config.get("MAX_CONTENT_LENGTH") or 1_000_000)
    page.goto("/studios/ivos/join")
    too_big = page.evaluate(
        """async (size) => {
             const body = new URLSearchParams({text: "x".repeat(size)});
             const r = await fetch("/studios/team/note/actions/create_note",
                                   {method: "POST", body});
             return [r.status, await r.text()];
           }""", limit + 10)
    assert too_big[0] == 413
    assert "Hana" in too_big[1] and 'href="/login"' not in too_big[1]


def _bearer(app, handle: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A fresh token of ``handle``'s, as request headers."""
    from app.extensions import db
    from app.models import User
    from app.services import tokens

    with app.app_context():
        user = db.session.query(User).filter(User.handle == handle).one()
        _token, plaintext = tokens.create_token(user, name="browser test")
        db.session.commit()
    return {"Authorization": f"Bearer {plaintext}", "Accept": "application/json"}

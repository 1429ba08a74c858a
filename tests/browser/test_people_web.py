"""The people's web in a real Chromium, over a studio with every kind of content: no link
leads to a 404 or a 500; no people's page asks for an internal id or says an action's or a
parameter's name, a "default …" or API wording, and every action a page offers has its control
there, its form posting only the action's own parameters; axe finds no serious or critical
problem in either theme; no page scrolls sideways at 390 px; a refused form comes back with its
input and messages, and error pages keep the signed-in person's header. Screenshots for the
README land in docs/screenshots/ when HARMONIC_SCREENSHOTS=1."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from flask import Flask

from tests.helpers import log_in, open_studio

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
    bob = make_agent("bob", password="bob-password")
    assert bob.act("/studios/team/join", "join_studio").status_code == 200
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
    closed = alice.act("/studios/team/decide", "create_decision", question="Which caterer?",
                       deadline="7d", options=["Ana's kitchen", "Bo's bakery"])
    paths["decision_closed"] = closed.get_json()["location"]
    assert alice.act(paths["decision_closed"], "close_decision").status_code == 200
    assert alice.act(paths["decision_closed"], "write_outcome",
                     statement="Ana's kitchen, for the **offsite**. @bob confirms the menu.",
                     option_title="Ana's kitchen", review_at="30d").status_code == 200
    # A decision of each kind with its own ballot and results (issue 48).
    kinds = {"decision_consent": {"kind": "consent", "required_share": 0.5, "quorum": 2},
             "decision_ranked": {"kind": "ranked_choice", "options": ["Lisbon", "Oslo", "Turin"]},
             "decision_time": {"kind": "time_poll",
                               "slots": [{"starts_at": "2030-01-07T10:00", "minutes": 60}]},
             "decision_dots": {"kind": "dot_vote", "options": ["Lisbon", "Oslo"], "dots": 5},
             "decision_secret": {"kind": "single_choice", "options": ["Lisbon", "Oslo"],
                                 "anonymous": True, "hide_results": True,
                                 "none_of_the_above": True}}
    for key, settings in kinds.items():
        made = alice.act("/studios/team/decide", "create_decision",
                         question=f"Which way ({settings['kind']})?", **settings)
        paths[key] = made.get_json()["location"]
    assert bob.post(f"{paths['decision_consent']}/actions/respond_to_proposal",
                    json={"stance": "block", "reason": "Too soon"}).status_code == 200
    assert bob.post(f"{paths['decision_ranked']}/actions/rank_options",
                    json={"ranking": ["Turin", "Oslo"]}).status_code == 200
    assert bob.post(f"{paths['decision_dots']}/actions/place_dots",
                    json={"dots": [{"option_title": "Oslo", "dots": 3}]}).status_code == 200
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
    # Rows for every page's row controls: an agent, an invite, a deleted note, a second version.
    assert alice.act("/u/alice/settings/agents", "create_agent", handle="alices-helper",
                     name="Helper").status_code == 201
    assert alice.act("/studios/team/invites", "create_invite").status_code == 201
    spare = alice.act("/studios/team/note", "create_note", title="Old draft", text="Gone.")
    assert alice.act(spare.get_json()["location"], "delete_note").status_code == 200
    assert alice.act(paths["floorplan"], "resize_room", target="Storage", width=5,
                     height=4).status_code == 200
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
        "decision_closed": paths["decision_closed"],
        **{key: paths[key] for key in ("decision_consent", "decision_ranked", "decision_time",
                                       "decision_dots", "decision_secret")},
        "commitment_new": "/studios/team/commit", "commitment": paths["commitment"],
        "cycles": "/studios/team/cycles", "cycle": "/studios/team/cycles/this-week",
        "floorplans": "/studios/team/floorplans", "floorplan": paths["floorplan"],
        "floorplan_versions": paths["floorplan"] + "/versions",
        "user": "/u/alice", "user_settings": "/u/alice/settings",
        "tokens": "/u/alice/settings/tokens", "agent_activity": "/u/alice/agent-activity",
        "inbox": "/inbox", "notification_settings": "/u/alice/settings/notifications",
        "studio_webhooks": "/studios/team/webhooks",
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


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
READ_ALOUD = ("title", "aria-label", "placeholder", "alt")


class _Said(HTMLParser):
    """What a person reads on a page, and its forms. Left out: what people wrote themselves
    (``.prose``: rendered Markdown), source shown as it is (``pre``), scripts and styles."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.labels: dict[str, str] = {}
        self.forms: list[dict[str, Any]] = []
        self._stack: list[str] = []
        self._quiet_at: int | None = None
        self._label_for: str | None = None
        self._form: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag not in VOID:
            self._stack.append(tag)
            if self._quiet_at is None and (tag in ("script", "style", "pre") or "prose" in
                                           found.get("class", "").split()):
                self._quiet_at = len(self._stack)
        if self._quiet_at is None:
            self.text += [found[k] for k in READ_ALOUD if found.get(k)]
        if tag == "label":
            self._label_for = found.get("for") or None
        if tag == "form":
            action = found.get("action", "")
            self._form = {"action": action.rsplit("/actions/", 1)[-1] if "/actions/" in action
                          else None, "fields": [], "visible": []}
            self.forms.append(self._form)
        if tag == "button" and self._form is not None and found.get("formaction"):
            self._form.setdefault("also", []).append(found["formaction"].rsplit("/", 1)[-1])
        if tag in ("input", "select", "textarea") and found.get("name"):
            if self._form is not None:
                self._form["fields"].append(found["name"])
            if found.get("type") != "hidden" and self._form is not None:
                self._form["visible"].append((found["name"], found.get("id", ""),
                                              found.get("aria-label", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID or tag not in self._stack:
            return
        while self._stack:
            if self._quiet_at is not None and len(self._stack) <= self._quiet_at:
                self._quiet_at = None
            if self._stack.pop() == tag:
                break
        if tag == "label":
            self._label_for = None
        if tag == "form":
            self._form = None

    def handle_data(self, data: str) -> None:
        if self._quiet_at is None:
            self.text.append(data)
        if self._label_for:
            self.labels[self._label_for] = self.labels.get(self._label_for, "") + data


def _api_words() -> re.Pattern[str]:
    """Names only the API uses: every action's, every parameter's that is not a plain word
    (``comment_id``, ``relativePosition``), and the wording of schemas and defaults."""
    from app.actions.registry import ACTIONS

    def coined(name: str) -> bool:  # "comment_id", "relativePosition"; not "vote" or "text"
        return "_" in name or re.search(r"[a-z][A-Z]", name) is not None

    names = {name for name in ACTIONS if coined(name)}
    for act in ACTIONS.values():
        names |= {p.name for p in act.params if coined(p.name)}
    listed = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(rf"(?<![\w/.-])(?:{listed})(?![\w-])|\(default\b|\bdefault "
                      r"(?:true|false|\d)|unix timestamp|JSON Schema|\bparameters?\b|"
                      r"\binput_schema\b|\(action ")


ID_FIELD = re.compile(r"(?:^|_)id$|Id$|\bID\b|\bid\b")


def _people_problems(path: str, html: str) -> list[str]:
    """What a people's page must not have: API names and wording in what it says, an input
    that asks for an internal id, a form posting what its action does not take."""
    from app.actions.registry import ACTIONS, IGNORED_FORM_FIELDS

    said = _Said()
    said.feed(html)
    problems = [f"{path}: says {m.group(0)!r}"
                for m in _api_words().finditer(" ".join(said.text))]
    for form in said.forms:
        for name, ident, aria in form["visible"]:
            label = said.labels.get(ident, "") + " " + aria
            if ID_FIELD.search(name.split("[")[0]) or ID_FIELD.search(label):
                problems.append(f"{path}: a field asks for an id ({name}, {label.strip()!r})")
        for action in [form["action"], *form.get("also", [])]:
            if action is None or action not in ACTIONS:
                continue
            takes = {p.name for p in ACTIONS[action].params} | IGNORED_FORM_FIELDS
            strays = {f.split("[")[0] for f in form["fields"]} - takes
            if strays:
                problems.append(f"{path}: the {action} form posts {sorted(strays)}")
    return problems


def _pattern(path: str) -> str:
    """Pages of one kind share a pattern: ids and numbers become '*'."""
    parts = [re.sub(r"^(?:[0-9a-f]{8}|[0-9a-f-]{36}|\d+)$", "*", p) for p in path.split("/")]
    return "/".join(parts)


def _people_page(path: str) -> bool:
    """A page for people (an action's generic form, for agents and power users, is not)."""
    return "/actions" not in path and not path.endswith(".md")


def _undrawn(request: Any, path: str, html: str) -> list[str]:
    """Actions the page offers (its Markdown twin lists them) that it draws no control for."""
    from tests.helpers import parse_md

    answer = request.get(path, headers={"Accept": "text/markdown"})
    if answer.status != 200:
        return []
    offered = [a["name"] for a in parse_md(answer.text())[0]["actions"]]
    # The author of a note is not asked to confirm reading it; an app is disconnected on the
    # row it has once one is connected (this studio's people connected none).
    exempt = {"confirm_read"} if 'data-state="author"' in html else set()
    if "<tbody>" in html and "No connected apps." in html:
        exempt.add("disconnect_app")
    return [f"{path}: no control for {name}" for name in offered
            if name not in exempt and f'data-action="{name}"' not in html]


def test_every_internal_link_from_every_page_works(seeded, page, live_server) -> None:  # type: ignore[no-untyped-def]
    """The crawler, as a member (alice: she wrote most of it and is an admin, so every control
    shows), then as bob on every kind of page: no broken link; and no people's page asks for
    an id, says API names or leaves an offered action without its control."""
    log_in(page, "alice", "alice-password")
    request = page.context.request
    queue, seen, per_pattern = ["/"], set(), {}  # type: ignore[var-annotated]
    seen_from: dict[str, str] = {}  # where each link was found, for the failure message
    broken: list[tuple[str, int | str, str]] = []
    wording: list[str] = []
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
        if _people_page(path):
            wording += _people_problems(path, text)
            if per_pattern[pattern] == 1:
                wording += _undrawn(request, path, text)
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
    # Bob (a member who wrote little of it) on every kind of page.
    page.context.clear_cookies()
    log_in(page, "bob", "bob-password")
    for url in page_kinds(seeded).values():
        if not _people_page(url) or url.startswith("/u/alice"):
            continue
        answer = page.context.request.get(url)
        if "text/html" in answer.headers.get("content-type", ""):
            wording += _people_problems(url, answer.text())
            wording += _undrawn(page.context.request, url, answer.text())
    assert wording == [], "\n".join(wording)


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


def _too_wide(tab: Any) -> list[str]:
    """At a phone's width: the widest elements past the right edge, if the page scrolls
    sideways (so a failure says what to fix)."""
    if tab.evaluate("document.documentElement.scrollWidth") <= 390:
        return []
    return tab.evaluate("""[...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > 391)
        .slice(-3).map(e => e.tagName + '.' + e.className)""")


@pytest.mark.one_backend
def test_every_page_kind_in_both_themes_and_on_a_phone(  # type: ignore[no-untyped-def]
        seeded, browser, live_server, tmp_path) -> None:
    """One visit per kind of page: axe finds no serious or critical problem in the light or
    the dark theme, and at 390 px wide nothing scrolls sideways; the README's pictures are
    taken on the way (HARMONIC_SCREENSHOTS=1 writes them to docs/screenshots, otherwise to a
    temporary folder, so an ordinary run leaves the work tree clean)."""
    folder = SHOTS if os.environ.get("HARMONIC_SCREENSHOTS") else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    shots = {"studio": "studio", "decision": "decision", "floorplan": "floorplan",
             "run": "run", "note": "note", "notification_settings": "notifications"}
    wide_view, phone = {"width": 1200, "height": 900}, {"width": 390, "height": 844}
    context = browser.new_context(base_url=live_server, viewport=wide_view)
    tab = context.new_page()
    problems: list[Any] = []
    wide: list[tuple[str, list[str]]] = []

    def visit(kind: str, url: str) -> None:
        tab.set_viewport_size(wide_view)
        tab.goto(url)
        problems.extend(_axe_in_both_themes(tab, kind))
        for scheme in ("light", "dark"):
            if kind in shots:
                tab.emulate_media(color_scheme=scheme)
                tab.screenshot(path=str(folder / f"{shots[kind]}-{scheme}.png"))
        tab.emulate_media(color_scheme="light")
        tab.set_viewport_size(phone)
        culprits = _too_wide(tab)
        if culprits:
            wide.append((kind, culprits))
        if kind in shots:
            tab.screenshot(path=str(folder / f"{shots[kind]}-phone.png"))

    try:
        log_in(tab, "alice", "alice-password")
        for kind, url in page_kinds(seeded).items():
            visit(kind, url)
        # The header's menu on a phone holds what the wide header shows, and fits.
        tab.goto("/studios/team")
        tab.locator("details.person summary").click()
        assert tab.locator("details.person").get_by_role("link", name="Search").is_visible()
        assert _too_wide(tab) == []
        # And what a visitor sees before signing in.
        context.clear_cookies()
        for url in ("/", "/login", "/signup"):
            visit(url, url)
    finally:
        context.close()
    for name in shots.values():
        for suffix in ("light", "dark", "phone"):
            assert (folder / f"{name}-{suffix}.png").stat().st_size > 5000
    assert problems == [], "\n".join(map(str, problems))
    assert wide == []


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

"""People's journeys in a real Chromium, by clicking and typing: nothing typed is lost (a note
written while the session ended comes back after signing in; Back and Publish again makes no
second note) and each thing has its controls (a comment edited and deleted from its row, asked
first; a deleted note restored from its row; an inbox entry that opens at its comment and is
read, another marked read from its row); a note written with its live preview and answered by a
second person; a decision with three options typed at creation,
voted by two people in one submit each, closed after a confirmation, its outcome first; a
commitment reaching critical mass through join buttons, and a leave; a floorplan edited
through its fields with the drawing changing before it is saved, then compared and restored;
a token created, copied and revoked; a workflow run whose page follows the run without a
reload. The screenshots in docs/screenshots come from here (light, dark, 390 px)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from flask import Flask
from playwright.sync_api import expect

from tests.helpers import log_in, open_studio

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PLAN = """floorplan
  floor f1 {
    room Office at (0,0) size (10 x 12) label "main"
    room Storage right-of Office size (4 x 4)
  }
"""


def person(app: Flask, make_agent, browser, live_server: str, handle: str,  # type: ignore[no-untyped-def]
           studio_owner: bool = False, **context: object):
    """A signed-in tab of its own (own cookies) for ``handle``, a member of studio 'team'."""
    agent = make_agent(handle, password=f"{handle}-password-1")
    if studio_owner:
        open_studio(app, handle)
    else:
        assert agent.act("/studios/team/join", "join_studio").status_code == 200
    tab = browser.new_context(base_url=live_server, **context).new_page()
    tab.set_default_timeout(15000)
    log_in(tab, handle, f"{handle}-password-1")
    return tab


def shoot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """Light, dark and a 390 px phone: three pictures of the page as it is now (into
    docs/screenshots with HARMONIC_SCREENSHOTS=1, else a temporary folder, so an ordinary run
    leaves the work tree clean)."""
    folder = SHOTS if os.environ.get("HARMONIC_SCREENSHOTS") else Path(
        tempfile.gettempdir()) / "harmonic-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    page.emulate_media(color_scheme="light")
    page.screenshot(path=str(folder / f"{name}-light.png"), full_page=True)
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(folder / f"{name}-dark.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.emulate_media(color_scheme="light")
    # A phone shows the page without sideways scrolling.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(folder / f"{name}-390.png"), full_page=True)
    page.set_viewport_size(size)


def test_a_note_with_preview_and_a_comment(app, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    quinn = person(app, make_agent, browser, live_server, "quinn")
    pat.goto("/studios/team/note")
    form = pat.locator("form[data-action=create_note]")
    form.locator("[name=title]").fill("Friday plan")
    form.locator("[name=text]").fill("We **ship** on Friday.\n\n- tests\n- docs")
    preview = pat.locator("[data-preview]")
    expect(preview.locator("strong")).to_have_text("ship")  # rendered while typing
    expect(preview.locator("li")).to_have_count(2)
    form.locator("button[type=submit]").click()
    pat.wait_for_url("**/studios/team/n/*")
    note = "/" + pat.url.split("/", 3)[3]
    assert pat.locator(".prose strong").first.inner_text() == "ship"

    quinn.goto(note)
    comment = quinn.locator("form[data-action=add_comment]")
    comment.locator("[name=text]").fill("Count me in for the *docs*.")
    comment.locator("button[type=submit]").click()
    quinn.wait_for_load_state()
    pat.reload()
    assert "Count me in" in pat.locator(".comment").inner_text()
    assert pat.locator(".comment em").inner_text() == "docs"

    # An edit, then its history shows what changed.
    pat.click(f"a[href='{note}/edit']")
    text = pat.locator("form[data-action=update_note] [name=text]")
    text.fill("We **ship** on Monday.\n\n- tests\n- docs")
    expect(pat.locator("[data-preview]")).to_contain_text("Monday")
    pat.locator("form[data-action=update_note] button[type=submit]").click()
    pat.wait_for_url(f"**{note}")
    pat.click(f"a[href='{note}/history']")
    changes = pat.locator("section.version[data-number='2'] .diff")
    assert "We **ship** on Monday." in changes.locator("li.add").inner_text()
    assert "We **ship** on Friday." in changes.locator("li.del").inner_text()


def _notes_titled(app: Flask, title: str) -> int:
    from sqlalchemy import func, select

    from app.extensions import db
    from app.models import Note

    with app.app_context():
        return int(db.session.scalar(select(func.count()).select_from(Note).where(
            Note.title == title, Note.deleted_at.is_(None))) or 0)


def test_nothing_typed_is_lost_and_controls_are_where_the_thing_is(  # type: ignore[no-untyped-def]
        app, make_agent, browser, live_server) -> None:
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    quinn = person(app, make_agent, browser, live_server, "quinn")

    # The session ends while a note is being written: signing in again brings the note back.
    pat.goto("/studios/team/note")
    form = pat.locator("form[data-action=create_note]")
    form.locator("[name=title]").fill("Survives")
    form.locator("[name=text]").fill("Typed **before** the session ended.")
    pat.context.clear_cookies()
    form.locator("button[type=submit]").click()
    expect(pat.locator("#login-notice")).to_contain_text("Your session ended before this was sent")
    assert _notes_titled(app, "Survives") == 0
    pat.fill("#login", "pat")
    pat.fill("#password", "pat-password-1")
    pat.locator("form button[type=submit]").click()
    expect(pat.locator("#error-summary")).to_contain_text("the form as you left it")
    # The form's page, not the sign-in's (the page's script puts its address in the bar).
    expect(pat).to_have_url(f"{live_server}/studios/team/note")
    form = pat.locator("form[data-action=create_note]")
    assert form.locator("[name=title]").input_value() == "Survives"
    assert form.locator("[name=text]").input_value() == "Typed **before** the session ended."
    form.locator("button[type=submit]").click()
    pat.wait_for_url("**/studios/team/n/*")
    assert pat.locator("h1").first.inner_text() == "Survives"

    # Back after publishing, and Publish again: the note is shown, not made twice.
    pat.goto("/studios/team/note")
    form = pat.locator("form[data-action=create_note]")
    form.locator("[name=title]").fill("Once only")
    form.locator("[name=text]").fill("Sent twice by mistake.")
    form.locator("button[type=submit]").click()
    pat.wait_for_url("**/studios/team/n/*")
    once = urlsplit(pat.url).path
    pat.go_back()
    expect(pat).to_have_url(f"{live_server}/studios/team/note")
    form = pat.locator("form[data-action=create_note]")
    if not form.locator("[name=text]").input_value():  # the browser may not restore fields
        form.locator("[name=title]").fill("Once only")
        form.locator("[name=text]").fill("Sent twice by mistake.")
    form.locator("button[type=submit]").click()
    pat.wait_for_url(f"**{once}")
    expect(pat.locator(".flash.notice")).to_contain_text("sent before")
    assert _notes_titled(app, "Once only") == 1

    # Quinn comments twice on pat's note; pat's inbox entry opens at its comment, read.
    note = once
    for text in ("Frist!", "Second thought."):
        quinn.goto(note)
        comment = quinn.locator("form[data-action=add_comment]")
        comment.get_by_label("Add a comment").fill(text)
        comment.get_by_role("button", name="Comment").click()
        quinn.wait_for_url(f"**{note}#comment-*")
    pat.goto("/inbox")
    assert pat.locator("li.notification.unread").count() == 2
    first = pat.locator("li.notification.unread").last  # newest first: "Frist!" is last
    first.locator("button.entry").click()
    pat.wait_for_url(f"**{note}#comment-*")
    anchor = urlsplit(pat.url).fragment
    assert "Frist!" in pat.locator(f"#{anchor}").inner_text()
    assert pat.locator(".comment:target").count() == 1
    pat.goto("/inbox")
    assert pat.locator("li.notification.unread").count() == 1
    row = pat.locator("li.notification.unread")
    with pat.expect_navigation():
        row.get_by_role("button", name=re.compile("^Mark read")).click()
    assert pat.locator("li.notification.unread").count() == 0
    assert pat.locator(".unread-count").get_attribute("data-unread") == "0"

    # Quinn edits and deletes a comment from its row; deleting asks first.
    quinn.goto(note)
    mine = quinn.locator(".comment", has_text="Frist!")
    mine.get_by_text("Edit").click()
    mine.get_by_label("Your comment").fill("First!")
    mine.get_by_role("button", name="Save comment").click()
    quinn.wait_for_url(f"**{note}#comment-*")
    mine = quinn.locator(".comment", has_text="First!")
    expect(mine).to_contain_text("edited")
    mine.get_by_role("button", name="Delete the comment by Quinn").click()
    dialog = quinn.get_by_role("dialog")
    expect(dialog).to_contain_text("Delete this comment?")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    shoot(quinn, "confirm")
    dialog.get_by_role("button", name="Cancel").click()
    expect(mine).to_have_count(1)
    mine.get_by_role("button", name="Delete the comment by Quinn").click()
    with quinn.expect_navigation():
        dialog.get_by_role("button", name="Delete comment").click()
    expect(quinn.locator(".comment", has_text="First!")).to_have_count(0)
    assert "(action" not in quinn.locator(".flash").inner_text()

    # Pat deletes the note (asked first) and restores it from its row on the Deleted page.
    pat.goto(note)
    pat.get_by_role("button", name="Delete…").click()
    with pat.expect_navigation():
        pat.get_by_role("dialog").get_by_role("button", name="Delete note").click()
    pat.goto("/studios/team/deleted")
    row = pat.locator("table.deleted tr", has_text="Once only")
    row.get_by_role("button", name=re.compile("^Restore")).click()
    pat.wait_for_url(f"**{note}")
    assert pat.locator("h1").first.inner_text() == "Once only"
    assert _notes_titled(app, "Once only") == 1


def release(tab, held: list) -> None:  # type: ignore[no-untyped-def]
    """Let the held script through once its request has arrived (routing turns the browser's
    HTTP cache off, so it always does)."""
    for _ in range(300):
        if held:
            break
        tab.wait_for_timeout(50)
    assert held, "the page never asked for its script"
    held[0].continue_()


@pytest.mark.one_backend  # the page's script, not the database
def test_text_typed_before_the_preview_script_runs_is_previewed(  # type: ignore[no-untyped-def]
        app, make_agent, browser, live_server) -> None:
    """The preview script is deferred: text typed while it is still on its way fires no input
    event it hears, and the preview must not keep showing the saved text."""
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    pat.goto("/studios/team/note")
    form = pat.locator("form[data-action=create_note]")
    form.locator("[name=title]").fill("Friday plan")
    form.locator("[name=text]").fill("We ship on Friday.")
    form.locator("button[type=submit]").click()
    pat.wait_for_url("**/studios/team/n/*")
    held: list = []
    # The script's answer is held until the text is typed.
    pat.route("**/pages/markdown-preview.js", lambda route: held.append(route))
    pat.goto(pat.url + "/edit", wait_until="commit")
    pat.locator("form[data-action=update_note] [name=text]").fill("We **ship** on Monday.")
    expect(pat.locator("[data-preview]")).to_contain_text("Friday")  # the server's render
    release(pat, held)
    expect(pat.locator("[data-preview] strong")).to_have_text("ship")
    expect(pat.locator("[data-preview]")).to_contain_text("Monday")


@pytest.mark.one_backend  # the page's script, not the database
def test_fields_filled_before_the_floorplan_script_runs_are_drawn(  # type: ignore[no-untyped-def]
        app, make_agent, browser, live_server) -> None:
    """The same for the floorplan page: a room's fields filled in while its deferred script is
    on its way are drawn when it starts, and left as typed."""
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    assert make_agent("pat").act("/studios/team/floorplans", "create_floorplan", name="office",
                                 dsl=PLAN).status_code == 201
    held: list = []
    pat.route("**/pages/floorplan.js", lambda route: held.append(route))
    pat.goto("/studios/team/f/office", wait_until="commit")
    add = pat.locator("form[data-action=add_room]")
    add.get_by_label("Name").fill("Kitchen")
    add.get_by_label("Width").fill("10")
    add.get_by_label("Height").fill("6")
    add.get_by_label("Next to room").select_option("Office")
    add.get_by_label("Direction").select_option("below")
    release(pat, held)
    expect(pat.locator('[data-plan-drawing] svg rect.room[data-room="Kitchen"]')).to_have_count(1)
    assert add.get_by_label("Width").input_value() == "10"


def test_a_decision_from_options_to_outcome(app, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    quinn = person(app, make_agent, browser, live_server, "quinn")
    pat.goto("/studios/team")
    pat.click("a[href='/studios/team/decide']")
    form = pat.locator("form[data-action=create_decision]")
    form.locator("[name=question]").fill("Where is the offsite?")
    for i, place in enumerate(("Lisbon", "Oslo", "Porto")):
        form.get_by_label(f"Option {i + 1}.").fill(place)
    form.get_by_role("button", name="Add another option").click()  # a fourth row appears
    expect(form.locator("input[name='options[3]']")).to_be_focused()
    form.locator("button[type=submit]").click()
    pat.wait_for_url("**/studios/team/d/*")
    decision = "/" + pat.url.split("/", 3)[3]
    rows = pat.locator("form[data-action=vote] tr[data-option]")
    assert [rows.nth(i).get_attribute("data-option") for i in range(3)] == [
        "Lisbon", "Oslo", "Porto"]

    # Each person ticks several options and submits once.
    ballot = pat.locator("form[data-action=vote]")
    ballot.get_by_label("Accept: Lisbon").check()
    ballot.get_by_label("Accept: Oslo").check()
    ballot.get_by_label("Prefer: Oslo").check()
    ballot.get_by_role("button", name="Save my vote").click()
    pat.wait_for_load_state()
    quinn.goto(decision)
    ballot = quinn.locator("form[data-action=vote]")
    ballot.get_by_label("Accept: Oslo").check()
    ballot.get_by_label("Accept: Porto").check()
    ballot.get_by_label("Prefer: Porto").check()
    ballot.get_by_role("button", name="Save my vote").click()
    quinn.wait_for_load_state()
    assert quinn.locator("table.results tr[data-option='Oslo'] td.accepted").inner_text() == "2"
    assert quinn.locator("table.results tr[data-option='Lisbon'] td.accepted").inner_text() == "1"
    assert quinn.locator("table.results tr[data-option='Porto'] td.accepted").inner_text() == "1"
    assert quinn.locator("a[href$='/close']").count() == 0  # only the asker closes

    # Closing asks first; "keep it open" changes nothing.
    pat.reload()
    shoot(pat, "decision-ballot")
    pat.get_by_role("link", name="Close this decision…").click()
    pat.wait_for_url(f"**{decision}/close")
    assert "Oslo" in pat.locator("main").inner_text()
    pat.get_by_role("link", name="No, keep it open").click()
    pat.wait_for_url(f"**{decision}")
    assert pat.locator("article.decision").get_attribute("data-status") == "open"
    pat.get_by_role("link", name="Close this decision…").click()
    pat.get_by_role("button", name="Yes, close the decision").click()
    pat.wait_for_url(f"**{decision}")
    outcome = pat.locator("section.outcome")
    assert outcome.locator("[data-winner]").inner_text() == "Oslo"
    assert "accepted by 2" in outcome.inner_text() and "2 people voted" in outcome.inner_text()
    # The outcome comes first: above the description, the results and the comments.
    first_h2 = pat.locator("main h2").first.inner_text()
    assert first_h2 == "Outcome"
    assert pat.locator("form[data-action=vote]").count() == 0
    shoot(pat, "decision")
    # On a phone the results show every column without scrolling them sideways.
    pat.set_viewport_size({"width": 390, "height": 844})
    results = pat.locator("table.results")
    assert results.evaluate("t => t.scrollWidth <= t.clientWidth"), results.evaluate(
        "t => [t.scrollWidth, t.clientWidth]")


def test_an_option_renamed_and_removed_from_its_row(app, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    pat.goto("/studios/team/decide")
    form = pat.locator("form[data-action=create_decision]")
    form.locator("[name=question]").fill("Which day?")
    for i, day in enumerate(("Monday", "Tusday", "Friday")):
        form.get_by_label(f"Option {i + 1}.").fill(day)
    form.locator("button[type=submit]").click()
    pat.wait_for_url("**/studios/team/d/*")

    # The typo is fixed on its own row: nothing to pick, nothing to type again exactly.
    pat.get_by_text("Rename or remove an option").click()
    row = pat.locator("ul.option-rows li[data-option='Tusday']")
    row.get_by_label("New name for “Tusday”").fill("Tuesday")
    row.get_by_role("button", name="Rename").click()
    pat.wait_for_load_state()
    rows = pat.locator("form[data-action=vote] tr[data-option]")
    expect(rows).to_have_count(3)
    assert [rows.nth(i).get_attribute("data-option") for i in range(3)] == [
        "Monday", "Tuesday", "Friday"]

    # Removing asks first.
    pat.get_by_text("Rename or remove an option").click()
    pat.get_by_role("button", name="Remove the option Friday").click()
    with pat.expect_navigation():
        pat.get_by_role("dialog").get_by_role("button", name="Remove option").click()
    expect(rows).to_have_count(2)
    assert pat.locator("ul.option-rows li").evaluate_all(
        "rows => rows.map(r => r.dataset.option)") == ["Monday", "Tuesday"]


def test_a_commitment_reaches_critical_mass(app, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    quinn = person(app, make_agent, browser, live_server, "quinn")
    pat.goto("/studios/team/commit")
    form = pat.locator("form[data-action=create_commitment]")
    form.locator("[name=title]").fill("Book the venue")
    form.locator("[name=critical_mass]").fill("2")
    form.locator("button[type=submit]").click()
    pat.wait_for_url("**/studios/team/c/*")
    commitment = "/" + pat.url.split("/", 3)[3]
    bar = pat.get_by_role("progressbar", name="Participants toward critical mass")
    assert bar.get_attribute("aria-valuetext") == "0 of 2 needed"
    pat.get_by_role("button", name="Join this commitment").click()
    pat.wait_for_load_state()
    assert bar.get_attribute("aria-valuetext") == "1 of 2 needed"
    assert pat.get_by_role("button", name="Join this commitment").count() == 0

    quinn.goto(commitment)
    quinn.get_by_role("button", name="Join this commitment").click()
    quinn.wait_for_load_state()
    assert "Critical mass achieved" in quinn.locator(".progress-text").inner_text()
    assert quinn.locator("article.commitment").get_attribute("data-status") == \
        "critical_mass_achieved"
    # Quinn changes their mind: leaving takes the count back below critical mass.
    quinn.get_by_role("button", name="Leave").click()
    quinn.wait_for_load_state()
    assert "You left the commitment" in quinn.locator(".flash").inner_text()
    assert quinn.get_by_role("progressbar").get_attribute("aria-valuetext") == "1 of 2 needed"
    assert quinn.get_by_role("button", name="Join this commitment").count() == 1
    pat.reload()
    assert "1 more needed" in pat.locator(".progress-text").inner_text()


def rect_width(page, room: str) -> float:  # type: ignore[no-untyped-def]
    return float(page.locator(f'.plan-layout svg rect.room[data-room="{room}"]')
                 .get_attribute("width"))


def test_a_floorplan_edited_through_its_fields(app, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    agent = make_agent("pat")
    assert agent.act("/studios/team/floorplans", "create_floorplan", name="office",
                     dsl=PLAN).status_code == 201
    pat.goto("/studios/team/f/office")
    drawing = pat.locator("[data-plan-drawing] svg")
    assert drawing.locator("rect.room").count() == 2
    assert "Drawing of floorplan office" in drawing.get_attribute("aria-label")
    before = drawing.inner_html()

    # Add a room: the drawing shows it while the fields are filled in, before saving.
    add = pat.locator("form[data-action=add_room]")
    add.get_by_label("Name").fill("Kitchen")
    add.get_by_label("Width").fill("10")
    add.get_by_label("Height").fill("6")
    add.get_by_label("Next to room").select_option("Office")
    add.get_by_label("Direction").select_option("below")
    expect(pat.locator('[data-plan-drawing] svg rect.room[data-room="Kitchen"]')).to_have_count(1)
    assert drawing.inner_html() != before
    expect(pat.locator("[data-preview-status]")).to_contain_text("Preview, not saved yet")
    assert pat.locator("article.floorplan").get_attribute("data-version") == "1"
    add.get_by_role("button", name="Add room").click()
    pat.wait_for_load_state()
    assert "Saved version 2" in pat.locator(".flash").inner_text()
    assert pat.locator("tr.room-row").count() == 3

    # Resize: choosing the room fills its size in; typing a new width redraws it.
    pat.locator("details[data-op=resize_room] summary").click()
    resize = pat.locator("form[data-action=resize_room]")
    resize.get_by_label("Room").select_option("Storage")
    assert resize.get_by_label("Width").input_value() == "4"
    saved_width = rect_width(pat, "Storage")
    resize.get_by_label("Width").fill("8")
    expect(pat.locator("[data-preview-status]")).to_contain_text("8 x 4")
    assert rect_width(pat, "Storage") == pytest.approx(saved_width * 2)
    # A wrong value is explained, and the form is not sent.
    resize.get_by_label("Width").fill("-1")
    expect(pat.locator("[data-preview-status]")).to_contain_text("Fill in the fields")
    resize.get_by_label("Width").fill("8")
    expect(pat.locator("[data-preview-status]")).to_contain_text("8 x 4")
    resize.get_by_role("button", name="Resize room").click()
    pat.wait_for_load_state()
    assert "Saved version 3" in pat.locator(".flash").inner_text()
    shoot(pat, "floorplan")

    # Versions: compare the first with the current one, then restore the first.
    pat.get_by_role("link", name="Versions").first.click()
    pat.wait_for_url("**/versions")
    pat.get_by_label("Compare version").select_option("1")
    pat.get_by_label("with version").select_option("3")
    pat.get_by_role("button", name="Compare").click()
    pat.wait_for_url("**/compare?from=1&to=3")
    sides = pat.locator("figure.plan-side")
    assert sides.count() == 2
    assert sides.nth(0).locator("svg rect.room").count() == 2
    assert sides.nth(1).locator("svg rect.room").count() == 3
    assert "Kitchen" in pat.locator(".diff li.add").all_inner_texts()[0] or any(
        "Kitchen" in t for t in pat.locator(".diff li.add").all_inner_texts())
    pat.get_by_role("link", name="All versions").click()
    pat.get_by_role("button", name="Restore version 1").click()
    pat.wait_for_url("**/studios/team/f/office")
    assert "Restored version 1 as version 4" in pat.locator(".flash").inner_text()
    assert pat.locator("[data-plan-drawing] svg rect.room").count() == 2


def test_a_token_created_copied_and_revoked(app, make_agent, browser, live_server) -> None:  # type: ignore[no-untyped-def]
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True,
                 permissions=["clipboard-read", "clipboard-write"])
    pat.goto("/u/pat/settings/tokens")
    form = pat.locator("form[data-action=create_api_token]")
    form.locator("[name=name]").fill("my laptop")
    form.locator("button[type=submit]").click()
    pat.wait_for_load_state()
    token = pat.get_by_role("textbox", name="New token").input_value()
    assert token and len(token) > 20
    pat.get_by_role("button", name="Copy").click()
    expect(pat.locator(".new-token [role=status]")).to_have_text("Copied to the clipboard.")
    assert pat.evaluate("navigator.clipboard.readText()") == token
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/markdown"}
    assert httpx.get(f"{live_server}/studios", headers=headers).status_code == 200
    # Shown once: a reload no longer has it.
    pat.reload()
    assert pat.get_by_role("textbox", name="New token").count() == 0
    row = pat.locator("table.tokens tr", has_text="my laptop")
    row.get_by_role("button", name="Revoke my laptop").click()  # asks first
    with pat.expect_navigation():
        pat.get_by_role("dialog").get_by_role("button", name="Revoke token").click()
    assert pat.locator("table.tokens tr", has_text="my laptop").locator(".state").inner_text() \
        == "revoked"
    assert httpx.get(f"{live_server}/studios", headers=headers).status_code == 401


def test_a_run_page_follows_its_run(app, make_agent, browser, live_server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from app.workflows import runs
    from tests.workflows.conftest import FAST, drain

    for key, value in FAST.items():  # no worker thread: this test runs the queue itself
        monkeypatch.setitem(app.config, key, value)
    pat = person(app, make_agent, browser, live_server, "pat", studio_owner=True)
    pat.goto("/workflows/studio-check")
    form = pat.locator("form[data-action=run_workflow]")
    assert form.get_by_label("Studio").input_value() == "team"
    form.get_by_label("Welcome").fill("Hello from a person")
    form.get_by_role("button", name="Start a run").click()
    pat.wait_for_url("**/runs/*")
    status = pat.locator(".run-status")
    assert status.get_attribute("data-status") == "queued"
    short = re.search(r"/runs/([0-9a-f]{8})", pat.url).group(1)
    with app.app_context():
        run_id = runs.find(short)["id"]
    assert drain(app, run_id)["status"] == "succeeded"
    # No reload: the page polls its live part and says so in its status region.
    expect(pat.locator(".run-status")).to_have_attribute("data-status", "succeeded")
    expect(pat.locator("[data-live-note]")).to_have_text("Status: finished.")
    assert pat.locator("ol.events li[data-type=execution_completed]").count() == 1
    assert "---" not in pat.locator("ol.events").inner_text()
    shoot(pat, "run")

"""A decision's outcome over HTTP: refused while the decision is open (with the reason), to a
member who neither started it nor administers the studio, and for an option it does not have
(named); written by its creator or an admin, shown on the Markdown and HTML pages, its
@mentions and voters told, an edit kept in the history; its review date tells its people once
however many sweeps run at once, in their inbox and by email when they chose it; the action
through the official MCP SDK."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask

from tests.helpers import at_once, join_studio, open_studio, parse_md
from tests.notifications import test_mail
from tests.notifications.test_inbox import inbox
from tests.notifications.test_mail import body, queue_idle, with_confirmed_address

pytestmark = pytest.mark.data_layer  # a review is claimed by a conditional UPDATE: both databases
# A real SMTP server on loopback, as the email tests start it (and the settings it needs).
smtp, smtp_port = test_mail.smtp, test_mail.smtp_port


def rows_of(agent: Any, kind: str) -> list[dict[str, str]]:
    return [r for r in inbox(agent)[1] if r["kind"] == kind]


def closed_decision(studio: Any, voters: list[Any], question: str = "Where to eat?") -> str:
    """A decision with two options that each of ``voters`` accepted one of, closed by its
    creator; its path."""
    path = studio.act("/studios/team/decide", "create_decision", question=question,
                      options=["Pizza", "Salad"], deadline="1h").json["location"]
    for voter in voters:
        assert voter.act(path, "vote", votes=[{"option_title": "Salad", "accept": True}]
                         ).status_code == 200
    assert studio.act(path, "close_decision").status_code == 200
    return str(path)


def review_passed(app: Flask, path: str, ago: timedelta = timedelta(seconds=1)) -> None:
    """The outcome's review date at ``path`` came ``ago``."""
    from sqlalchemy import update

    from app.extensions import db
    from app.models.base import utcnow
    from app.models.collab import Decision

    with app.app_context():
        db.session.execute(update(Decision).where(Decision.short_id == path.rsplit("/", 1)[1])
                           .values(outcome_review_at=utcnow() - ago))
        db.session.commit()


def sweep_at_once(app: Flask, workers: int = 2) -> list[int]:
    """What ``workers`` workers' sweeps return when they run at the same moment."""
    from app.notifications import outcomes

    return at_once(app, outcomes.sweep, workers)


def test_an_outcome_waits_for_the_close_and_its_creator(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent) -> None:
    bob = join_studio(make_agent, "bob")
    path = studio.act("/studios/team/decide", "create_decision", question="Lunch?",
                      options=["Pizza", "Salad"], deadline="1h").json["location"]
    early = studio.act(path, "write_outcome", statement="Salad it is")
    assert early.status_code == 409
    assert "the decision is still open: an outcome is written once it has closed" \
        in early.json["error"]["message"]
    names = [a["name"] for a in parse_md(studio.get(path).get_data(as_text=True))[0]["actions"]]
    assert "write_outcome" not in names and "close_decision" in names
    assert studio.act(path, "close_decision").status_code == 200
    other = bob.act(path, "write_outcome", statement="I decide")
    assert other.status_code == 403
    assert "only the creator or a studio admin" in other.json["error"]["message"]
    bob_page = parse_md(bob.get(path).get_data(as_text=True))[0]
    assert "write_outcome" not in [a["name"] for a in bob_page["actions"]]
    # Every bad parameter is named at once: the option it does not have, a date in the past.
    bad = studio.act(path, "write_outcome", statement="  ", option_title="Sushi",
                     review_at="2020-01-01T10:00")
    assert bad.status_code == 422
    errors = {e["param"]: e["message"] for e in bad.json["error"]["errors"]}
    assert errors["option_title"] == "no option titled 'Sushi' (options: 'Pizza', 'Salad')"
    assert "must be in the future" in errors["review_at"]
    assert errors["statement"].startswith("is required")
    # An admin writes the outcome of a decision a member started.
    asked = bob.act("/studios/team/decide", "create_decision", question="Snacks?",
                    deadline="1h").json["location"]
    assert bob.act(asked, "close_decision").status_code == 200
    assert studio.act(asked, "write_outcome", statement="Fruit").status_code == 200


def test_an_outcome_is_written_shown_told_and_kept(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent) -> None:
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    make_agent("olga")  # not a member: her mention tells nobody
    path = closed_decision(studio, [bob])
    done = studio.act(path, "write_outcome", statement="We go with **salad**. @carol books, "
                      "@olga need not.", option_title="Salad", review_at="7d")
    assert done.status_code == 200, done.get_data(as_text=True)
    assert done.json["result"]["option_title"] == "Salad"
    front, text = parse_md(studio.get(path).get_data(as_text=True))
    assert "We go with **salad**. @carol books" in text
    assert re.search(r"^\| Salad \| \d{4}-\d\d-\d\d \d\d:\d\d UTC \| \[Alice\]\(/u/alice\) \|",
                     text, re.M), text
    offered = {a["name"]: a for a in front["actions"]}
    assert "write_outcome" in offered
    schema = studio.get(f"{path}/actions/write_outcome", accept="application/json").json
    assert "statement" in str(schema) and "review_at" in str(schema)
    # The voter hears of it; the mentioned member too; the writer and a non-member do not.
    told = rows_of(bob, "decision_outcome")
    assert len(told) == 1 and "@alice wrote the outcome of “Where to eat?” (“Salad”)" \
        in told[0]["text"]
    assert [r["text"] for r in rows_of(carol, "mention")] == [
        "@alice mentioned you in the outcome of “Where to eat?”"]
    assert rows_of(carol, "decision_outcome") == []  # she did not vote
    assert rows_of(studio, "decision_outcome") == [] and rows_of(studio, "mention") == []
    # Editing replaces it (the option is cleared when left out) and keeps the earlier one.
    again = studio.act(path, "write_outcome", statement="Pizza after all, @carol.")
    assert again.status_code == 200 and again.json["result"]["option_title"] is None
    text = parse_md(studio.get(path).get_data(as_text=True))[1]
    assert "Pizza after all" in text and "We go with" not in text
    history = studio.get(f"/studios/team/history?item=decision:{path.rsplit('/', 1)[1]}"
                         ).get_data(as_text=True)
    assert "outcome: We go with \\*\\*salad\\*\\*. @carol books, @olga need not. → Pizza " \
        "after all, @carol.; outcome_option: Salad → —" in history
    assert len(rows_of(bob, "decision_outcome")) == 1  # told once per decision
    assert len(rows_of(carol, "mention")) == 1  # once per person


def test_the_review_date_tells_each_person_once(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, monkeypatch) -> None:
    for key, value in {"WEBHOOKS_ALLOW": "loopback", "WORKFLOWS_WORKER": "off"}.items():
        monkeypatch.setitem(app.config, key, value)
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    hook = studio.act("/studios/team/webhooks", "create_webhook",
                      url="http://127.0.0.1:9/hook").json["result"]  # staged, never sent here
    path = closed_decision(studio, [bob])
    assert studio.act(path, "write_outcome", statement="Salad", option_title="Salad",
                      review_at="30d").status_code == 200
    assert sum(sweep_at_once(app)) == 0  # not yet
    review_passed(app, path)
    assert sorted(sweep_at_once(app)) == [0, 1]
    for agent in (studio, bob):  # its creator (and author), its voter
        told = rows_of(agent, "decision_review")
        assert len(told) == 1 and path in told[0]["link"]
        assert "Time to review the outcome of “Where to eat?” (“Salad”)" in told[0]["text"]
    assert rows_of(carol, "decision_review") == []  # took no part
    assert sweep_at_once(app) == [0, 0]
    assert len(rows_of(bob, "decision_review")) == 1
    assert "(its people were reminded)" in studio.get(path).get_data(as_text=True)
    # The edit form resends the date that came: it is kept, and not told again.
    form = studio.get(path, accept="text/html").get_data(as_text=True)
    kept = re.search(r'name="review_at" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    assert studio.act(path, "write_outcome", statement="Salad, still",
                      review_at=kept).status_code == 200
    assert sweep_at_once(app) == [0, 0]
    # A new date reminds again when it comes.
    assert studio.act(path, "write_outcome", statement="Salad, still",
                      review_at="14d").status_code == 200
    review_passed(app, path, timedelta(minutes=5))
    assert sorted(sweep_at_once(app)) == [0, 1]
    assert len(rows_of(bob, "decision_review")) == 2
    # The studio's webhooks hear of each outcome written (as of every action) and of each
    # review date that came, once.
    log = studio.get(f"/webhooks/{hook['id']}").get_data(as_text=True)
    assert log.count("| write_outcome |") == 3 and log.count("| decision_review |") == 2


def test_the_review_reaches_the_email_of_whoever_chose_it(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, smtp) -> None:
    bob = join_studio(make_agent, "bob")
    with_confirmed_address(app, smtp, bob, "bob@example.org")
    assert bob.act("/u/bob/settings/notifications", "set_notification_preference",
                   kind="decision_review", channel="email", enabled=True).status_code == 200
    path = closed_decision(studio, [bob], question="Office plants?")
    assert studio.act(path, "write_outcome", statement="Ferns", review_at="2w").status_code \
        == 200
    review_passed(app, path)
    assert sum(sweep_at_once(app)) == 1
    queue_idle(app)
    mails = [m for m in smtp.mailbox.to("bob@example.org")
             if "review" in str(m["Subject"]).lower()]
    assert len(mails) == 1, [str(m["Subject"]) for m in smtp.mailbox.to("bob@example.org")]
    assert "Office plants?" in str(mails[0]["Subject"]) and path in body(mails[0])
    assert len(rows_of(bob, "decision_review")) == 1  # the inbox too


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]


def test_a_person_writes_the_outcome_on_the_page(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    hana = make_agent("hana", password="hana-password")
    open_studio(app, "hana", handle="hs", name="Hana's")
    path = hana.act("/studios/hs/decide", "create_decision", question="Paint?",
                    options=["Blue", "Green"], deadline="1h").json["location"]
    browser = app.test_client()
    page = browser.get("/login").get_data(as_text=True)
    assert browser.post("/login", data={"login": "hana", "password": "hana-password",
                                        "csrf_token": _csrf(page)}).status_code == 303
    assert 'data-action="write_outcome"' not in browser.get(path).get_data(as_text=True)
    assert hana.act(path, "close_decision").status_code == 200
    page = browser.get(path).get_data(as_text=True)
    assert 'data-action="write_outcome"' in page and "Write the outcome" in page
    assert "write_outcome" not in re.sub(r"<[^>]*>", "", page)  # no action name in its words
    form = {"csrf_token": _csrf(page), "statement": "Green, *softly*. <script>x()</script>",
            "option_title": "Green", "review_at": ""}
    key = re.search(r'name="form_key" value="([^"]+)"', page)
    if key:
        form["form_key"] = key.group(1)
    done = browser.post(f"{path}/actions/write_outcome", data=form)
    assert done.status_code == 303, done.get_data(as_text=True)
    page = browser.get(path).get_data(as_text=True)
    assert "<em>softly</em>" in page and "<script>x()" not in page
    assert 'data-outcome-option="Green"' in page and "Edit the outcome" in page
    from tests.browser.test_people_web import _people_problems  # lazy: the crawl's own check

    assert _people_problems(path, page) == []  # no API words, no stray fields


def test_write_outcome_over_mcp(app: Flask, studio, make_agent, live_server: str) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.clients import http_client, run, text_of

    path = closed_decision(studio, [])

    async def scenario() -> None:
        async with http_client(live_server, studio.token) as client:
            done = await client.call_tool("execute_action", {
                "action": "write_outcome", "path": path,
                "params": {"statement": "Salad, said over MCP", "option_title": "Salad"}})
            assert not done.is_error, text_of(done)
            assert done.structured_content["result"]["option_title"] == "Salad"
            wrong = await client.call_tool("execute_action", {
                "action": "write_outcome", "path": path,
                "params": {"statement": "x", "option_title": "Tofu"}})
            assert wrong.is_error and "no option titled 'Tofu'" in text_of(wrong)

    run(scenario)
    assert "Salad, said over MCP" in studio.get(path).get_data(as_text=True)

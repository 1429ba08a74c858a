"""Automations through their doors: a decision's close runs a workflow once with the event's
data; a rule that triggers itself stops at the depth bound; an inbound webhook fires only with
a good signature (and once per signed call); a rule that fires too often is paused and its
owner told; the rule's page shows each firing (a browser with its cookie and CSRF token)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.helpers import open_studio

HERE = Path(__file__).resolve().parent


@pytest.fixture
def auto(app: Flask, monkeypatch: pytest.MonkeyPatch) -> Flask:
    for key, value in {"WORKFLOWS_WORKER": "off", "WORKFLOWS_POLL_SECONDS": "0.05",
                       "WORKFLOWS_RETRY_SECONDS": "0.05", "WORKFLOWS_PYTHON_INLINE": "on",
                       "WORKFLOWS_DIR": str(HERE), "AUTOMATIONS_SWEEP_SECONDS": "0.01",
                       "DEADLINES_SWEEP_SECONDS": "0.01"}.items():
        monkeypatch.setitem(app.config, key, value)
    return app


def work(app: Flask, rounds: int = 20) -> None:
    """What a worker does: its periodic tasks (the automations' sweep among them), then jobs."""
    from app.workflows.worker import Worker

    worker = Worker(app, "test-worker")
    for _ in range(rounds):
        with app.app_context():
            worker.clock.run_due()
        while worker.run_once():
            pass
        time.sleep(0.02)


def add_rule(agent: Any, **params: Any) -> dict[str, Any]:
    made = agent.act("/studios/team/automations", "create_automation", **params)
    assert made.status_code == 201, made.get_data(as_text=True)
    return made.json["result"]  # type: ignore[no-any-return]


def firings(agent: Any, rule: dict[str, Any]) -> list[dict[str, str]]:
    """The firings table of the rule's page, read as Markdown."""
    page = agent.get(f"/studios/team/automations/{rule['id']}").get_data(as_text=True)
    rows = []
    for line in page.split("## Firings", 1)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9a-f]{8}", cells[0]):
            rows.append(dict(zip(("id", "fired", "trigger", "depth", "status", "outcome"),
                                 cells, strict=True)))
    return rows


def test_a_decision_closing_runs_the_workflow_once_with_its_data(auto: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    rule = add_rule(studio, name="Echo closes", trigger="event", event="decision_closed",
                    effect="workflow", workflow="auto-echo")
    made = studio.act("/studios/team/decide", "create_decision", question="Where to eat?",
                      options=["Pizza", "Salad"], deadline="2h")
    path = made.json["location"]
    short = path.rsplit("/", 1)[1]
    assert studio.act(path, "close_decision").status_code == 200
    work(auto)
    rows = firings(studio, rule)
    assert len(rows) == 1 and rows[0]["status"] == "done", rows
    assert "Where to eat?" in rows[0]["trigger"] and rows[0]["depth"] == "0"
    run = re.search(r"started run ([0-9a-f]{8}) of auto-echo", rows[0]["outcome"]).group(1)  # type: ignore[union-attr]
    shown = studio.get(f"/runs/{run}", accept="application/json").json
    text = json.dumps(shown)
    assert "succeeded" in text and short in text and "Where to eat?" in text
    # The close is acted on once: the deadline sweep and more work fire nothing more.
    work(auto)
    assert len(firings(studio, rule)) == 1


def test_a_rule_that_triggers_itself_stops_at_the_depth_bound(auto: Flask, studio,  # type: ignore[no-untyped-def]
                                                              monkeypatch) -> None:
    monkeypatch.setitem(auto.config, "AUTOMATIONS_MAX_DEPTH", "2")
    rule = add_rule(studio, name="Echo notes", trigger="event", event="note_created",
                    effect="action", do="create_note", at="/studios/team/note",
                    params={"title": "echo", "text": "echo of {{ title }}"})
    assert studio.act("/studios/team/note", "create_note", title="first",
                      text="hello").status_code == 201
    work(auto, rounds=30)
    rows = sorted(firings(studio, rule), key=lambda r: r["depth"])
    # A person's note (depth 0), the rule's note (1), its note (2), then refused (3).
    assert [r["depth"] for r in rows] == ["0", "1", "2", "3"], rows
    assert [r["status"] for r in rows] == ["done", "done", "done", "refused"]
    assert "past the bound of 2" in rows[-1]["outcome"]
    assert "ran create_note as @alice" in rows[0]["outcome"]
    made = rows[0]["outcome"].rsplit(": ", 1)[1]  # the note the rule wrote, as alice
    note = studio.get(made).get_data(as_text=True)
    assert "echo of first" in note and "Alice" in note


def _signed(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """A sender's signature, written from the documentation (not the app's own helper)."""
    stamp = timestamp if timestamp is not None else int(time.time())
    mac = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Harmonic-Signature": f"sha256={mac}", "X-Harmonic-Timestamp": str(stamp),
            "Content-Type": "application/json"}


def test_an_inbound_webhook_fires_only_when_signed(auto: Flask, studio, client) -> None:  # type: ignore[no-untyped-def]
    rule = add_rule(studio, name="Tell on call", trigger="webhook", effect="notify",
                    text="The build says {{ status }}")
    secret, url = rule["secret"], rule["url"]
    assert secret.startswith("whsec_") and url.endswith(f"/hooks/automations/{rule['id']}")
    hook = f"/hooks/automations/{rule['id']}"
    body = json.dumps({"status": "green"}).encode()
    bad = client.post(hook, data=body, headers=_signed("whsec_wrong", body))
    assert bad.status_code == 403
    old = client.post(hook, data=body, headers=_signed(secret, body, int(time.time()) - 3600))
    assert old.status_code == 403
    unsigned = client.post(hook, data=body, headers={"Content-Type": "application/json"})
    assert unsigned.status_code == 403
    assert firings(studio, rule) == []
    headers = _signed(secret, body)
    good = client.post(hook, data=body, headers=headers)
    assert good.status_code == 202, good.get_data(as_text=True)
    again = client.post(hook, data=body, headers=headers)  # a replay of the same call
    assert again.status_code == 200 and again.json["fired"] is False
    work(auto)
    rows = firings(studio, rule)
    assert len(rows) == 1 and rows[0]["status"] == "done", rows
    inbox = studio.get("/inbox").get_data(as_text=True)
    assert "The build says green" in inbox


def test_a_rule_firing_too_often_is_paused_and_its_owner_told(auto: Flask, studio,  # type: ignore[no-untyped-def]
                                                              monkeypatch) -> None:
    monkeypatch.setitem(auto.config, "AUTOMATIONS_MAX_PER_MINUTE", "2")
    rule = add_rule(studio, name="Busy", trigger="manual", effect="notify", text="ping")
    page = f"/studios/team/automations/{rule['id']}"
    for _ in range(3):
        assert studio.act(page, "run_automation").status_code == 200
    again = studio.act(page, "run_automation")
    assert again.status_code == 409, again.get_data(as_text=True)  # paused: not offered
    rows = firings(studio, rule)
    assert [r["status"] for r in rows].count("refused") == 1
    shown = studio.get(page).get_data(as_text=True)
    assert "paused since" in shown and "more than 2 times in a minute" in shown
    inbox = studio.get("/inbox").get_data(as_text=True)
    assert "Your automation “Busy” was paused" in inbox
    assert studio.act(page, "resume_automation").status_code == 200
    assert studio.act(page, "run_automation").status_code == 200


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]


def test_the_page_adds_a_rule_and_shows_its_firings(auto: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    make_agent("hana", password="hana-password")
    open_studio(auto, "hana")
    browser = auto.test_client()
    login = browser.get("/login").get_data(as_text=True)
    assert browser.post("/login", data={"login": "hana", "password": "hana-password",
                                        "csrf_token": _csrf(login)}).status_code == 303
    listing = browser.get("/studios/team/automations", headers={"Accept": "text/html"})
    html = listing.get_data(as_text=True)
    assert "Add an automation" in html and "When it runs" in html
    words = re.sub(r"<[^>]+>", " ", html.split("<main", 1)[-1])  # what a person reads
    assert "create_automation" not in words and "effect" not in words
    made = browser.post("/studios/team/automations/actions/create_automation",
                        data={"name": "Morning nudge", "trigger": "manual", "effect": "notify",
                              "text": "Good morning", "csrf_token": _csrf(html)},
                        headers={"Accept": "text/html"})
    assert made.status_code == 303, made.get_data(as_text=True)
    rule_page = made.headers["Location"]
    shown = browser.get(rule_page, headers={"Accept": "text/html"}).get_data(as_text=True)
    assert "Morning nudge" in shown and "It has not run yet." in shown
    assert browser.post(rule_page + "/actions/run_automation",
                        data={}).status_code == 400  # no CSRF token: refused
    ran = browser.post(rule_page + "/actions/run_automation",
                       data={"csrf_token": _csrf(shown)}, headers={"Accept": "text/html"})
    assert ran.status_code == 303
    work(auto)
    shown = browser.get(rule_page, headers={"Accept": "text/html"}).get_data(as_text=True)
    assert 'data-status="done"' in shown and "run by hand by @hana" in shown
    assert "told 1 member" in shown


def test_schedules_read_cron_and_words_in_the_studio_time_zone() -> None:
    from datetime import UTC, datetime, timedelta

    from app.automations import schedule
    from app.services.errors import Invalid

    nine = schedule.parse("every day at 09:00")
    assert nine == schedule.parse("0 9 * * *")
    now = datetime(2026, 11, 30, 8, 3, 20, tzinfo=UTC)  # 09:03 in Paris, a Monday
    due = schedule.due(nine, "Europe/Paris", now, now - timedelta(days=1))
    assert due == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    assert schedule.due(nine, "UTC", now, now - timedelta(days=1)) is None
    weekdays = schedule.parse("*/15 8-17 * * 1-5")
    assert weekdays.matches(datetime(2026, 11, 30, 8, 45)) and \
        not weekdays.matches(datetime(2026, 11, 29, 8, 45))  # a Sunday
    assert schedule.parse("every monday at 8:30").matches(datetime(2026, 11, 30, 8, 30))
    for wrong in ("every blue moon", "61 * * * *", "* * *"):
        with pytest.raises(Invalid):
            schedule.parse(wrong)


def test_a_workflow_started_by_a_rule_carries_its_depth(auto: Flask, studio,  # type: ignore[no-untyped-def]
                                                        monkeypatch) -> None:
    monkeypatch.setitem(auto.config, "AUTOMATIONS_MAX_DEPTH", "1")
    rule = add_rule(studio, name="Note begets note", trigger="event", event="note_created",
                    effect="workflow", workflow="auto-note")
    assert studio.act("/studios/team/note", "create_note", title="seed",
                      text="hello").status_code == 201
    work(auto, rounds=40)
    rows = sorted(firings(studio, rule), key=lambda r: r["depth"])
    # The person's note starts a run (0); the run's note starts another (1); the next is
    # refused (2): the depth went through the runs.
    assert [(r["depth"], r["status"]) for r in rows] == [("0", "done"), ("1", "done"),
                                                         ("2", "refused")], rows


def test_a_mention_tells_the_members_and_a_webhook_effect_is_signed(auto: Flask, studio,  # type: ignore[no-untyped-def]
                                                                     make_agent,
                                                                     monkeypatch) -> None:
    from tests.helpers import join_studio
    from tests.notifications.receivers import Receiver, sha256_signature_ok

    monkeypatch.setitem(auto.config, "WEBHOOKS_ALLOW", "loopback")
    join_studio(make_agent, "bob")
    told = add_rule(studio, name="Mentions", trigger="event", event="mention",
                    effect="notify", text="{{ by }} mentioned @{{ handle }}")
    receiver = Receiver()
    try:
        hook = studio.act("/studios/team/webhooks", "create_webhook",
                          url=receiver.url).json["result"]
        called = add_rule(studio, name="Call out", trigger="manual", effect="webhook",
                          webhook=hook["id"])
        assert studio.act("/studios/team/note", "create_note", title="Plan",
                          text="@bob and @nobody, look").status_code == 201
        assert studio.act(f"/studios/team/automations/{called['id']}",
                          "run_automation").status_code == 200
        work(auto)
        rows = firings(studio, told)
        assert len(rows) == 1 and rows[0]["status"] == "done", rows  # @nobody is no member
        assert "alice mentioned @bob" in studio.get("/inbox").get_data(as_text=True)
        deadline = time.monotonic() + 20
        while not any(json.loads(r["body"]).get("event") == "automation"
                      for r in receiver.received):
            assert time.monotonic() < deadline, receiver.received
            work(auto, rounds=2)
        got = next(r for r in receiver.received if json.loads(r["body"])["event"] == "automation")
        assert sha256_signature_ok(hook["secret"], got["headers"], got["body"])
        body = json.loads(got["body"])
        assert body["automation"] == {"id": called["id"], "name": "Call out", "depth": 1}
        assert body["data"]["by"] == "alice"
    finally:
        receiver.close()


def test_a_close_at_the_deadline_fires_the_rule_once(auto: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    from tests.notifications.test_deadlines import pass_deadline

    rule = add_rule(studio, name="Tell closes", trigger="event", event="decision_closed",
                    effect="notify", text="“{{ question }}” closed: {{ outcome }}")
    path = studio.act("/studios/team/decide", "create_decision", question="Lunch?",
                      options=["Soup"], deadline="2h").json["location"]
    pass_deadline(auto, path)
    work(auto)  # the deadline sweep closes it, then the automations' sweep acts
    rows = firings(studio, rule)
    assert len(rows) == 1 and rows[0]["status"] == "done" and rows[0]["depth"] == "0", rows
    assert "“Lunch?” closed:" in studio.get("/inbox").get_data(as_text=True)

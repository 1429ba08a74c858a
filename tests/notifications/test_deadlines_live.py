"""A deadline acts by itself with real processes: two server processes and two ``bin/worker``
processes share the database; a decision whose deadline is moved to a few seconds ahead closes
when it comes, once, sending its notification, its email (to an SMTP server the test starts)
and its webhook delivery once each (to a local receiver), and its "closes soon" reminder goes
once, to the member who has not voted."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.helpers import join_studio, parse_md
from tests.mcp.conftest import gunicorns
from tests.notifications.receivers import Receiver, sha256_signature_ok
from tests.notifications.test_mail import (
    REPLY_DOMAIN,
    SmtpServer,
    free_port,
    with_confirmed_address,
)
from tests.workflows.workers import start_worker, stop

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # real server and worker processes

SETTINGS = {"WEBHOOKS_ALLOW": "loopback", "DEADLINES_SWEEP_SECONDS": "0.2",
            "WORKFLOWS_WORKER": "off"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def until(check: Any, seconds: float = 60.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("not reached in time")
        time.sleep(0.1)


def inbox_kinds(base: str, token: str) -> list[tuple[str, str]]:
    """(kind, text) of every notification in an inbox, read over HTTP as Markdown."""
    page = httpx.get(base + "/inbox", headers={"Authorization": f"Bearer {token}",
                                               "Accept": "text/markdown"}, timeout=10)
    assert page.status_code == 200, page.text
    rows = []
    for line in parse_md(page.text)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9a-f]{8}", cells[0]):
            rows.append((cells[2], cells[3]))
    return rows


def test_a_deadline_closes_by_itself_once_across_processes(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, receiver, tmp_path: Path, monkeypatch) -> None:
    smtp = SmtpServer(free_port())
    mail = {"HARMONIC_SMTP_URL": f"smtp://127.0.0.1:{smtp.port}",
            "HARMONIC_MAIL_FROM": "Harmonic <harmonic@example.org>",
            "HARMONIC_MAIL_REPLY_DOMAIN": REPLY_DOMAIN}
    settings = {**SETTINGS, **mail}
    for key, value in settings.items():
        monkeypatch.setitem(app.config, key, value)
    smtp.start()
    bob = join_studio(make_agent, "bob")
    hook = studio.act("/studios/team/webhooks", "create_webhook", url=receiver.url).json["result"]
    # Bob confirms his address and wants closes by email too.
    with_confirmed_address(app, smtp, bob, "bob@example.org")
    chose = bob.act("/u/bob/settings/notifications", "set_notification_preference",
                    kind="decision_closed", channel="email", enabled=True)
    assert chose.status_code == 200, chose.get_data(as_text=True)
    alice_auth = {"Authorization": f"Bearer {studio.token}", "Accept": "application/json"}
    bob_auth = {"Authorization": f"Bearer {bob.token}", "Accept": "application/json"}
    workers = [start_worker(app, tmp_path, f"w{i}", **settings) for i in (1, 2)]
    try:
        with gunicorns(app, settings, settings) as (one, two):
            made = httpx.post(one + "/studios/team/decide/actions/create_decision",
                              json={"question": "Ship it?", "options": ["Yes", "No"],
                                    "deadline": "2d"}, headers=alice_auth, timeout=30)
            assert made.status_code == 201, made.text
            path = made.json()["location"]
            voted = httpx.post(two + path + "/actions/vote",
                               json={"option_title": "Yes", "accept": True}, headers=bob_auth,
                               timeout=30)
            assert voted.status_code == 200, voted.text
            # Moving the deadline reschedules: a few seconds ahead now.
            at = datetime.now(UTC) + timedelta(seconds=4)
            moved = httpx.post(one + path + "/settings/actions/update_decision_settings",
                               json={"deadline": at.isoformat()}, headers=alice_auth,
                               timeout=30)
            assert moved.status_code == 200, moved.text

            def closed_deliveries() -> list[dict[str, Any]]:
                return [r for r in receiver.received
                        if json.loads(r["body"])["event"] == "decision_closed"]

            def closed_emails() -> list[Any]:
                return [m for m in smtp.mailbox.to("bob@example.org")
                        if "Ship it?" in str(m["Subject"]) and "closed" in str(m["Subject"])]

            until(closed_deliveries)
            assert datetime.now(UTC) >= at
            until(lambda: ("decision_closed" in dict(inbox_kinds(two, bob.token))))
            until(closed_emails)
            time.sleep(2.0)  # ten more sweeps of each worker: nothing more may come
            assert len(closed_deliveries()) == 1
            assert len(closed_emails()) == 1
            sent = closed_deliveries()[0]
            assert sha256_signature_ok(hook["secret"], sent["headers"], sent["body"])
            payload = json.loads(sent["body"])
            assert payload["actor"] is None and payload["location"].endswith(path)
            assert "“Yes” won with 1 acceptance" in payload["message"]
            for base, token in ((one, bob.token), (two, studio.token)):
                closed = [t for k, t in inbox_kinds(base, token) if k == "decision_closed"]
                assert len(closed) == 1 and "closed at its deadline" in closed[0]
            # The reminder went once, to the member who had not voted (its creator).
            alice_due = [t for k, t in inbox_kinds(one, studio.token) if k == "deadline"]
            assert len(alice_due) == 1 and "you have not voted yet" in alice_due[0]
            assert "deadline" not in dict(inbox_kinds(two, bob.token))
            page = httpx.get(two + path, headers=bob_auth, timeout=10)
            assert page.status_code == 200
            refused = httpx.post(two + path + "/actions/vote",
                                 json={"option_title": "No", "accept": True}, headers=bob_auth,
                                 timeout=30)
            assert refused.status_code == 409
    finally:
        for proc in workers:
            stop(proc)
        smtp.stop()

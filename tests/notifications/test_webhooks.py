"""Webhooks for real: a receiver on 127.0.0.1 (allowed by WEBHOOKS_ALLOW for these tests) is
sent signed payloads by the job queue's worker; a failing receiver is retried and the delivery
log shows each attempt; URLs off the allow-list are refused at registration; only studios the
owner belongs to are heard of; disabling and deleting stop deliveries."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from tests.helpers import join_studio, open_studio
from tests.notifications.receivers import Receiver, work_until


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def hooks_on(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"WEBHOOKS_ALLOW": "loopback", "WEBHOOKS_MAX_ATTEMPTS": "3",
                       "WORKFLOWS_WORKER": "off", "WORKFLOWS_RETRY_SECONDS": "0.05",
                       "WEBHOOKS_RETRY_SCALE": "0.001", "WORKFLOWS_POLL_SECONDS": "0.05"}.items():
        monkeypatch.setitem(app.config, key, value)


def verify(secret: str, header: str, body: bytes) -> bool:
    """A receiver's check, written from the documentation (not the app's own helper)."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body,
                        hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"]) and abs(time.time() - int(parts["t"])) < 300


def register(agent: Any, page: str, url: str) -> dict[str, Any]:
    made = agent.act(page, "create_webhook", url=url)
    assert made.status_code == 201, made.get_data(as_text=True)
    return made.json["result"]  # type: ignore[no-any-return]


def test_a_signed_payload_reaches_a_real_receiver(app: Flask, studio, hooks_on, receiver) -> None:  # type: ignore[no-untyped-def]
    hook = register(studio, "/studios/team/webhooks", receiver.url)
    assert hook["secret"].startswith("whsec_")
    note = studio.act("/studios/team/note", "create_note", title="Hello", text="hi")
    assert note.status_code == 201
    work_until(app, lambda: len(receiver.received) == 1)
    got = receiver.received[0]
    assert got["path"] == "/hook"
    assert verify(hook["secret"], got["headers"]["Harmonic-Signature"], got["body"])
    assert not verify(hook["secret"], got["headers"]["Harmonic-Signature"], got["body"] + b" ")
    assert not verify("whsec_wrong", got["headers"]["Harmonic-Signature"], got["body"])
    payload = json.loads(got["body"])
    assert payload["event"] == "create_note" and got["headers"]["Harmonic-Event"] == "create_note"
    assert payload["actor"]["handle"] == "alice" and payload["studio"] == "team"
    assert payload["location"].endswith(note.json["location"])
    assert any(uri.endswith(note.json["location"].lstrip("/")) for uri in payload["changed"])
    assert got["headers"]["Harmonic-Delivery"] == payload["id"]
    # The secret is never shown again; the log shows the delivery.
    page = studio.get(f"/webhooks/{hook['id']}").get_data(as_text=True)
    assert hook["secret"] not in page
    assert f"| {payload['id']} | create_note | delivered | #1 " in page and ": 200 in " in page


def test_a_failing_receiver_is_retried_and_logged(app: Flask, studio, hooks_on) -> None:  # type: ignore[no-untyped-def]
    flaky = Receiver([500, 503, 204])
    try:
        hook = register(studio, "/studios/team/webhooks", flaky.url)
        studio.act("/studios/team/note", "create_note", text="retry me")
        work_until(app, lambda: len(flaky.received) == 3)
        page = studio.get(f"/webhooks/{hook['id']}")
        text = page.get_data(as_text=True)
        work_until(app, lambda: "| delivered |" in studio.get(f"/webhooks/{hook['id']}")
                   .get_data(as_text=True))
        text = studio.get(f"/webhooks/{hook['id']}").get_data(as_text=True)
        assert "#1 " in text and ": 500 in " in text and "the receiver answered 500" in text
        assert "#2 " in text and ": 503 in " in text and "#3 " in text and ": 204 in " in text
        html = studio.get(f"/webhooks/{hook['id']}", accept="text/html").get_data(as_text=True)
        assert 'data-status="delivered"' in html and html.count('class="attempt"') == 3
        # The same event each time, signed each time.
        bodies = {r["body"] for r in flaky.received}
        assert len(bodies) == 1
        assert all(verify(hook["secret"], r["headers"]["Harmonic-Signature"], r["body"])
                   for r in flaky.received)
    finally:
        flaky.close()


def test_a_receiver_that_keeps_failing_gives_up(app: Flask, studio, hooks_on,
                                                monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "WEBHOOKS_MAX_ATTEMPTS", "2")
    broken = Receiver([500] * 5)
    try:
        hook = register(studio, "/studios/team/webhooks", broken.url)
        studio.act("/studios/team/note", "create_note", text="never lands")
        work_until(app, lambda: "| failed |" in studio.get(f"/webhooks/{hook['id']}")
                   .get_data(as_text=True))
        assert len(broken.received) == 2
    finally:
        broken.close()


@pytest.mark.parametrize("url", ["http://10.0.0.5/hook", "http://169.254.169.254/latest",
                                 "http://192.168.1.1:8080/", "https://example.com/hook",
                                 "ftp://127.0.0.1/x", "http://user:pw@127.0.0.1/x",
                                 "http://2130706433/"])
def test_urls_off_the_allow_list_are_refused(app: Flask, studio, hooks_on, url: str) -> None:  # type: ignore[no-untyped-def]
    refused = studio.act("/studios/team/webhooks", "create_webhook", url=url)
    assert refused.status_code == 422, refused.get_data(as_text=True)
    error = refused.json["error"]
    assert error["errors"][0]["param"] == "url"
    assert "refused" in error["message"]
    assert "WEBHOOKS_ALLOW" in error["message"] or "http(s)" in error["message"] \
        or "credentials" in error["message"]


def test_nothing_is_allowed_by_default(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    refused = studio.act("/u/alice/settings/webhooks", "create_webhook",
                         url="http://127.0.0.1:9/hook")
    assert refused.status_code == 422
    assert refused.json["error"]["errors"] == [{"param": "url", "message": (
        "is refused: host '127.0.0.1:9' is not allowed: this server's operator allows a host "
        "by adding it to WEBHOOKS_ALLOW")}]


def test_a_refusal_never_discloses_the_allow_list(app: Flask, studio,  # type: ignore[no-untyped-def]
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(app.config, "WEBHOOKS_ALLOW",
                        "hooks.internal.example, 10.20.30.40:8443, https://ci.lan")
    refused = studio.act("/u/alice/settings/webhooks", "create_webhook",
                         url="https://elsewhere.example/hook")
    assert refused.status_code == 422
    told = refused.get_data(as_text=True)
    assert "is not allowed" in told and "WEBHOOKS_ALLOW" in told
    for entry in ("hooks.internal.example", "10.20.30.40", "ci.lan"):
        assert entry not in told


def test_who_hears_what(app: Flask, studio, make_agent, hooks_on, receiver) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    olga = make_agent("olga")  # not a member of the studio
    # A member who is not an admin cannot register the studio's webhook, nor see them.
    assert bob.act("/studios/team/webhooks", "create_webhook",
                   url=receiver.url).status_code == 403
    mine = register(bob, "/u/bob/settings/webhooks", receiver.url + "?who=bob")
    register(olga, "/u/olga/settings/webhooks", receiver.url + "?who=olga")
    # Someone else's webhook is not found.
    assert olga.get(f"/webhooks/{mine['id']}").status_code == 404
    studio.act("/studios/team/note", "create_note", text="for members")
    work_until(app, lambda: len(receiver.received) >= 1)
    time.sleep(0.2)
    from app.workflows.worker import Worker

    while Worker(app, "w").run_once():
        pass
    assert [r["path"] for r in receiver.received] == ["/hook?who=bob"]
    # Disabled: no more deliveries; enabled again: deliveries resume; deleted: gone.
    assert bob.act(f"/webhooks/{mine['id']}", "disable_webhook").status_code == 200
    studio.act("/studios/team/note", "create_note", text="while disabled")
    assert "while disabled" not in bob.get(f"/webhooks/{mine['id']}").get_data(as_text=True)
    assert bob.get(f"/webhooks/{mine['id']}").get_data(as_text=True).count("| create_note |") == 1
    assert bob.act(f"/webhooks/{mine['id']}", "enable_webhook").status_code == 200
    studio.act("/studios/team/note", "create_note", text="enabled again")
    assert bob.get(f"/webhooks/{mine['id']}").get_data(as_text=True).count("| create_note |") == 2
    deleted = bob.act(f"/webhooks/{mine['id']}", "delete_webhook")
    assert deleted.status_code == 200 and deleted.json["location"] == "/u/bob/settings/webhooks"
    assert bob.get(f"/webhooks/{mine['id']}").status_code == 404
    assert studio.get(f"/webhooks/{mine['id']}").status_code == 404


def test_the_secret_is_shown_once_in_html(app: Flask, make_agent, hooks_on, receiver) -> None:  # type: ignore[no-untyped-def]
    import re

    make_agent("hana", password="hana-password")
    open_studio(app, "hana", handle="hs", name="Hana's")
    browser = app.test_client()

    def csrf(html: str) -> str:
        return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]

    login = browser.get("/login").get_data(as_text=True)
    assert browser.post("/login", data={"login": "hana", "password": "hana-password",
                                        "csrf_token": csrf(login)}).status_code == 303
    page = browser.get("/studios/hs/webhooks").get_data(as_text=True)
    assert 'data-action="create_webhook"' in page
    refused = browser.post("/studios/hs/webhooks/actions/create_webhook",
                           data={"url": "http://10.1.2.3/x", "csrf_token": csrf(page)})
    assert refused.status_code == 422
    assert "WEBHOOKS_ALLOW" in refused.get_data(as_text=True)
    made = browser.post("/studios/hs/webhooks/actions/create_webhook",
                        data={"url": receiver.url, "csrf_token": csrf(page)})
    assert made.status_code == 303 and made.headers["Location"].startswith("/webhooks/")
    shown = browser.get(made.headers["Location"]).get_data(as_text=True)
    secret = re.search(r"(whsec_[A-Za-z0-9_-]+)", shown)
    assert secret is not None and "shown only once" in shown
    again = browser.get(made.headers["Location"]).get_data(as_text=True)
    assert secret.group(1) not in again and receiver.url in again


def test_a_delivery_whose_enqueueing_was_lost_is_swept(app: Flask, studio, hooks_on, receiver,
                                                       monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The process 'dies' between the commit and the enqueue: the delivery row is durable, and
    `flask notifications sweep` hands it to the queue later."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from app.extensions import db
    from app.models.notifications import WebhookDelivery
    from app.notifications import webhooks

    register(studio, "/studios/team/webhooks", receiver.url)

    def crash(ids: Any) -> int:
        raise RuntimeError("the process died here")

    monkeypatch.setattr(webhooks, "enqueue", crash)
    assert studio.act("/studios/team/note", "create_note", text="survives").status_code == 201
    monkeypatch.undo()
    for key, value in {"WEBHOOKS_ALLOW": "loopback", "WORKFLOWS_WORKER": "off",
                       "WORKFLOWS_RETRY_SECONDS": "0.05"}.items():
        monkeypatch.setitem(app.config, key, value)
    runner = app.test_cli_runner()
    assert "enqueued 0 webhook deliveries" in runner.invoke(args=["notifications",
                                                                  "sweep"]).output
    with app.app_context():  # age it past the sweep's grace period
        db.session.execute(update(WebhookDelivery).values(
            created_at=datetime.now(UTC) - timedelta(minutes=5)))
        db.session.commit()
    result = runner.invoke(args=["notifications", "sweep"])
    assert result.exit_code == 0 and "enqueued 1 webhook delivery" in result.output
    work_until(app, lambda: len(receiver.received) == 1)
    assert json.loads(receiver.received[0]["body"])["message"].startswith("Created note")

"""Webhooks done right: both signature headers checked as a receiver checks them; a receiver
that fails twice gets the third try on the retry schedule (scaled down here), validly signed;
each format's payload in its service's shape, against local receivers; a delivery sent again
from the webhook's page (a person's form with its cookie and CSRF token) and as an action
(a Bearer token)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from tests.notifications.receivers import Receiver, sha256_signature_ok, work_until

SCALE = 0.005  # the schedule's 1 min and 5 min become 0.3 s and 1.5 s


@pytest.fixture
def hooks_on(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"WEBHOOKS_ALLOW": "loopback", "WORKFLOWS_WORKER": "off",
                       "WEBHOOKS_RETRY_SCALE": str(SCALE)}.items():
        monkeypatch.setitem(app.config, key, value)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def register(agent: Any, url: str, fmt: str | None = None) -> dict[str, Any]:
    params = {"url": url, **({"format": fmt} if fmt else {})}
    made = agent.act("/studios/team/webhooks", "create_webhook", **params)
    assert made.status_code == 201, made.get_data(as_text=True)
    return made.json["result"]  # type: ignore[no-any-return]


def test_a_receiver_failing_twice_gets_a_signed_third_try_on_schedule(  # type: ignore[no-untyped-def]
        app: Flask, studio, hooks_on) -> None:
    flaky = Receiver([500, 502, 200])
    try:
        hook = register(studio, flaky.url)
        studio.act("/studios/team/note", "create_note", text="third time lucky")
        work_until(app, lambda: len(flaky.received) == 3)
        first, second, third = flaky.received
        # The waits follow the schedule: 1 minute, then 5 minutes (scaled).
        assert second["at"] - first["at"] >= 60 * SCALE
        assert third["at"] - second["at"] >= 300 * SCALE
        for got in flaky.received:
            assert sha256_signature_ok(hook["secret"], got["headers"], got["body"])
            assert not sha256_signature_ok("whsec_wrong", got["headers"], got["body"])
            assert not sha256_signature_ok(hook["secret"], got["headers"], got["body"] + b" ")
            # The older header carries the same HMAC over the same timestamp.
            stamp, mac = got["headers"]["Harmonic-Signature"].split(",")
            assert stamp == "t=" + got["headers"]["X-Harmonic-Timestamp"]
            assert mac == "v1=" + got["headers"]["X-Harmonic-Signature"].split("=", 1)[1]
        assert len({got["headers"]["Harmonic-Delivery"] for got in flaky.received}) == 1
        work_until(app, lambda: "| delivered |" in studio.get(f"/webhooks/{hook['id']}")
                   .get_data(as_text=True))
        log = studio.get(f"/webhooks/{hook['id']}").get_data(as_text=True)
        assert "the receiver answered 500" in log and "the receiver answered 502" in log
        assert "#3 " in log and ": 200 in " in log
        # The page says the schedule (here scaled down).
        assert "retried after 0.3 seconds, 1.5 seconds, 9 seconds, 36 seconds and 7.2 " \
            "minutes" in log
    finally:
        flaky.close()


def test_each_format_in_its_services_shape(app: Flask, studio, hooks_on, receiver) -> None:  # type: ignore[no-untyped-def]
    room = "/_matrix/client/v3/rooms/!abc:example.org/send/m.room.message"
    hooks = {fmt: register(studio, receiver.base + (room if fmt == "matrix" else f"/{fmt}"),
                           fmt)
             for fmt in ("json", "slack", "discord", "teams", "matrix")}
    made = studio.act("/studios/team/note", "create_note", title="Plan", text="hi")
    work_until(app, lambda: len(receiver.received) == 5)
    got = {("matrix" if r["path"].startswith("/_matrix") else r["path"].strip("/")): r
           for r in receiver.received}
    link = made.json["location"]
    for fmt, sent in got.items():  # every format is signed over the body it sends
        assert sha256_signature_ok(hooks[fmt]["secret"], sent["headers"], sent["body"]), fmt
    plain = json.loads(got["json"]["body"])
    assert got["json"]["method"] == "POST" and plain["event"] == "create_note"
    slack = json.loads(got["slack"]["body"])
    assert "@alice in team: Created note" in slack["text"] and link in slack["text"]
    assert slack["blocks"][0]["type"] == "section"
    assert slack["blocks"][0]["text"]["type"] == "mrkdwn"
    assert f"{link}|Open in Harmonic>" in slack["blocks"][0]["text"]["text"]
    discord = json.loads(got["discord"]["body"])
    assert "@alice in team: Created note" in discord["content"] and link in discord["content"]
    assert discord["allowed_mentions"] == {"parse": []} and len(discord["content"]) <= 2000
    teams = json.loads(got["teams"]["body"])
    assert teams["@type"] == "MessageCard"
    assert teams["@context"] == "https://schema.org/extensions"
    assert teams["summary"] and "Created note" in teams["text"]
    action = teams["potentialAction"][0]
    assert action["@type"] == "OpenUri" and action["targets"][0]["uri"].endswith(link)
    matrix = got["matrix"]
    assert matrix["method"] == "PUT"
    # The transaction id is the delivery's id: a retry is the same event for the homeserver.
    assert matrix["path"].startswith("/_matrix/client/v3/rooms/")
    assert matrix["path"].endswith("/send/m.room.message/"
                                   + matrix["headers"]["Harmonic-Delivery"])
    body = json.loads(matrix["body"])
    assert body["msgtype"] == "m.text" and "@alice in team: Created note" in body["body"]
    # An unknown format is refused, naming the parameter.
    refused = studio.act("/studios/team/webhooks", "create_webhook", url=receiver.url,
                         format="irc")
    assert refused.status_code == 422 and refused.json["error"]["errors"][0]["param"] == "format"


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]


def test_redeliver_from_the_page_and_as_an_action(  # type: ignore[no-untyped-def]
        app: Flask, make_agent, hooks_on, receiver) -> None:
    from tests.helpers import open_studio

    hana = make_agent("hana", password="hana-password")
    open_studio(app, "hana")
    hook = register(hana, receiver.url)
    hana.act("/studios/team/note", "create_note", text="again please")
    work_until(app, lambda: len(receiver.received) == 1)
    delivery = json.loads(receiver.received[0]["body"])["id"]
    page = f"/webhooks/{hook['id']}"
    work_until(app, lambda: "| delivered |" in hana.get(page).get_data(as_text=True))

    # A person: the log's button, posted with the session cookie and the page's CSRF token.
    browser = app.test_client()
    login = browser.get("/login").get_data(as_text=True)
    assert browser.post("/login", data={"login": "hana", "password": "hana-password",
                                        "csrf_token": _csrf(login)}).status_code == 303
    html = browser.get(page).get_data(as_text=True)
    assert ">Redeliver</button>" in html
    assert "redeliver_webhook" not in re.sub(r'(action|data-action)="[^"]*"', "", html)
    form = re.search(r'<form[^>]*\saction="([^"]*redeliver_webhook)"[^>]*>(.*?)</form>', html,
                     re.S)
    assert form is not None
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"',
                             form.group(2)))
    assert fields["delivery"] == delivery
    sent = browser.post(form.group(1), data=fields)
    assert sent.status_code == 303, sent.get_data(as_text=True)
    assert browser.post(form.group(1), data={"delivery": delivery}).status_code in (400, 403)
    work_until(app, lambda: len(receiver.received) == 2)

    # An agent: the same action with a Bearer token.
    again = hana.act(page, "redeliver_webhook", delivery=delivery)
    assert again.status_code == 200 and again.json["result"]["delivery"] == delivery
    work_until(app, lambda: len(receiver.received) == 3)
    assert {json.loads(r["body"])["id"] for r in receiver.received} == {delivery}
    assert all(sha256_signature_ok(hook["secret"], r["headers"], r["body"])
               for r in receiver.received)
    work_until(app, lambda: hana.get(page).get_data(as_text=True).count(": 200 in ") == 3)
    missing = hana.act(page, "redeliver_webhook", delivery="00000000")
    assert missing.status_code == 422 and missing.json["error"]["errors"][0]["param"] == \
        "delivery"

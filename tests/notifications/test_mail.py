"""Notifications by email, for real: an SMTP server the tests start on loopback (aiosmtpd)
receives what the job queue's worker sends. A mention is emailed with text and HTML parts;
its unsubscribe link turns that type off without signing in; a reply fed to
``flask mail receive`` becomes a comment by its sender, and a forged one is refused;
preferences, membership and the daily digest are honoured; a send that fails while the server
is down is retried."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiosmtpd.controller import Controller
from flask import Flask
from sqlalchemy import select

from tests.helpers import join_studio
from tests.notifications.receivers import work_until

REPLY_DOMAIN = "mail.example.org"


class Mailbox:
    """What the SMTP server received: each message parsed, with its envelope recipients."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], EmailMessage]] = []
        self.raw: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        parsed = BytesParser(policy=policy.default).parsebytes(envelope.content)
        assert isinstance(parsed, EmailMessage)
        self.messages.append((list(envelope.rcpt_tos), parsed))
        self.raw.append(envelope.content)
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for rcpts, m in self.messages if address in rcpts]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SmtpServer:
    def __init__(self, port: int) -> None:
        self.port, self.mailbox = port, Mailbox()
        self.controller: Controller | None = None

    def start(self) -> None:
        self.controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


@pytest.fixture
def smtp_port(app: Flask, monkeypatch: pytest.MonkeyPatch) -> int:
    port = free_port()
    for key, value in {"HARMONIC_SMTP_URL": f"smtp://127.0.0.1:{port}",
                       "HARMONIC_MAIL_FROM": "Harmonic <harmonic@example.org>",
                       "HARMONIC_MAIL_REPLY_DOMAIN": REPLY_DOMAIN, "MAIL_MAX_ATTEMPTS": "3",
                       "WORKFLOWS_WORKER": "off", "WORKFLOWS_RETRY_SECONDS": "0.05",
                       "WORKFLOWS_POLL_SECONDS": "0.05"}.items():
        monkeypatch.setitem(app.config, key, value)
    return port


@pytest.fixture
def smtp(smtp_port: int) -> Iterator[SmtpServer]:
    server = SmtpServer(smtp_port)
    server.start()
    yield server
    server.stop()


def queue_idle(app: Flask) -> None:
    """Run the worker until it finds nothing to do."""
    from app.workflows.worker import Worker

    worker = Worker(app, "test-worker")
    deadline = time.monotonic() + 30
    while worker.run_once():
        assert time.monotonic() < deadline, "the queue never went idle"


def with_confirmed_address(app: Flask, smtp: SmtpServer, agent: Any, address: str) -> None:
    """The person sets their address and opens the link mailed to it, as a person would."""
    done = agent.act(f"/u/{agent.handle}/settings/notifications", "set_email", email=address)
    assert done.status_code == 200, done.get_data(as_text=True)
    assert done.json["result"]["confirmed"] is False
    work_until(app, lambda: smtp.mailbox.to(address))
    letter = smtp.mailbox.to(address)[-1]
    text = body(letter)
    link = next(word for word in text.split() if "/mail/confirm/" in word)
    page = app.test_client().get(urlsplit(link).path)
    assert page.status_code == 200 and "Address confirmed" in page.get_data(as_text=True)


def body(message: EmailMessage, kind: str = "plain") -> str:
    part = message.get_body(preferencelist=(kind,))
    assert isinstance(part, EmailMessage)
    return str(part.get_content())


def reply(token_address: str, sender: str, text: str) -> bytes:
    message = EmailMessage()
    message["From"] = f"Someone <{sender}>"
    message["To"] = token_address
    message["Subject"] = "Re: a mention"
    message.set_content(text)
    return bytes(message)


def receive(app: Flask, raw: bytes) -> Any:
    return app.test_cli_runner().invoke(args=["mail", "receive"], input=raw)


def test_a_mention_is_emailed_replied_to_and_unsubscribed(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, smtp) -> None:
    bob = join_studio(make_agent, "bob")
    with_confirmed_address(app, smtp, bob, "bob@example.org")
    note = studio.act("/studios/team/note", "create_note", title="Plan",
                      text="@bob what do you think?")
    assert note.status_code == 201
    work_until(app, lambda: len(smtp.mailbox.to("bob@example.org")) == 2)
    email = smtp.mailbox.to("bob@example.org")[-1]
    assert "@alice mentioned you in “Plan”" in str(email["Subject"])
    assert email["From"] == "Harmonic <harmonic@example.org>"
    assert "mentioned you" in body(email) and "mentioned you" in body(email, "html")
    assert note.json["location"] in body(email) and note.json["location"] in body(email, "html")
    reply_to = str(email["Reply-To"])
    assert reply_to.startswith("reply+") and reply_to.endswith("@" + REPLY_DOMAIN)
    assert len(reply_to.split("@")[0]) <= 64  # a local part's limit (RFC 5321)
    assert email["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert b"\r\nList-Unsubscribe: <http://" in smtp.mailbox.raw[-1]  # as a mail program reads it

    # A reply by email becomes bob's comment, without the quoted email.
    quoted = "\n".join("> " + line for line in body(email).splitlines())
    answer = receive(app, reply(reply_to, "Bob@Example.org",
                                f"Looks good to me.\n\nOn Sunday, Harmonic wrote:\n{quoted}\n"))
    assert answer.exit_code == 0, answer.output
    assert "comment by @bob" in answer.output
    page = studio.get(note.json["location"]).get_data(as_text=True)
    assert "Looks good to me." in page and "Reply above this line" not in page
    assert "### Bob, " in page.split("Looks good to me.")[0].rsplit("## Comments", 1)[1]

    # Forged: another sender with the real token, or the real sender with a changed token.
    forged = receive(app, reply(reply_to, "mallory@example.org", "I am bob, honest."))
    assert forged.exit_code == 77 and "refused" in forged.stderr
    assert "not the confirmed address" in forged.stderr
    local, domain = reply_to.split("@")
    tampered = local[:-1] + ("0" if local[-1] != "0" else "1") + "@" + domain
    forged = receive(app, reply(tampered, "bob@example.org", "Changed token."))
    assert forged.exit_code == 77 and "signature does not match" in forged.stderr
    forged = receive(app, reply(f"reply+deadbeef-1-{'0' * 24}@{domain}", "bob@example.org",
                                "No such email."))
    assert forged.exit_code == 77 and "names no email we sent" in forged.stderr
    page = studio.get(note.json["location"]).get_data(as_text=True)
    assert "I am bob" not in page and "Changed token" not in page

    # Unsubscribing by the link, without signing in: GET asks, POST turns mentions off.
    link = urlsplit(str(email["List-Unsubscribe"]).strip("<>")).path
    anonymous = app.test_client()
    asked = anonymous.get(link)
    assert asked.status_code == 200 and "Stop these emails" in asked.get_data(as_text=True)
    done = anonymous.post(link, data={"List-Unsubscribe": "One-Click"})
    assert done.status_code == 200 and "no longer be emailed" in done.get_data(as_text=True)
    assert anonymous.post(link[:-3] + "xyz").status_code == 400  # a forged link does nothing
    again = studio.act("/studios/team/note", "create_note", title="Again", text="@bob and now?")
    assert again.status_code == 201
    queue_idle(app)
    assert len(smtp.mailbox.to("bob@example.org")) == 2
    inbox = bob.get("/inbox").get_data(as_text=True)
    assert "mentioned you in “Again”" in inbox  # the inbox still has it
    settings = bob.get("/u/bob/settings/notifications").get_data(as_text=True)
    assert "| mention | on | off | off |" in settings


def test_email_off_sends_no_email_and_the_inbox_still_has_it(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, smtp) -> None:
    bob = join_studio(make_agent, "bob")
    with_confirmed_address(app, smtp, bob, "bob@example.org")
    off = bob.act("/u/bob/settings/notifications", "set_notification_preference",
                  kind="mention", channel="email", enabled=False)
    assert off.status_code == 200, off.get_data(as_text=True)
    # And the other way round: replies leave the inbox but are still emailed.
    assert bob.act("/u/bob/settings/notifications", "set_notification_preference",
                   kind="reply", channel="inbox", enabled=False).status_code == 200
    made = bob.act("/studios/team/note", "create_note", title="Mine", text="bob's note")
    studio.act("/studios/team/note", "create_note", title="Hi", text="@bob hello")
    studio.act(made.json["location"], "add_comment", text="A comment for bob")
    work_until(app, lambda: len(smtp.mailbox.to("bob@example.org")) == 2)
    queue_idle(app)
    subjects = [str(m["Subject"]) for m in smtp.mailbox.to("bob@example.org")]
    assert subjects[0].startswith("Confirm your email")
    assert subjects[1] == "@alice commented on your note “Mine”"
    inbox = bob.get("/inbox").get_data(as_text=True)
    assert "mentioned you in “Hi”" in inbox and "commented on your note" not in inbox


def test_a_non_member_is_never_mailed(app: Flask, studio, make_agent, smtp) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = make_agent("carol")  # never joins
    with_confirmed_address(app, smtp, bob, "bob@example.org")
    with_confirmed_address(app, smtp, carol, "carol@example.org")
    made = bob.act("/studios/team/note", "create_note", title="Bob's", text="by bob")
    assert bob.act("/studios/team/team", "leave_studio").status_code == 200
    # A comment on the note of someone who left, and a mention of someone who never joined.
    studio.act(made.json["location"], "add_comment", text="Comment after bob left")
    studio.act("/studios/team/note", "create_note", title="Hi", text="@carol @bob hello")
    queue_idle(app)
    assert len(smtp.mailbox.to("bob@example.org")) == 1  # the confirmation only
    assert len(smtp.mailbox.to("carol@example.org")) == 1

    # Staged while a member, sent after leaving: dropped when its turn comes.
    join_studio(make_agent, "bob")
    studio.act("/studios/team/note", "create_note", title="Late", text="@bob still there?")
    assert bob.act("/studios/team/team", "leave_studio").status_code == 200
    queue_idle(app)
    assert len(smtp.mailbox.to("bob@example.org")) == 1


def test_a_failed_send_is_retried(app: Flask, studio, make_agent, smtp_port) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.models.notifications import MailMessage

    server = SmtpServer(smtp_port)
    server.start()
    try:
        bob = join_studio(make_agent, "bob")
        with_confirmed_address(app, server, bob, "bob@example.org")
    finally:
        server.stop()
    # The server is down: the action still succeeds at once, the first attempt fails.
    started = time.monotonic()
    made = studio.act("/studios/team/note", "create_note", title="Down", text="@bob hi")
    assert made.status_code == 201 and time.monotonic() - started < 5

    def attempted() -> bool:
        with app.app_context():
            row = db.session.scalar(select(MailMessage).where(MailMessage.kind == "mention"))
            return row is not None and row.attempts == 1

    work_until(app, attempted)
    with app.app_context():
        row = db.session.scalar(select(MailMessage).where(MailMessage.kind == "mention"))
        assert row is not None and row.status == "retrying" and "Connection" in row.error
    server = SmtpServer(smtp_port)
    server.start()
    try:
        work_until(app, lambda: len(server.mailbox.to("bob@example.org")) == 1)
    finally:
        server.stop()
    with app.app_context():
        row = db.session.scalar(select(MailMessage).where(MailMessage.kind == "mention"))
        assert row is not None and row.status == "sent" and row.attempts == 2


def test_the_daily_digest_is_sent_once(app: Flask, studio, make_agent, smtp) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    with_confirmed_address(app, smtp, bob, "bob@example.org")
    assert bob.act("/u/bob/settings/notifications", "set_email_digest",
                   daily=True).status_code == 200
    studio.act("/studios/team/note", "create_note", title="One", text="@bob first")
    studio.act("/studios/team/note", "create_note", title="Two", text="@bob second")
    queue_idle(app)
    assert len(smtp.mailbox.to("bob@example.org")) == 1  # held for the digest
    runner = app.test_cli_runner()
    first = runner.invoke(args=["mail", "digest"])
    assert first.exit_code == 0 and "1 digest to send" in first.output
    work_until(app, lambda: len(smtp.mailbox.to("bob@example.org")) == 2)
    digest = smtp.mailbox.to("bob@example.org")[-1]
    assert str(digest["Subject"]) == "Your day in Harmonic: 2 notifications"
    assert "“One”" in body(digest) and "“Two”" in body(digest)
    assert "“One”" in body(digest, "html") and digest["List-Unsubscribe"]
    second = runner.invoke(args=["mail", "digest"])
    assert second.exit_code == 0 and "0 digests to send" in second.output
    queue_idle(app)
    assert len(smtp.mailbox.to("bob@example.org")) == 2


def test_an_unconfirmed_address_gets_nothing_and_its_replies_are_refused(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, smtp, caplog: pytest.LogCaptureFixture) -> None:
    bob = join_studio(make_agent, "bob")
    assert bob.act("/u/bob/settings/notifications", "set_email",
                   email="bob@example.org").status_code == 200
    studio.act("/studios/team/note", "create_note", title="Hi", text="@bob hello")
    queue_idle(app)
    subjects = [str(m["Subject"]) for m in smtp.mailbox.to("bob@example.org")]
    assert subjects == ["Confirm your email address for Harmonic"]
    refused = receive(app, reply(f"reply+0a1b2c3d-1-{'f' * 24}@{REPLY_DOMAIN}",
                                 "bob@example.org", "hello"))
    assert refused.exit_code == 77 and refused.stderr.startswith("refused:")
    not_a_reply = receive(app, reply("someone@example.org", "bob@example.org", "hello"))
    assert not_a_reply.exit_code == 77
    logged = [r.getMessage() for r in caplog.records if r.name == "harmonic.mail"]
    assert len(logged) == 2 and all(m.startswith("reply by email refused:") for m in logged)


def test_every_kind_has_its_words() -> None:
    """The settings page and the emails name every kind of notification in words."""
    from app.models.notifications import KINDS
    from app.notifications.preferences import KIND_WORDS

    assert set(KIND_WORDS) == set(KINDS)


def test_the_settings_page_speaks_to_people(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    html = bob.get("/u/bob/settings/notifications", accept="text/html").get_data(as_text=True)
    for words in ("Where each kind of notification goes", "Someone mentions you", "Email",
                  "Save address", "Once a day, all in one email"):
        assert words in html
    shown = visible_text(html)
    for name in ("set_notification_preference", "set_email", "set_email_digest", "channel",
                 "enabled", "daily", "mention", "new_decision"):
        assert name not in shown.split(), name
    assert "Email: none" in bob.get("/u/bob/settings").get_data(as_text=True)


def visible_text(html: str) -> str:
    """The words a person sees: text outside tags, scripts and styles."""
    from html.parser import HTMLParser

    words: list[str] = []

    class Text(HTMLParser):
        skip = 0

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            self.skip += tag in ("script", "style")

        def handle_endtag(self, tag: str) -> None:
            self.skip -= tag in ("script", "style")

        def handle_data(self, data: str) -> None:
            if not self.skip:
                words.append(data)

    Text().feed(html)
    return " ".join(words)


def test_smtp_urls_are_read(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.notifications import smtp

    with app.app_context():
        monkeypatch.setitem(app.config, "HARMONIC_SMTP_URL",
                            "smtps://ana%40example.org:p%3Ass@mail.example.org")
        found = smtp.server()
        assert found is not None and (found.scheme, found.host, found.port) == \
            ("smtps", "mail.example.org", 465)
        assert (found.user, found.password) == ("ana@example.org", "p:ss")
        monkeypatch.setitem(app.config, "HARMONIC_SMTP_URL", "http://x")
        with pytest.raises(ValueError):
            smtp.server()


def test_quoted_text_is_cut() -> None:
    from app.notifications.replies import strip_quoted

    assert strip_quoted("Yes.\n\nOn Mon, 1 Jan 2026, A <a@x> wrote:\n> hi\n") == "Yes."
    assert strip_quoted("Fine\n-- \nBob\n") == "Fine"
    assert strip_quoted("Top\n-----Original Message-----\nFrom: x\n") == "Top"
    assert strip_quoted("> only quoted\n") == ""




def test_the_webhook_channel_sends_a_persons_notifications(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.notifications.receivers import Receiver
    from tests.notifications.test_webhooks import verify

    for key, value in {"WEBHOOKS_ALLOW": "loopback", "WORKFLOWS_WORKER": "off",
                       "WORKFLOWS_POLL_SECONDS": "0.05"}.items():
        monkeypatch.setitem(app.config, key, value)
    receiver = Receiver()
    try:
        bob = join_studio(make_agent, "bob")
        hook = bob.act("/u/bob/settings/webhooks", "create_webhook", url=receiver.url)
        assert hook.status_code == 201
        secret = hook.json["result"]["secret"]
        assert bob.act("/u/bob/settings/notifications", "set_notification_preference",
                       kind="mention", channel="webhook", enabled=True).status_code == 200
        made = studio.act("/studios/team/note", "create_note", title="Hook", text="@bob look")
        queue_idle(app)
        sent = [json.loads(r["body"]) for r in receiver.received]
        told = [p for p in sent if p["event"] == "notification"]
        assert len(told) == 1 and told[0]["kind"] == "mention"
        assert told[0]["location"].endswith(made.json["location"])
        assert "mentioned you" in told[0]["text"]
        got = next(r for r in receiver.received if json.loads(r["body"])["event"] == "notification")
        assert verify(secret, got["headers"]["Harmonic-Signature"], got["body"])
        # Without the choice, webhooks hear of the change only (the create_note event).
        assert bob.act("/u/bob/settings/notifications", "set_notification_preference",
                       kind="mention", channel="webhook", enabled=False).status_code == 200
        studio.act("/studios/team/note", "create_note", title="Hook 2", text="@bob again")
        queue_idle(app)
        events = [json.loads(r["body"])["event"] for r in receiver.received]
        assert events.count("notification") == 1 and events.count("create_note") == 2
    finally:
        receiver.close()


def test_a_persons_form_turns_a_channel_off_and_reminders_honour_it(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent) -> None:
    bob = join_studio(make_agent, "bob")
    # What the settings page's button posts, as a browser sends it.
    posted = bob.client.post("/u/bob/settings/notifications/actions/set_notification_preference",
                             data={"kind": "deadline", "channel": "inbox", "enabled": "false"},
                             headers={"Authorization": f"Bearer {bob.token}",
                                      "Accept": "text/html"})
    assert posted.status_code in (200, 303), posted.get_data(as_text=True)[:300]
    page = bob.get("/u/bob/settings/notifications").get_data(as_text=True)
    assert "| deadline | off | off | off |" in page
    soon = studio.act("/studios/team/commit", "create_commitment", title="Soon",
                      critical_mass=2, deadline="3h")
    assert soon.status_code == 201
    # The reminder comes from the workers' sweep, through the one notify call.
    assert "reminded of 1" in app.test_cli_runner().invoke(
        args=["notifications", "sweep"]).output
    assert "“Soon” closes in" not in bob.get("/inbox").get_data(as_text=True)
    assert "“Soon” closes in" in studio.get("/inbox").get_data(as_text=True)


def test_reply_tokens_are_bound_to_their_recipient_and_expire(app: Flask) -> None:
    import uuid

    from app.notifications import mail_tokens

    ana, bob = uuid.uuid4(), uuid.uuid4()
    now = time.time()
    with app.app_context():
        token = mail_tokens.reply_token("0a1b2c3d", ana, now=now)
        assert len("reply+" + token) <= 64 and token == token.lower()
        assert mail_tokens.reply_message(token) == "0a1b2c3d"
        assert mail_tokens.reply_valid(token, ana, now=now) is None
        assert mail_tokens.reply_valid(token.upper(), ana, now=now) is None  # case folded
        assert "does not match" in str(mail_tokens.reply_valid(token, bob, now=now))
        later = now + (mail_tokens.REPLY_DAYS + 1) * 86400
        assert "expired" in str(mail_tokens.reply_valid(token, ana, now=later))


# A login over plain SMTP on loopback: the test server warns about it, as it should elsewhere.
@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_the_urls_login_is_used(  # type: ignore[no-untyped-def]
        app: Flask, make_agent, smtp_port, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiosmtpd.smtp import AuthResult, LoginPassword

    logins: list[tuple[bytes, bytes]] = []

    def authenticator(server: Any, session: Any, envelope: Any, mechanism: str,
                      data: Any) -> AuthResult:
        assert isinstance(data, LoginPassword)
        logins.append((data.login, data.password))
        return AuthResult(success=(data.login, data.password) == (b"ana@example.org", b"p:ss"))

    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=smtp_port,
                            authenticator=authenticator, auth_required=True,
                            auth_require_tls=False)
    monkeypatch.setitem(app.config, "HARMONIC_SMTP_URL",
                        f"smtp://ana%40example.org:p%3Ass@127.0.0.1:{smtp_port}")
    controller.start()
    try:
        ana = make_agent("ana")
        assert ana.act("/u/ana/settings/notifications", "set_email",
                       email="ana@example.org").status_code == 200
        work_until(app, lambda: mailbox.to("ana@example.org"))
    finally:
        controller.stop()
    assert logins == [(b"ana@example.org", b"p:ss")]

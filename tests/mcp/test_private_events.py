"""Private means private: a subscription, a listen stream and a ``Last-Event-ID`` replay carry
only events of pages the caller may read now, in both protocol eras and on every transport.

The studio 'secret' is invite-only: alice is its admin, bob joined on her invitation, carol is
no member. A non-member is refused a subscription with the answer reading the page gives, and a
listen stream leaves the page out; nothing from before a subscription is replayed; bob, once
removed, hears nothing written after the removal, however he listens; a revoked token's stream
ends."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from flask import Flask

from tests.conftest import module_group
from tests.mcp.conftest import ACCEPT, INIT, Http, app_env, free_port, messages_of
from tests.mcp.test_era_2026 import VERSION, meta
from tests.mcp.test_get_stream import Listener, main_server
from tests.mcp.test_http import _FlaskClient
from tests.mcp.test_stdio import StdioProcess

URI = "harmonic://page/studios/secret/note"
UPDATED = "notifications/resources/updated"
QUIET = 3.0  # seconds of silence that show an event was not delivered
# One worker runs the module's tests of each database (``--dist loadgroup``): one server start.
pytestmark = module_group("mcp-private-events")


@dataclass
class Secret:
    alice: Any  # the studio's admin
    bob: Any  # a member (invited by alice)
    carol: Any  # signed in, no member


@pytest.fixture(scope="module")
def served(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``bin/serve`` for the module's GET /mcp stream tests (per database): each test
    makes its own people, tokens and sessions, and the server keeps nothing of a test but the
    change feed's cursor, which never goes back (ids are not reused)."""
    with main_server(app, tmp_path_factory.mktemp("serve"), free_port(),
                     HARMONIC_STREAM_KEEPALIVE="1") as url:
        yield url


@pytest.fixture
def secret(app: Flask, studio, make_agent) -> Secret:  # type: ignore[no-untyped-def]
    """The invite-only studio 'secret' of alice, bob invited and joined; carol outside."""
    from app.extensions import db
    from app.models import User
    from app.services import studios

    with app.app_context():
        alice = db.session.query(User).filter(User.handle == "alice").one()
        studios.create_studio(alice, handle="secret", name="Secret", join_policy="invite",
                              heartbeats_required=False)
        db.session.commit()
    bob, carol = make_agent("bob"), make_agent("carol")
    invited = studio.act("/studios/secret/team", "invite_member", handle="bob")
    assert invited.status_code == 201, invited.get_data(as_text=True)
    joined = bob.act("/studios/secret/join", "join_studio")
    assert joined.status_code == 200, joined.get_data(as_text=True)
    return Secret(studio, bob, carol)


def _note(secret: Secret, title: str) -> str:
    """alice writes a note in 'secret'; its page's path."""
    made = secret.alice.act("/studios/secret/note", "create_note", title=title, text="private")
    assert made.status_code == 201, made.get_data(as_text=True)
    return str(made.json["location"])


def _remove_bob(secret: Secret) -> None:
    removed = secret.alice.act("/studios/secret/team", "remove_member", handle="bob")
    assert removed.status_code == 200, removed.get_data(as_text=True)


def _session(client: Any, agent: Any) -> Http:
    http = Http("http://localhost", agent.token, _FlaskClient(client))
    http.initialize()
    return http


def _updates(http: Http) -> list[str]:
    """The resources/updated a session is told with its next response."""
    response = http.post({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
    return [m["params"]["uri"] for m in messages_of(response) if m.get("method") == UPDATED]


# -- 2025-11-25: resources/subscribe, told with the session's responses -------------------------

def test_a_non_member_is_refused_a_subscription_with_the_answer_reading_gives(
        client, secret: Secret) -> None:  # type: ignore[no-untyped-def]
    carol = _session(client, secret.carol)
    read = carol.call("resources/read", {"uri": URI})
    subscribed = carol.call("resources/subscribe", {"uri": URI})
    assert "error" in read
    assert subscribed.get("error") == read["error"]
    _note(secret, "Unseen")
    assert _updates(carol) == []
    # The same page of a studio carol belongs to is hers to follow.
    bob = _session(client, secret.bob)
    assert bob.call("resources/subscribe", {"uri": URI})["result"] == {}


def test_a_member_removed_hears_nothing_written_after_the_removal(
        client, secret: Secret) -> None:  # type: ignore[no-untyped-def]
    bob = _session(client, secret.bob)
    assert bob.call("resources/subscribe", {"uri": URI})["result"] == {}
    page = _note(secret, "While a member")
    note = f"harmonic://page{page}"
    assert _updates(bob) == [URI]
    assert bob.call("resources/subscribe", {"uri": note})["result"] == {}
    _remove_bob(secret)
    _note(secret, "After the removal")
    # Its deletion names the page (its address): not told to someone who may not read it.
    deleted = secret.alice.act(page, "delete_note")
    assert deleted.status_code == 200, deleted.get_data(as_text=True)
    assert _updates(bob) == []
    # Written before the removal but not yet told: bob may not read it now either.
    joined_again = secret.alice.act("/studios/secret/team", "invite_member", handle="bob")
    assert joined_again.status_code == 201
    assert secret.bob.act("/studios/secret/join", "join_studio").status_code == 200
    _note(secret, "Back in")
    _remove_bob(secret)
    assert _updates(bob) == []


def test_completions_name_only_studios_the_caller_may_see(
        client, secret: Secret) -> None:  # type: ignore[no-untyped-def]
    ref = {"type": "ref/resource", "uri": "harmonic://page/{+path}"}

    def completed(agent: Any) -> list[str]:
        found = _session(client, agent).call("completion/complete", {
            "ref": ref, "argument": {"name": "path", "value": "studios/"}})
        return list(found["result"]["completion"]["values"])

    assert completed(secret.carol) == ["studios/team"]  # the open studio, not the secret one
    assert completed(secret.bob) == ["studios/secret", "studios/team"]


# -- 2025-11-25: the GET /mcp stream, live and replayed with Last-Event-ID ----------------------

def _silent(listener: Listener, seconds: float = QUIET) -> bool:
    """Whether the stream sends no event (keep-alive comments aside) for ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            item = listener.items.get(timeout=left)
        except queue.Empty:
            return True
        assert item != "closed", "the stream closed"
        if item != "comment":
            return False
    return True


@pytest.mark.slow
def test_a_replay_from_zero_carries_nothing_from_before_the_subscription_or_outside_the_studio(
        served: str, client, secret: Secret) -> None:  # type: ignore[no-untyped-def]
    _note(secret, "History one")
    _note(secret, "History two")
    bob = _session(client, secret.bob)
    assert bob.call("resources/subscribe", {"uri": URI})["result"] == {}
    carol = _session(client, secret.carol)
    url = served
    member = Listener(url, bob, last_event_id=0)
    try:
        assert member.response.status_code == 200
        # Nothing of the studio's history to the member who subscribed after it.
        assert _silent(member)
        _note(secret, "Live")
        event_id, message = member.event()
        assert message["params"]["uri"] == URI
    finally:
        member.close()
    # Reconnecting from zero gives bob the one event since he subscribed, and nothing else.
    again = Listener(url, bob, last_event_id=0)
    try:
        assert again.event()[0] == event_id
        assert _silent(again)
    finally:
        again.close()
    # carol's subscription was refused: her stream, from zero, carries nothing of it.
    assert "error" in carol.call("resources/subscribe", {"uri": URI})
    outsider = Listener(url, carol, last_event_id=0)
    try:
        assert outsider.response.status_code == 200
        _note(secret, "Live again")
        assert _silent(outsider)
    finally:
        outsider.close()


@pytest.mark.slow
def test_a_stream_tells_a_removed_member_nothing_more_live_or_replayed(
        served: str, client, secret: Secret) -> None:  # type: ignore[no-untyped-def]
    bob = _session(client, secret.bob)
    assert bob.call("resources/subscribe", {"uri": URI})["result"] == {}
    url = served
    stream = Listener(url, bob)
    try:
        _note(secret, "While a member")
        heard, _message = stream.event()
        _remove_bob(secret)
        _note(secret, "After the removal")
        assert _silent(stream)
    finally:
        stream.close()
    replayed = Listener(url, bob, last_event_id=heard - 1)
    try:  # what he was told while a member is not his to read again now
        assert _silent(replayed)
    finally:
        replayed.close()


@pytest.mark.slow
def test_a_stream_ends_when_its_token_is_revoked(
        served: str, client, secret: Secret) -> None:  # type: ignore[no-untyped-def]
    bob = _session(client, secret.bob)
    assert bob.call("resources/subscribe", {"uri": URI})["result"] == {}
    url = served
    stream = Listener(url, bob)
    try:
        revoked = secret.bob.act("/u/bob/settings/tokens", "revoke_api_token",
                                 token_id=secret.bob.token[:12])
        assert revoked.status_code == 200, revoked.get_data(as_text=True)
        time.sleep(1.5)  # the server process keeps a resolved token up to a second
        _note(secret, "After the revocation")
        while (item := stream.items.get(timeout=60)) == "comment":
            pass
        assert item == "closed", item  # nothing told: the stream ended
    finally:
        stream.close()


# -- 2026-07-28: subscriptions/listen over HTTP --------------------------------------------------

class ListenStream:
    """A subscriptions/listen stream read on a thread: its messages in a queue."""

    def __init__(self, base: str, token: str, uris: list[str]) -> None:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json",
                   "Authorization": f"Bearer {token}", "MCP-Protocol-Version": VERSION,
                   "Mcp-Method": "subscriptions/listen"}
        body = {"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
                "params": {"_meta": meta(), "notifications": {"resourceSubscriptions": uris}}}
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.client = httpx.Client(timeout=httpx.Timeout(30, read=120))
        self.response = self.client.send(self.client.build_request(
            "POST", base + "/mcp", json=body, headers=headers), stream=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.response.iter_lines():
                if line.startswith("data:"):
                    self.messages.put(json.loads(line[5:]))
        except httpx.HTTPError:
            pass
        self.messages.put(None)

    def next(self, timeout: float = 60) -> dict[str, Any] | None:
        return self.messages.get(timeout=timeout)

    def silent(self, seconds: float = QUIET) -> bool:
        try:
            self.messages.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        self.response.close()
        self.client.close()


@pytest.fixture
def listening(live_server: str) -> Iterator[list[ListenStream]]:
    opened: list[ListenStream] = []
    yield opened
    for stream in opened:
        stream.close()


def _listen(live_server: str, opened: list[ListenStream], token: str,
            uris: list[str]) -> ListenStream:
    stream = ListenStream(live_server, token, uris)
    opened.append(stream)
    return stream


def test_a_listen_stream_leaves_out_what_the_caller_may_not_read(
        live_server: str, listening: list[ListenStream],
        secret: Secret) -> None:
    own = "harmonic://page/studios/team/note"  # a page of the open studio carol joins
    assert secret.carol.act("/studios/team/join", "join_studio").status_code == 200
    stream = _listen(live_server, listening, secret.carol.token, [URI, own])
    ack = stream.next()
    assert ack is not None and ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"resourceSubscriptions": [own]}
    refused = ack["params"]["_meta"]["io.harmonic/refused"]
    assert list(refused) == [URI] and "403" in refused[URI]
    _note(secret, "Unseen")
    assert stream.silent()


def test_a_listen_stream_tells_a_removed_member_nothing_more(
        live_server: str, listening: list[ListenStream], secret: Secret) -> None:
    stream = _listen(live_server, listening, secret.bob.token, [URI])
    ack = stream.next()
    assert ack is not None and ack["params"]["notifications"] == {
        "resourceSubscriptions": [URI]}
    _note(secret, "While a member")
    heard = stream.next()
    assert heard is not None and heard["params"]["uri"] == URI
    _remove_bob(secret)
    _note(secret, "After the removal")
    assert stream.silent()


def test_a_listen_stream_ends_when_its_token_is_revoked(
        live_server: str, listening: list[ListenStream], secret: Secret) -> None:
    stream = _listen(live_server, listening, secret.bob.token, [URI])
    assert stream.next() is not None  # the acknowledgement
    revoked = secret.bob.act("/u/bob/settings/tokens", "revoke_api_token",
                             token_id=secret.bob.token[:12])
    assert revoked.status_code == 200, revoked.get_data(as_text=True)
    _note(secret, "After the revocation")
    ended = stream.next()
    assert ended is not None and ended["error"]["data"]["reason"] == "revoked", ended
    assert stream.next() is None  # and the stream closes


# -- stdio: a 2025 subscription and a listen stream of bin/mcp-server ----------------------------

@pytest.mark.slow
def test_stdio_tells_only_what_its_tokens_person_may_read(
        app: Flask, secret: Secret) -> None:
    bob = StdioProcess(app_env(app, HARMONIC_API_TOKEN=secret.bob.token))
    carol = StdioProcess(app_env(app, HARMONIC_API_TOKEN=secret.carol.token))
    try:
        carol.send({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "_meta": meta(), "notifications": {"resourceSubscriptions": [URI]}}})
        ack = carol.read()
        assert ack["params"]["notifications"] == {}
        assert URI in ack["params"]["_meta"]["io.harmonic/refused"]
        assert "result" in carol.request(2, "initialize", INIT)
        assert "error" in carol.request(3, "resources/subscribe", {"uri": URI})

        assert "result" in bob.request(1, "initialize", INIT)
        assert bob.request(2, "resources/subscribe", {"uri": URI})["result"] == {}
        _note(secret, "While a member")  # written by another process: told through the feed
        assert bob.read() == {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": URI}}
        _remove_bob(secret)
        _note(secret, "After the removal")
        with pytest.raises(queue.Empty):
            bob.lines.get(timeout=QUIET)
        with pytest.raises(queue.Empty):
            carol.lines.get(timeout=0.1)
    finally:
        bob.close()
        carol.close()

"""'Done when' for one path for every change: whatever the door an action comes through (an HTML
form, a Markdown/JSON POST, MCP), an MCP client subscribed to the page hears of it by its next
response; a change recorded in a transaction that rolls back is heard by no one, and no
listener commits anyone's work."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from flask import Flask

from app.actions.effects import WRITE
from app.actions.registry import ACTIONS, action
from app.core import changes, kept
from tests.collab.test_decisions import add, new_decision
from tests.conftest import module_group
from tests.helpers import join_studio
from tests.mcp.conftest import Http, gunicorn, messages_of

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
UPDATED = "notifications/resources/updated"
# One worker runs the module's tests of each database (``--dist loadgroup``): one server start.
pytestmark = module_group("mcp-change-events")


@pytest.fixture(scope="module")
def server(app: Flask) -> Iterator[str]:
    """gunicorn on this database, shared by the module's tests (per database): none of them
    is about the server starting or changes its settings, and each makes its own people,
    tokens, sessions and decision, which the cleanup after each test deletes."""
    with gunicorn(app) as url:
        yield url


@pytest.fixture
def decision(studio, make_agent) -> str:  # type: ignore[no-untyped-def]
    """A decision of studio 'team' with two options; bob (password 'bob-password') joined."""
    make_agent("bob", password="bob-password")
    join_studio(make_agent, "bob")
    path = new_decision(studio)
    add(studio, path, "Park", "Library")
    return path


def _browser_vote(base: str, path: str, handle: str, password: str) -> None:
    """A person signs in and posts the vote form the decision page renders, as a browser does."""
    with httpx.Client(base_url=base, timeout=30) as browser:
        login = browser.get("/login").text
        r = browser.post("/login", data={"login": handle, "password": password,
                                         "csrf_token": CSRF.search(login).group(1)})
        assert r.status_code == 303, r.text
        page = browser.get(path, headers={"Accept": "text/html"}).text
        assert 'data-action="vote"' in page
        r = browser.post(f"{path}/actions/vote",
                         data={"csrf_token": CSRF.search(page).group(1), "option_title": "Park",
                               "accept": "true", "prefer": "false"})
        assert r.status_code == 303, r.text


def _agent_vote(base: str, path: str, token: str) -> None:
    r = httpx.post(f"{base}{path}/actions/vote", json={"option_title": "Library",
                                                       "accept": True},
                   headers={"Authorization": f"Bearer {token}", "Accept": "text/markdown"},
                   timeout=30)
    assert r.status_code == 200, r.text


def _updated_uri(message: Any) -> str | None:
    message = getattr(message, "root", message)
    if getattr(message, "method", None) != UPDATED:
        return None
    return str(message.params.uri)


def test_sdk_subscriber_hears_votes_through_the_form_and_markdown_http(
        server: str, app: Flask, studio, decision: str) -> None:  # type: ignore[no-untyped-def]
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    uri = changes.page_uri(decision)
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        found = _updated_uri(message)
        if found is not None:
            heard.append(found)

    async def heard_by_now(count: int) -> list[str]:
        # The event reaches the client on the ping's response or, if it took the event first,
        # on the session's GET stream (sent before the ping's answer, but read on another
        # connection: the client may hand it over a moment after the ping returns).
        for _ in range(500):
            if len(heard) >= count:
                break
            await asyncio.sleep(0.01)
        return heard

    async def scenario() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {studio.token}"},
                                      timeout=httpx2.Timeout(30.0)) as http_client:
            async with Client(streamable_http_client(server + "/mcp", http_client=http_client),
                              mode="legacy", message_handler=on_message) as client:
                assert client.protocol_version == "2025-11-25"
                await client.subscribe_resource(uri)
                await client.send_ping()
                assert heard == []  # nothing changed since the subscription

                await asyncio.to_thread(_browser_vote, server, decision, "bob", "bob-password")
                await client.send_ping()  # its response carries what changed first
                assert await heard_by_now(1) == [uri]

                await asyncio.to_thread(_agent_vote, server, decision, studio.token)
                await client.send_ping()
                assert await heard_by_now(2) == [uri, uri]

                # A change to a page it does not subscribe to is not sent to it.
                r = await asyncio.to_thread(
                    httpx.post, f"{server}/studios/team/note/actions/create_note",
                    json={"text": "Elsewhere"}, headers={
                        "Authorization": f"Bearer {studio.token}", "Accept": "application/json"})
                assert r.status_code == 201, r.text
                await client.send_ping()
                assert heard == [uri, uri]

    asyncio.run(scenario())


def test_mcp_execute_action_is_heard_by_another_session(
        server: str, studio, decision: str) -> None:  # type: ignore[no-untyped-def]
    """The MCP door is the same path: one session votes, another (subscribed) hears it."""
    listener, actor = Http(server, studio.token), Http(server, studio.token)
    listener.initialize()
    actor.initialize()
    uri = changes.page_uri(decision)
    assert "error" not in listener.call("resources/subscribe", {"uri": uri})
    done = actor.tool("execute_action", action="vote", path=decision,
                      params={"option_title": "Park", "accept": True})
    assert not done.get("isError"), done
    notes = [m for m in messages_of(listener.post({"jsonrpc": "2.0", "id": 99,
                                                   "method": "ping"}))
             if m.get("method") == UPDATED]
    assert [n["params"]["uri"] for n in notes] == [uri]
    # Told once: the next response carries nothing more.
    again = messages_of(listener.post({"jsonrpc": "2.0", "id": 100, "method": "ping"}))
    assert [m for m in again if m.get("method") == UPDATED] == []


# -- rolled back: recorded, then refused --------------------------------------------------------

TRACE = "Written, then refused"


@pytest.fixture
def refusing_action() -> Iterator[str]:
    """An action that writes (a comment), records the change of its page, then is refused.

    Registered in this test process only, for the duration of the test, and reached through
    the ordinary action door (POST <page>/actions/<name>)."""
    from app.services import notes
    from app.services.errors import Conflict

    name = "write_then_refuse"

    @action(name, "Write a comment, then refuse", "decision", lambda ctx: None, effect=WRITE)
    def handler(ctx, p):  # type: ignore[no-untyped-def]
        notes.add_comment(ctx.studio, ctx.user, ctx.extra["item_type"], ctx.item.id, TRACE,
                          base_url=ctx.base_url)
        changes.record(ctx.path, "harmonic://elsewhere")
        raise Conflict("refused after writing and recording")

    try:
        yield name
    finally:
        ACTIONS.pop(name, None)


def _trace_left(app: Flask, studio, path: str) -> bool:  # type: ignore[no-untyped-def]
    return TRACE in studio.get(path).get_data(as_text=True)


def test_a_change_recorded_in_a_rolled_back_transaction_is_never_delivered(
        server: str, app: Flask, studio, decision: str,
        refusing_action: str) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import func, select

    from app.extensions import db
    from app.models.changes import ChangeEvent

    uri = changes.page_uri(decision)
    with app.app_context():
        before = db.session.scalar(select(func.count()).select_from(ChangeEvent))

    # Nobody listening: the refusal leaves no trace.
    r = studio.act(decision, refusing_action)
    assert r.status_code == 409, r.get_data(as_text=True)
    assert not _trace_left(app, studio, decision)

    # Now with a listener in this process and a session subscribed over HTTP (another process).
    heard: list[str] = []
    session = Http(server, studio.token)
    session.initialize()
    session.call("resources/subscribe", {"uri": uri})
    with app.app_context():  # the subscription said so itself (app.core.kept's own event)
        before = db.session.scalar(select(func.count()).select_from(ChangeEvent))
    changes.listen(heard.append)
    try:
        r = studio.act(decision, refusing_action)
        assert r.status_code == 409, r.get_data(as_text=True)
        assert [u for u in heard if not u.startswith(kept.PREFIX)] == []
        # Subscribed or not, the refused action left nothing behind: no listener committed it.
        assert not _trace_left(app, studio, decision)
        with app.app_context():
            after = db.session.scalar(select(func.count()).select_from(ChangeEvent))
        assert after == before
        ping = messages_of(session.post({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
        assert [m for m in ping if m.get("method") == UPDATED] == []

        # The same door, an action that commits: heard here and by the session.
        r = studio.act(decision, "add_comment", text="Kept")
        assert r.status_code == 201, r.get_data(as_text=True)
        assert [u for u in heard if not u.startswith(kept.PREFIX)] == [uri]
        ping = messages_of(session.post({"jsonrpc": "2.0", "id": 8, "method": "ping"}))
        assert [m["params"]["uri"] for m in ping if m.get("method") == UPDATED] == [uri]
    finally:
        changes.unlisten(heard.append)


def test_a_savepoint_rolled_back_forgets_only_its_own_changes(app: Flask) -> None:
    """Recorded inside a savepoint that rolls back: gone; recorded around it: delivered."""
    from app.extensions import db

    heard: list[str] = []
    changes.listen(heard.append)
    try:
        with app.app_context():
            changes.record("/kept-before")
            try:
                with db.session.begin_nested():
                    changes.record("/undone")
                    raise RuntimeError("roll the savepoint back")
            except RuntimeError:
                pass
            with db.session.begin_nested():
                changes.record("/kept-in-savepoint")
            assert heard == []  # nothing before the commit
            db.session.commit()
            changes.record("/rolled-back")
            db.session.rollback()
            db.session.commit()
    finally:
        changes.unlisten(heard.append)
    assert heard == [changes.page_uri("/kept-before"), changes.page_uri("/kept-in-savepoint")]

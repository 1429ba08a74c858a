"""Editing and deleting: who may, what a deletion hides, restoring within the window, the
history of edits, and a studio's two-step deletion, over Markdown/JSON, HTML and MCP."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
from flask import Flask

from app.actions import ACTIONS
from tests.helpers import action_names, join_studio
from tests.lists.conftest import Person, mcp_client, run


def note(agent: Any, title: str = "Plan", text: str = "the plan") -> str:
    r = agent.act("/studios/team/note", "create_note", title=title, text=text)
    assert r.status_code == 201, r.get_data(as_text=True)
    return str(r.json["location"])


def decide(agent: Any, question: str = "Where?", **params: Any) -> str:
    r = agent.act("/studios/team/decide", "create_decision", question=question, **params)
    assert r.status_code == 201, r.get_data(as_text=True)
    return str(r.json["location"])


def commit(agent: Any, title: str = "Lunch") -> str:
    r = agent.act("/studios/team/commit", "create_commitment", title=title, critical_mass=2)
    assert r.status_code == 201, r.get_data(as_text=True)
    return str(r.json["location"])


def md(agent: Any, path: str) -> str:
    return str(agent.get(path).get_data(as_text=True))


def test_the_effects_say_what_each_action_does() -> None:
    importlib.import_module("app.web")  # registers every action
    for name in ("delete_note", "delete_decision", "delete_commitment", "delete_comment",
                 "delete_option", "confirm_studio_deletion"):
        assert ACTIONS[name].effect.destructive, name
    for name in ("restore_item", "restore_studio", "update_comment", "update_option",
                 "cancel_studio_deletion"):
        effect = ACTIONS[name].effect
        assert effect.writes and effect.idempotent and not effect.destructive, name
    schema = ACTIONS["restore_item"].input_schema()
    assert schema["required"] == ["item_type", "id"]
    assert schema["properties"]["item_type"]["enum"] == ["note", "comment", "decision",
                                                         "commitment", "option"]


def test_a_deleted_note_leaves_everything_and_comes_back(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = note(studio, "Gone soon")
    assert studio.act(f"{path}/settings", "pin_note").status_code == 200
    assert "Gone soon" in md(studio, "/studios/team")
    refused = bob.act(path, "delete_note")
    assert refused.status_code == 403
    assert "only the creator or a studio admin" in refused.json["error"]["message"]
    done = studio.act(path, "delete_note")
    assert done.status_code == 200 and done.json["result"]["item_type"] == "note"
    for page in ("/studios/team", "/studios/team/notes", "/studios/team/cycles/this-week"):
        assert "Gone soon" not in md(studio, page), page
    # The deleter reads until when and where it can be restored; bob reads only that it went.
    mine = studio.get(path, accept="application/json")
    assert mine.status_code == 404
    assert "restore it until" in mine.json["error"]["message"]
    assert mine.json["error"]["link"] == "/studios/team/deleted"
    theirs = bob.get(path, accept="application/json")
    assert theirs.status_code == 404 and "was deleted at" in theirs.json["error"]["message"]
    assert "restore" not in theirs.json["error"]["message"]
    assert "Gone soon" not in md(bob, "/studios/team/deleted")
    short = path.rsplit("/", 1)[1]
    assert bob.act("/studios/team/deleted", "restore_item", item_type="note",
                   id=short).status_code == 403
    back = studio.act("/studios/team/deleted", "restore_item", item_type="note", id=short)
    assert back.status_code == 200 and back.json["location"] == path
    assert "Gone soon" in md(studio, "/studios/team")  # pinned again, as it was
    assert "Gone soon" in md(studio, "/studios/team/notes")
    history = md(studio, "/studios/team/history")
    assert f"restore note `{short}`" in history and f"delete note `{short}`" in history


def test_an_admin_may_delete_what_others_made_and_restore_it(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    path = commit(bob, "Bob's lunch")
    assert carol.act(path, "delete_commitment").status_code == 403
    assert "delete_commitment" not in action_names(md(carol, path))
    assert "delete_commitment" in action_names(md(studio, path))  # alice is the admin
    assert studio.act(path, "delete_commitment").status_code == 200
    short = path.rsplit("/", 1)[1]
    # Bob made it but did not delete it: only the deleter or an admin restores.
    assert bob.act("/studios/team/deleted", "restore_item", item_type="commitment",
                   id=short).status_code == 403
    assert studio.act("/studios/team/deleted", "restore_item", item_type="commitment",
                      id=short).status_code == 200
    again = studio.act("/studios/team/deleted", "restore_item", item_type="commitment",
                       id=short)
    assert again.status_code == 409 and "not deleted" in again.json["error"]["message"]


def test_the_restore_window_closes(app: Flask, studio, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    path = decide(studio)
    assert studio.act(path, "delete_decision").status_code == 200
    monkeypatch.setitem(app.config, "HARMONIC_RESTORE_DAYS", 0)
    late = studio.act("/studios/team/deleted", "restore_item", item_type="decision",
                      id=path.rsplit("/", 1)[1])
    assert late.status_code == 409 and "restore window" in late.json["error"]["message"]
    r = studio.get(path, accept="application/json")
    assert r.status_code == 404 and "restore" not in r.json["error"]["message"]


def test_decisions_and_commitments_edited_by_creator_or_admin(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    path = decide(bob, "Lunch where?", description="first")
    settings = f"{path}/settings"
    refused = carol.act(settings, "update_decision_settings", question="Hijacked")
    assert refused.status_code == 403
    assert "only the creator or a studio admin" in refused.json["error"]["message"]
    assert bob.act(settings, "update_decision_settings", question="Lunch where, Friday?",
                   description="second").status_code == 200
    assert studio.act(settings, "update_decision_settings",  # the admin
                      description="third").status_code == 200
    short = path.rsplit("/", 1)[1]
    history = md(studio, f"/studios/team/history?item=decision:{short}")
    assert "question: Lunch where? → Lunch where, Friday?" in history
    assert "[Alice](/u/alice) edit decision" in history and "description: second → third" in history
    assert "History" in Person(studio.client.application, "bob").page(path)
    cpath = commit(bob)
    assert carol.act(f"{cpath}/settings", "update_commitment_settings",
                     title="Nope").status_code == 403
    assert studio.act(f"{cpath}/settings", "update_commitment_settings",
                      title="Dinner").status_code == 200
    assert "title: Lunch → Dinner" in md(
        studio, f"/studios/team/history?item=commitment:{cpath.rsplit('/', 1)[1]}")
    bad = studio.get("/studios/team/history?item=decision:ffffffff", accept="application/json")
    assert bad.status_code == 422 and bad.json["error"]["errors"][0]["param"] == "item"


def test_comments_edited_by_author_deleted_by_author_or_admin(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    path = decide(studio)
    made = bob.act(path, "add_comment", text="first thought")
    comment = made.json["result"]["id"]
    assert f"comment `{comment}`" in md(bob, path)
    assert "update_comment" in action_names(md(bob, path))
    assert "update_comment" not in action_names(md(carol, path))
    # carol has no comment here: the action is not offered, and a direct call says why
    refused = carol.act(path, "update_comment", comment_id=comment, text="carol's words")
    assert refused.status_code == 409
    assert carol.act(path, "add_comment", text="mine").status_code == 201
    refused = carol.act(path, "update_comment", comment_id=comment, text="carol's words")
    assert refused.status_code == 403
    assert "only the comment's author" in refused.json["error"]["message"]
    assert bob.act(path, "update_comment", comment_id=comment,
                   text="second thought").status_code == 200
    page = md(studio, path)
    assert "second thought" in page and "first thought" not in page and "edited" in page
    history = md(studio, f"/studios/team/history?item=decision:{path.rsplit('/', 1)[1]}")
    assert "text: first thought → second thought" in history
    assert carol.act(path, "delete_comment", comment_id=comment).status_code == 403
    missing = bob.act(path, "update_comment", comment_id="00000000", text="x")
    assert missing.status_code == 404 and missing.json["error"]["errors"][0]["param"] == \
        "comment_id"
    assert studio.act(path, "delete_comment", comment_id=comment).status_code == 200
    assert "second thought" not in md(bob, path)
    assert "Comments (1)" in md(bob, path)
    back = studio.act("/studios/team/deleted", "restore_item", item_type="comment", id=comment)
    assert back.status_code == 200 and back.json["location"] == f"{path}#comment-{comment}"
    assert "second thought" in md(bob, path)


def test_options_change_only_before_anyone_votes(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    carol = join_studio(make_agent, "carol")
    path = decide(studio, options=["Cafe", "Park"])
    assert bob.act(path, "add_option", title="Beach").status_code == 201
    refused = carol.act(path, "update_option", option_title="Beach", new_title="Mine")
    assert refused.status_code == 403 and "before anyone has voted" in \
        refused.json["error"]["message"]
    assert bob.act(path, "update_option", option_title="Beach",
                   new_title="Lake").status_code == 200  # the proposer
    clash = bob.act(path, "update_option", option_title="Lake", new_title="Park")
    assert clash.status_code == 409
    assert studio.act(path, "update_option", option_title="Cafe",  # the decision's creator
                      new_title="Café").status_code == 200
    ballot = [{"option_title": "Park", "accept": True}]
    assert carol.act(path, "vote", votes=ballot).status_code == 200
    voted = studio.act(path, "delete_option", option_title="Park")
    assert voted.status_code == 409 and "someone has voted" in voted.json["error"]["message"]
    gone = bob.act(path, "delete_option", option_title="Lake")
    assert gone.status_code == 200
    page = md(studio, path)
    assert "Lake" not in page and "Café" in page and "Park" in page
    taken = bob.act(path, "add_option", title="Lake")
    assert taken.status_code == 409 and "restore it" in taken.json["error"]["message"]
    option_id = gone.json["result"]["id"]
    assert bob.act("/studios/team/deleted", "restore_item", item_type="option",
                   id=option_id).status_code == 200
    assert "Lake" in md(studio, path)
    assert studio.act(path, "close_decision").status_code == 200
    closed = studio.act(path, "delete_option", option_title="Lake")
    assert closed.status_code == 409


def test_a_studio_is_deleted_in_two_steps_with_a_grace_period(  # type: ignore[no-untyped-def]
        app: Flask, studio, make_agent, monkeypatch: pytest.MonkeyPatch) -> None:
    bob = join_studio(make_agent, "bob")
    settings = "/studios/team/settings"
    assert bob.act(settings, "request_studio_deletion").status_code == 403
    early = studio.act(settings, "confirm_studio_deletion", handle="team")
    assert early.status_code == 409 and "request_studio_deletion" in \
        early.json["error"]["message"]
    assert studio.act(settings, "request_studio_deletion").status_code == 200
    assert "Deletion was requested at" in md(studio, settings)
    assert studio.act(settings, "cancel_studio_deletion").status_code == 200
    assert studio.act(settings, "request_studio_deletion").status_code == 200
    wrong = studio.act(settings, "confirm_studio_deletion", handle="nope")
    assert wrong.status_code == 422 and wrong.json["error"]["errors"][0]["param"] == "handle"
    assert md(bob, "/studios/team").startswith("---")  # still there until confirmed
    done = studio.act(settings, "confirm_studio_deletion", handle="team")
    assert done.status_code == 200 and done.json["location"] == "/studios"
    for agent in (bob, studio):
        r = agent.get("/studios/team/notes", accept="application/json")
        assert r.status_code == 404
    assert "team" not in md(bob, "/studios") and "[Team]" not in md(studio, "/studios")
    admin_view = studio.get("/studios/team", accept="application/json")
    assert "restore it until" in admin_view.json["error"]["message"]
    assert bob.get(settings).status_code == 404
    assert action_names(md(studio, settings)).count("restore_studio") == 1
    assert "This studio was deleted at" in md(studio, settings)
    blocked = studio.act(settings, "update_studio_settings", name="Still here")
    assert blocked.status_code == 409 and "restore it first" in blocked.json["error"]["message"]
    assert studio.act(settings, "restore_studio").status_code == 200
    assert md(bob, "/studios/team").startswith("---")
    # After the grace period a deleted studio is gone for everyone, its admins too.
    assert studio.act(settings, "request_studio_deletion").status_code == 200
    assert studio.act(settings, "confirm_studio_deletion", handle="team").status_code == 200
    monkeypatch.setitem(app.config, "HARMONIC_STUDIO_DELETE_GRACE_DAYS", 0)
    r = studio.get(settings, accept="application/json")
    assert r.status_code == 404 and r.json["error"]["message"] == "no studio 'team'"


def test_html_forms_delete_and_restore(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = decide(bob, "Via the browser")
    alice = Person(app, "alice")
    r = alice.act(path, "delete_decision")
    assert r.status_code == 303 and r.headers["Location"] == "/studios/team/decisions"
    assert "Via the browser" not in alice.page("/studios/team/decisions")
    deleted = alice.page("/studios/team/deleted")
    assert "Via the browser" in deleted
    r = alice.act("/studios/team/deleted", "restore_item", item_type="decision",
                  id=path.rsplit("/", 1)[1])
    assert r.status_code == 303 and r.headers["Location"] == path
    person_bob = Person(app, "bob")
    carols = commit(studio, "Alice plan")
    html = person_bob.page(carols)
    assert 'data-action="delete_commitment"' not in html
    forged = person_bob.client.post(f"{carols}/actions/delete_commitment",
                                    data={"csrf_token": "x"}, headers={"Accept": "text/html"})
    assert forged.status_code in (400, 403)
    assert "Alice plan" in person_bob.page("/studios/team/commitments")


def test_mcp_execute_action_deletes_and_restores(app: Flask, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = join_studio(make_agent, "bob")
    path = decide(studio, "Over MCP")
    short = path.rsplit("/", 1)[1]

    async def scenario() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with mcp_client(app, bob.token) as client:
            refused = await client.call_tool("execute_action", {
                "action": "delete_decision", "path": path, "params": {}})
            found["refused"] = refused.structured_content
        async with mcp_client(app, studio.token) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "execute_action" in tools
            done = await client.call_tool("execute_action", {
                "action": "delete_decision", "path": path, "params": {}})
            found["done"] = done.structured_content
            missing = await client.call_tool("navigate", {"path": path})
            found["missing"] = missing.structured_content or {}
            found["missing_text"] = "".join(getattr(b, "text", "") for b in missing.content)
            back = await client.call_tool("execute_action", {
                "action": "restore_item", "path": "/studios/team/deleted",
                "params": {"item_type": "decision", "id": short}})
            found["back"] = back.structured_content
            again = await client.call_tool("navigate", {"path": path})
            found["again"] = again.content[0].text
        return found

    found = run(scenario())
    assert found["refused"]["ok"] is False
    assert "creator or a studio admin" in found["refused"]["message"]
    assert found["done"]["ok"] is True and found["done"]["result"]["id"] == short
    assert "answered 404" in found["missing_text"]
    assert "was deleted at" in found["missing_text"] and "restore it until" in found["missing_text"]
    assert found["back"]["ok"] is True and found["back"]["location"] == path
    assert "# Decision: Over MCP" in found["again"]


def test_outsiders_and_read_only_tokens_change_nothing(studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    path = note(studio, "Kept")
    assert studio.act(path, "delete_note").status_code == 200
    short = path.rsplit("/", 1)[1]
    outsider = make_agent("mallory")
    for page, action, params in ((path, "delete_note", {}),
                                 ("/studios/team/deleted", "restore_item",
                                  {"item_type": "note", "id": short}),
                                 ("/studios/team/settings", "request_studio_deletion", {})):
        r = outsider.act(page, action, **params)
        assert r.status_code in (403, 404), (action, r.get_data(as_text=True))
    assert outsider.get("/studios/team/deleted").status_code == 403
    assert outsider.get("/studios/team/history").status_code == 403
    reader = make_agent("alice", scopes="read")
    r = reader.act("/studios/team/deleted", "restore_item", item_type="note", id=short)
    assert r.status_code == 403 and "write" in r.get_data(as_text=True)
    assert "Kept" not in md(studio, "/studios/team/notes")  # nothing was restored


def test_note_title_edits_and_history_pages(studio) -> None:  # type: ignore[no-untyped-def]
    path = note(studio, "First title", "body")
    for i in range(3):
        r = studio.act(f"{path}/edit", "update_note", title=f"Title {i}")
        assert r.status_code == 200, r.get_data(as_text=True)
    assert "title: Title 2\n" in md(studio, path)
    short = path.rsplit("/", 1)[1]
    seen: list[str] = []
    page = f"/studios/team/history?item=note:{short}&limit=2"
    while page:
        body = md(studio, page)
        seen += [line for line in body.splitlines() if "edit note" in line]
        found = re.search(r"^next: \[Next page\]\(([^)]+)\)$", body, re.M)
        page = found.group(1) if found else ""
    assert len(seen) == 3
    assert "title: Title 1 → Title 2" in seen[0] and "title: First title → Title 0" in seen[2]


def test_mcp_edits_comments_and_options_and_deletes_a_studio(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    path = decide(studio, "Via the SDK", options=["One", "Two"])
    comment = studio.act(path, "add_comment", text="draft").json["result"]["id"]
    settings = "/studios/team/settings"

    async def call(client: Any, action: str, page: str, **params: Any) -> dict[str, Any]:
        done = await client.call_tool("execute_action", {"action": action, "path": page,
                                                         "params": params})
        return dict(done.structured_content)

    async def scenario() -> list[dict[str, Any]]:
        async with mcp_client(app, studio.token) as client:
            return [
                await call(client, "update_comment", path, comment_id=comment, text="final"),
                await call(client, "update_option", path, option_title="One",
                           new_title="Uno"),
                await call(client, "delete_option", path, option_title="Two"),
                await call(client, "request_studio_deletion", settings),
                await call(client, "confirm_studio_deletion", settings, handle="team"),
                await call(client, "restore_studio", settings),
            ]

    results = run(scenario())
    assert [r["ok"] for r in results] == [True] * 6, results
    page = md(studio, path)
    assert "final" in page and "draft" not in page and "Uno" in page and "Two" not in page

"""Search over HTTP (HTML and Markdown): ranking, filters, pagination, highlighting,
authorization and an index that follows every write, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tests.helpers import parse_md
from tests.search.conftest import commitment, decision, note


def md(agent: Any, path: str) -> tuple[int, dict[str, Any], str]:
    response = agent.get(path)
    text = response.get_data(as_text=True)
    front, body = parse_md(text)
    return response.status_code, front, body


def links(body: str) -> list[str]:
    import re

    return re.findall(r"^\d+\. \[.*?\]\((/[^)]+)\)", body, re.M)


def test_the_right_items_found_best_first(team: dict[str, Any]) -> None:
    alice, bob = team["alice"], team["bob"]
    title_hit = note(alice, "Lunch plans", "Where shall we eat on Friday?")
    body_hit = note(bob, "Weekly update", "Many things happened. Also lunch was late once.")
    note(alice, "Unrelated", "Nothing to see here")
    chosen = decision(alice, "Where do we have lunch?", "Pick a place",
                      options=["Pizza place", "Noodle bar"])
    status, front, body = md(alice, "/search?q=lunch")
    assert status == 200 and front["path"] == "/search"
    found = links(body)
    assert set(found) == {title_hit, body_hit, chosen}
    # A word in the title outranks the same word once in a long body.
    assert found.index(body_hit) > found.index(title_hit)
    # Stems: "lunches" finds "lunch"; all words must occur.
    assert set(links(md(alice, "/search?q=lunches")[2])) == {title_hit, body_hit, chosen}
    assert links(md(alice, "/search?q=lunch+friday")[2]) == [title_hit]
    # Options are found by their title and lead to their decision.
    assert links(md(bob, "/search?q=noodle")[2]) == [chosen]
    # A phrase must occur as such.
    assert links(md(alice, '/search?q="lunch+was+late"')[2]) == [body_hit]
    assert links(md(alice, '/search?q="late+lunch"')[2]) == []


def test_filters(team: dict[str, Any], app: Any) -> None:
    alice, bob = team["alice"], team["bob"]
    open_one = decision(alice, "Lunch venue?", "open question")
    closed_one = decision(bob, "Lunch budget?", "closed question")
    assert bob.act(closed_one, "close_decision").status_code == 200
    plan = commitment(bob, "Lunch rota", "cook for everyone")
    memo = note(bob, "Lunch memo", "remember lunch")
    assert set(links(md(alice, "/search?q=lunch+kind:decision")[2])) == {open_one, closed_one}
    assert links(md(alice, "/search?q=lunch+kind:decision+status:open")[2]) == [open_one]
    assert links(md(alice, "/search?q=lunch+status:closed")[2]) == [closed_one]
    assert set(links(md(alice, "/search?q=lunch+author:@bob")[2])) == {closed_one, plan, memo}
    assert set(links(md(alice, "/search?q=kind:commitment,note+author:bob")[2])) == {plan, memo}
    assert len(links(md(alice, "/search?q=lunch+studio:team")[2])) == 4
    # Filters alone list the newest first.
    assert links(md(alice, "/search?q=kind:note")[2]) == [memo]


def test_bad_queries_are_clear_errors(team: dict[str, Any]) -> None:
    alice = team["alice"]
    status, _front, body = md(alice, "/search?q=lunch+colour:red")
    assert status == 422
    assert "unknown filter 'colour:'" in body
    for name in ("kind:", "status:", "author:", "studio:"):
        assert name in body
    assert md(alice, "/search?q=kind:spaceship")[0] == 422
    assert "is not a kind" in md(alice, "/search?q=kind:spaceship")[2]
    assert md(alice, "/search?q=status:maybe")[0] == 422
    assert md(alice, "/search?q=lunch&page=0")[0] == 422
    assert md(alice, "/search?q=lunch&page=x")[0] == 422
    assert md(alice, "/search?q=lunch&limit=500")[0] == 422
    assert md(alice, "/search?q=lunch&page=10000")[0] == 422
    html = alice.client.get("/search?q=colour:red", headers=alice.headers("text/html"))
    assert html.status_code == 422 and "unknown filter" in html.get_data(as_text=True)
    # Quoting makes a colon plain text; FTS syntax in the words is plain text too.
    assert md(alice, '/search?q="colour:red"')[0] == 200
    for hostile in ('lunch OR', 'NEAR(a b)', '"', 'a*', '-x', "'; drop table notes; --"):
        assert md(alice, f"/search?q={quote(hostile)}")[0] == 200, hostile


def test_pages_follow_next_links_without_repeats(team: dict[str, Any]) -> None:
    alice = team["alice"]
    made = {note(alice, f"Pasta recipe {i}", "pasta " * (i + 1)) for i in range(7)}
    seen: list[str] = []
    path: str | None = "/search?q=pasta&limit=3"
    pages = 0
    while path:
        _status, _front, body = md(alice, path)
        found = links(body)
        assert len(found) <= 3
        seen += found
        pages += 1
        nxt = [line for line in body.splitlines() if line.startswith("next: ")]
        path = nxt[0].split("](", 1)[1].rstrip(")") if nxt else None
    assert pages == 3 and len(seen) == 7 and set(seen) == made


def test_highlights_are_escaped(team: dict[str, Any]) -> None:
    alice = team["alice"]
    note(alice, "<script>alert(1)</script> lunch", "<img src=x onerror=alert(2)> lunch "
             "<b>bold</b> \ue000fake\ue001 mark")
    html = alice.client.get("/search?q=lunch", headers=alice.headers("text/html"))
    page = html.get_data(as_text=True)
    assert html.status_code == 200
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<mark>lunch</mark>" in page
    assert "\ue000" not in page and "<mark>fake</mark>" not in page
    _status, _front, body = md(alice, "/search?q=lunch")
    assert "**lunch**" in body and "<img" not in body.replace("\\<img", "")
    assert "**fake**" not in body


def test_non_members_find_nothing(team: dict[str, Any]) -> None:
    alice, mallory = team["alice"], team["mallory"]
    secret = note(alice, "Secret lunch", "the team's lunch")
    mine = note(mallory, "Mallory lunch", "my own lunch", studio="other")
    assert links(md(mallory, "/search?q=lunch")[2]) == [mine]
    assert links(md(mallory, "/search?q=lunch+studio:team")[2]) == []
    assert "no studio 'team' among the studios you can read" in \
        md(mallory, "/search?q=lunch+studio:team")[2]
    # The same words for a studio that does not exist.
    assert "no studio 'nowhere' among" in md(mallory, "/search?q=lunch+studio:nowhere")[2]
    assert mallory.get("/studios/team/search?q=lunch").status_code == 403
    assert links(md(alice, "/search?q=lunch")[2]) == [secret]
    assert links(md(alice, "/studios/team/search?q=lunch")[2]) == [secret]
    # Signed out: the sign-in answer, never results.
    assert alice.client.get("/search?q=lunch", headers={"Accept": "text/markdown"}
                            ).status_code == 401


def test_studio_search_page(team: dict[str, Any]) -> None:
    alice, mallory = team["alice"], team["mallory"]
    ours = note(alice, "Bicycle shed", "colour of the bicycle shed")
    # alice joins mallory's open studio: the studio page searches only that studio.
    assert alice.act("/studios/other/join", "join_studio").status_code == 200
    theirs = note(mallory, "Bicycle rack", "a bicycle rack", studio="other")
    assert set(links(md(alice, "/search?q=bicycle")[2])) == {ours, theirs}
    status, front, body = md(alice, "/studios/team/search?q=bicycle")
    assert status == 200 and front["path"] == "/studios/team/search"
    assert links(body) == [ours]
    assert md(alice, "/studios/team/search?q=bicycle+studio:other")[0] == 422
    html = alice.client.get("/studios/team/search?q=bicycle",
                            headers=alice.headers("text/html")).get_data(as_text=True)
    assert 'action="/studios/team/search"' in html and ours in html and theirs not in html


def test_index_follows_edits_and_soft_deletes(team: dict[str, Any], app: Any) -> None:
    alice = team["alice"]
    path = note(alice, "Garden party", "bring flowers")
    assert links(md(alice, "/search?q=flowers")[2]) == [path]
    edited = alice.act(f"{path}/edit", "update_note", title="Garden party", text="bring cake")
    assert edited.status_code == 200, edited.get_data(as_text=True)
    assert links(md(alice, "/search?q=flowers")[2]) == []
    assert links(md(alice, "/search?q=cake")[2]) == [path]
    comment = alice.act(path, "add_comment", text="I will bring lemonade")
    assert comment.status_code == 201, comment.get_data(as_text=True)
    found = links(md(alice, "/search?q=lemonade+kind:comment")[2])
    assert len(found) == 1
    # Soft delete (the deleted_at convention shared with editing and deleting): the item and
    # its comments leave the index and come back when restored, whichever code sets it.
    set_deleted(app, path, True)
    assert links(md(alice, "/search?q=cake")[2]) == []
    assert links(md(alice, "/search?q=lemonade")[2]) == []
    set_deleted(app, path, False)
    assert links(md(alice, "/search?q=cake")[2]) == [path]
    assert links(md(alice, "/search?q=lemonade")[2]) == found


def set_deleted(app: Any, path: str, deleted: bool) -> None:
    """Set or clear a note's ``deleted_at`` column directly (as any code path might; the
    edit to updated_at makes the note part of the flush either way)."""
    from datetime import UTC, datetime

    from app.extensions import db
    from app.models import Note

    with app.app_context():
        item = db.session.query(Note).filter(Note.short_id == path.rsplit("/", 1)[1]).one()
        item.deleted_at = datetime.now(UTC) if deleted else None  # type: ignore[attr-defined]
        item.updated_at = datetime.now(UTC)
        db.session.commit()


def test_failed_write_leaves_index_unchanged(team: dict[str, Any], app: Any) -> None:
    from app.extensions import db
    from app.models import Note, Studio, User

    with app.app_context():
        studio = db.session.query(Studio).filter(Studio.handle == "team").one()
        user = db.session.query(User).filter(User.handle == "alice").one()
        item = Note(studio_id=studio.id, title="Rolled back", text="zeppelin",
                    created_by_id=user.id, updated_by_id=user.id)
        item.assign_ids()
        db.session.add(item)
        db.session.flush()  # the index row is written in this transaction ...
        db.session.rollback()  # ... and goes with it
    assert links(md(team["alice"], "/search?q=zeppelin")[2]) == []


def test_reindex_command_rebuilds(team: dict[str, Any], app: Any) -> None:
    from app.extensions import db
    from app.models.search import SearchDocument

    alice = team["alice"]
    path = note(alice, "Harbour walk", "boats and gulls")
    decision(alice, "Which harbour?", options=["North quay"])
    with app.app_context():
        db.session.query(SearchDocument).delete()
        db.session.commit()
    assert links(md(alice, "/search?q=gulls")[2]) == []
    result = app.test_cli_runner().invoke(args=["search-reindex", "--if-empty"])
    assert result.exit_code == 0, result.output
    assert links(md(alice, "/search?q=gulls")[2]) == [path]
    again = app.test_cli_runner().invoke(args=["search-reindex", "--if-empty"])
    assert again.exit_code == 0 and "nothing to do" in again.output
    result = app.test_cli_runner().invoke(args=["search-reindex"])
    assert result.exit_code == 0, result.output
    assert "indexed" in result.output
    assert links(md(alice, "/search?q=gulls")[2]) == [path]
    assert len(links(md(alice, "/search?q=quay")[2])) == 1
    # Workflow playbooks of the catalog are found by every signed-in person.
    assert "/workflows/" in md(team["mallory"], "/search?q=kind:workflow")[2]


def test_html_page_has_a_labelled_form_and_results(team: dict[str, Any]) -> None:
    alice = team["alice"]
    path = note(alice, "Quarterly review", "the numbers")
    html = alice.client.get("/search?q=quarterly", headers=alice.headers("text/html"))
    page = html.get_data(as_text=True)
    assert html.status_code == 200
    assert '<label for="search-page-q">' in page and 'id="search-box-q"' in page
    assert f'href="{path}"' in page and "<mark>Quarterly</mark>" in page


def test_every_kind_is_found(team: dict[str, Any], app: Any) -> None:
    """Floorplans, commitments, comments and playbooks (seen by their owner and, once shared,
    by the studio) are indexed as they are written; a decision closing changes its status."""
    from tests.floorplans.test_fp_pages import PLAN

    alice, bob, mallory = team["alice"], team["bob"], team["mallory"]
    made = alice.act("/studios/team/floorplans", "create_floorplan", name="office", dsl=PLAN)
    assert made.status_code == 201, made.get_data(as_text=True)
    assert links(md(bob, "/search?q=storage+kind:floorplan")[2]) == ["/studios/team/f/office"]
    plan = commitment(bob, "Clean the storage room", "every friday")
    assert links(md(alice, "/search?q=storage+kind:commitment")[2]) == [plan]
    question = decision(alice, "Paint the storage room?", options=["Blue"])
    assert links(md(alice, "/search?q=storage+kind:decision+status:open")[2]) == [question]
    assert links(md(alice, "/search?q=blue+status:open")[2]) == [question]  # its option
    assert alice.act(question, "close_decision").status_code == 200
    assert links(md(alice, "/search?q=storage+kind:decision+status:open")[2]) == []
    assert links(md(alice, "/search?q=blue+kind:option+status:closed")[2]) == [question]

    from app.extensions import db
    from app.models import Studio, User
    from app.models.playbooks import Playbook, RecipeVersion

    with app.app_context():
        owner = db.session.query(User).filter(User.handle == "mallory").one()
        playbook = Playbook(name="rebar layout", session_id="s-rebar", owner="user:x",
                            user_id=owner.id)
        playbook.assign_ids()
        db.session.add(playbook)
        db.session.flush()
        version = RecipeVersion(playbook_id=playbook.id, version="1", digest="d" * 64,
                                content={"steps": [{"method": "place_rebar",
                                                    "description": "stirrups every 200 mm"}]},
                                state="draft")
        version.assign_ids()
        db.session.add(version)
        db.session.commit()
        playbook_path = f"/playbooks/{playbook.short_id}"
    assert links(md(mallory, "/search?q=stirrups")[2]) == [playbook_path]
    assert links(md(mallory, "/search?q=stirrups+status:draft")[2]) == [playbook_path]
    assert links(md(alice, "/search?q=stirrups")[2]) == []
    with app.app_context():
        found = db.session.query(Playbook).filter(Playbook.short_id == playbook_path[-8:]).one()
        found.studio_id = db.session.query(Studio).filter(Studio.handle == "team").one().id
        db.session.commit()
    assert links(md(alice, "/search?q=stirrups+kind:playbook")[2]) == [playbook_path]
    with app.app_context():
        version = db.session.query(RecipeVersion).one()
        version.state = "approved"
        db.session.commit()
    assert links(md(alice, "/search?q=stirrups+status:approved")[2]) == [playbook_path]


def test_hard_deleted_items_leave_the_index(team: dict[str, Any], app: Any) -> None:
    from app.extensions import db
    from app.models import Note, NoteEvent

    alice = team["alice"]
    path = note(alice, "Temporary", "ephemeral words")
    comment = alice.act(path, "add_comment", text="ephemeral reply")
    assert comment.status_code == 201
    assert len(links(md(alice, "/search?q=ephemeral")[2])) == 2
    with app.app_context():
        parent = db.session.query(Note).filter(Note.short_id == path.rsplit("/", 1)[1]).one()
        notes = [parent, *db.session.query(Note).filter(Note.commentable_id == parent.id)]
        db.session.query(NoteEvent).filter(NoteEvent.note_id.in_([n.id for n in notes])
                                           ).delete()
        db.session.delete(parent)  # its comment leaves the index with it
        db.session.commit()
    assert links(md(alice, "/search?q=ephemeral")[2]) == []
    with app.app_context():
        db.session.delete(db.session.query(Note).one())
        db.session.commit()
    assert links(md(alice, "/search?q=ephemeral")[2]) == []


def test_concurrent_writers_of_one_item_keep_the_index_whole(team: dict[str, Any],
                                                              app: Any) -> None:
    """Eight people add options to one decision and edit one note at the same moment: every
    write succeeds and the index holds each option and the note's last text once."""
    from app.extensions import db
    from tests.collab.test_concurrency import run_together

    alice, bob = team["alice"], team["bob"]
    question = decision(alice, "Team dinner where?")
    path = note(alice, "Dinner notes", "first draft")
    calls = [(bob if i % 2 else alice, f"{question}/actions/add_option",
              {"title": f"Restaurant {i}"}) for i in range(8)]
    calls += [(alice, f"{path}/edit/actions/update_note", {"title": "Dinner notes",
                                                           "text": f"draft {i} venison"})
              for i in range(4)]
    outcomes = run_together(app, calls)
    assert all(code in (200, 201) for code, _ in outcomes), outcomes
    assert links(md(alice, "/search?q=restaurant&limit=50")[2]) == [question] * 8
    assert links(md(alice, "/search?q=venison")[2]) == [path]
    with app.app_context():
        from app.models.search import SearchDocument

        kinds = [d.kind for d in db.session.query(SearchDocument)]
        assert kinds.count("option") == 8 and kinds.count("note") == 1


def test_deleted_items_are_not_found_until_restored(team: dict[str, Any]) -> None:
    """Deleting through the real actions (not just the column) takes an item out of search,
    for its author and for other members; restoring brings it back."""
    alice, bob = team["alice"], team["bob"]
    path = note(alice, "Compost rota", "turn the compost heap weekly")
    made = decision(alice, "Which compost bin?", options=["Wooden heap bin", "Plastic"])
    assert links(md(bob, "/search?q=compost")[2]) and len(links(md(bob, "/search?q=heap")[2])) == 2

    gone = alice.act(path, "delete_note")
    assert gone.status_code == 200, gone.get_data(as_text=True)
    removed = alice.act(made, "delete_decision")
    assert removed.status_code == 200, removed.get_data(as_text=True)
    for agent in (alice, bob):
        assert links(md(agent, "/search?q=heap")[2]) == []
        assert links(md(agent, "/search?q=compost+kind:note,decision")[2]) == []

    restored = alice.act("/studios/team/deleted", "restore_item", item_type="note",
                         id=gone.get_json()["result"]["id"])
    assert restored.status_code == 200, restored.get_data(as_text=True)
    assert links(md(bob, "/search?q=heap")[2]) == [path]

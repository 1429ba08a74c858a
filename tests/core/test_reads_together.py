"""Reads sent together (app.models.plain_reads.together). On PostgreSQL a block's reads go out
in one pipeline and each read inside the block takes its answer, the same rows it would get
alone; answers are dropped when the session holds changes a read must see, and when the block
ends; a failed pipeline leaves the reads to be made as usual. SQLite sends nothing ahead. Reads
sent ``ahead`` (no block: the sign-in sends a page's first reads with the person's) are taken
the same way, and dropped when the request writes, even through Core, or its session ends.
Then the item pages over HTTP: a decision, a commitment and a note show the same at every view,
the first view made a read at a time (a statement is prepared at its second run), the later
ones with their reads together; and a studio page's first reads, sent with the person's, come
back as the page's own reads would. On both backends."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import bindparam, column, exc, func, select, table, update
from sqlalchemy.orm import Session

from app.extensions import db
from app.models import User, plain_reads
from app.models.plain_reads import Read
from app.models.playbooks import Playbook
from app.services import items, studios
from tests.helpers import join_studio, parse_md, playbook_row

OWNED = select(Playbook.owner, Playbook.entries).where(
    Playbook.owner == bindparam("owner")).order_by(Playbook.entries)
COUNT = select(func.count(Playbook.id)).where(Playbook.teaching == bindparam("teaching"))
MISSING = select(column("x")).select_from(table("no_such_table"))
BOTH = (Read(COUNT, {"teaching": False}), Read(OWNED, {"owner": "amy"}))


def _sent_ahead(count: int) -> int:
    """What ``answers_waiting`` should say with ``count`` reads just sent together."""
    return count if db.engine.dialect.name == "postgresql" else 0


def _seed() -> tuple[list[tuple[Any, ...]], int]:
    db.session.add_all([playbook_row("amy", 2), playbook_row("amy", 1), playbook_row("bob", 3),
                        playbook_row("cy", 4, teaching=True)])
    db.session.commit()
    for _ in range(2):  # a statement goes to the driver's cursor from its second run
        owned = [tuple(row) for row in plain_reads.execute(OWNED, {"owner": "amy"})]
        count = plain_reads.scalar(COUNT, {"teaching": False})
    return owned, count


def test_reads_in_the_block_take_the_answers_sent_together(app: Flask) -> None:
    with app.app_context():
        owned, count = _seed()
        assert owned == [("amy", 1), ("amy", 2)] and count == 3
        with plain_reads.together(Read(OWNED, {"owner": "amy"}), None,
                                  Read(COUNT, {"teaching": False})):
            assert plain_reads.answers_waiting() == _sent_ahead(2)
            # Other parameters are not the answer sent: this one is asked for.
            assert [tuple(r) for r in plain_reads.execute(OWNED, {"owner": "bob"})] == [
                ("bob", 3)]
            assert plain_reads.answers_waiting() == _sent_ahead(2)
            rows = plain_reads.execute(OWNED, {"owner": "amy"})
            assert [tuple(r) for r in rows] == owned and rows[0].entries == 1
            assert plain_reads.answers_waiting() == _sent_ahead(1)
            assert plain_reads.scalar(COUNT, {"teaching": False}) == count
            assert plain_reads.answers_waiting() == 0
            # Taken once: the same read again is asked for again.
            assert plain_reads.scalar(COUNT, {"teaching": False}) == count
        db.session.remove()


def test_changes_the_session_holds_drop_the_answers(app: Flask) -> None:
    with app.app_context():
        _owned, count = _seed()
        with plain_reads.together(*BOTH):
            db.session.add(playbook_row("amy", 5))  # pending: the reads below must see it
            assert plain_reads.answers_waiting() == _sent_ahead(2)
            assert plain_reads.scalar(COUNT, {"teaching": False}) == count + 1
            assert plain_reads.answers_waiting() == 0
            assert [r.entries for r in plain_reads.execute(OWNED, {"owner": "amy"})] == [
                1, 2, 5]
        db.session.rollback()
        db.session.remove()


def test_answers_not_taken_end_with_the_block(app: Flask) -> None:
    with app.app_context():
        _owned, count = _seed()
        with plain_reads.together(*BOTH):
            assert plain_reads.answers_waiting() == _sent_ahead(2)
        assert plain_reads.answers_waiting() == 0
        db.session.commit()
        # Another session adds a row; the request's next read sees it, not an answer left
        # over from the block (the session's own ``info`` outlives its transactions).
        with Session(db.engine) as other:
            other.add(playbook_row("dan", 6))
            other.commit()
        assert plain_reads.scalar(COUNT, {"teaching": False}) == count + 1
        db.session.remove()


def test_a_failed_pipeline_leaves_the_reads_to_be_made_as_usual(app: Flask) -> None:
    with app.app_context():
        owned, _count = _seed()
        for _ in range(2):  # seen twice: compiled for the driver's cursor
            with pytest.raises(exc.DBAPIError):
                plain_reads.execute(MISSING)
            db.session.rollback()
        # Nothing written yet: on PostgreSQL the reads ran outside a transaction
        # (app.models.begin_at_write), so the failure ended none and the read answers.
        with plain_reads.together(Read(OWNED, {"owner": "amy"}), Read(MISSING, {})):
            assert plain_reads.answers_waiting() == 0
            assert [tuple(r) for r in plain_reads.execute(OWNED, {"owner": "amy"})] == owned
        db.session.rollback()
        # After a write the reads run in its transaction, which the failure ends.
        db.session.add(playbook_row("dee", 9))
        db.session.flush()
        with plain_reads.together(Read(OWNED, {"owner": "amy"}), Read(MISSING, {})):
            assert plain_reads.answers_waiting() == 0
            if db.engine.dialect.name == "postgresql":
                # The read fails too, as SQLAlchemy's error.
                with pytest.raises(exc.DBAPIError):
                    plain_reads.execute(OWNED, {"owner": "amy"})
            else:  # nothing was sent ahead
                assert [tuple(r) for r in plain_reads.execute(OWNED, {"owner": "amy"})] == owned
        db.session.rollback()
        assert [tuple(r) for r in plain_reads.execute(OWNED, {"owner": "amy"})] == owned
        assert plain_reads.scalar(COUNT, {"teaching": False}) == 3  # the write was undone
        db.session.remove()


PLAYBOOKS = select(Playbook).where(Playbook.owner == bindparam("owner")).order_by(
    Playbook.entries)


def _entries(owner: str) -> list[int]:
    """The owner's playbooks' entries, loaded as entities by the ORM."""
    return [found.entries for found in db.session.scalars(PLAYBOOKS, {"owner": owner})]


def _orm_seed() -> int:
    _owned, count = _seed()
    with plain_reads.together(*BOTH, Read(PLAYBOOKS, {"owner": "amy"})):  # seen: prepared
        pass
    db.session.remove()
    return count


def test_entity_queries_in_the_block_take_the_answers_sent_together(app: Flask) -> None:
    with app.app_context():
        count = _orm_seed()
        with plain_reads.together(Read(PLAYBOOKS, {"owner": "amy"}), *BOTH):
            assert plain_reads.answers_waiting() == _sent_ahead(3)
            assert _entries("bob") == [3]  # other parameters: asked for
            assert plain_reads.answers_waiting() == _sent_ahead(3)
            with Session(db.engine) as other:  # committed after the answer was sent
                other.add(playbook_row("amy", 8))
                other.commit()
            found = list(db.session.scalars(PLAYBOOKS, {"owner": "amy"}))
            # On PostgreSQL the answer sent with the block's start; SQLite reads now.
            postgres = db.engine.dialect.name == "postgresql"
            assert [playbook.entries for playbook in found] == [1, 2] if postgres else [1, 2, 8]
            assert plain_reads.answers_waiting() == _sent_ahead(2)
            # Entities of the session, as the ORM's own read makes them: the next read of
            # the same rows (asked for: taken once) hands back the same objects, and a
            # change to one is written.
            assert all(playbook in db.session for playbook in found)
            assert list(db.session.scalars(PLAYBOOKS, {"owner": "amy"}))[:2] == found[:2]
            assert plain_reads.scalar(COUNT, {"teaching": False}) == (
                count if postgres else count + 1)
            assert plain_reads.answers_waiting() == _sent_ahead(1)
        found[0].entries = 7
        db.session.commit()
        db.session.remove()
        assert _entries("amy") == [2, 7, 8]
        db.session.remove()


def test_a_write_in_the_block_drops_the_entity_answers(app: Flask) -> None:
    with app.app_context():
        _orm_seed()
        with plain_reads.together(Read(PLAYBOOKS, {"owner": "amy"}), *BOTH):
            db.session.add(playbook_row("amy", 5))  # flushed by the read, which must see it
            assert _entries("amy") == [1, 2, 5]
            assert plain_reads.answers_waiting() == 0
        db.session.rollback()
        db.session.remove()
        with plain_reads.together(Read(PLAYBOOKS, {"owner": "amy"}), *BOTH):
            # Written through Core: the session holds no change, but the answers predate it.
            db.session.execute(update(Playbook).where(Playbook.entries == 1)
                               .values(entries=4))
            assert plain_reads.answers_waiting() == 0
            assert _entries("amy") == [2, 4]
        db.session.rollback()
        db.session.remove()


def _sees_a_row_added_since() -> None:
    """Another session adds amy's sixth playbook; this one's next entity read shows it."""
    with Session(db.engine) as other:
        other.add(playbook_row("amy", 6))
        other.commit()
    assert _entries("amy") == [1, 2, 6]


def test_entity_answers_not_taken_end_with_the_block(app: Flask) -> None:
    with app.app_context():
        _orm_seed()
        with plain_reads.together(Read(PLAYBOOKS, {"owner": "amy"}), *BOTH):
            assert plain_reads.answers_waiting() == _sent_ahead(3)
        assert plain_reads.answers_waiting() == 0
        _sees_a_row_added_since()
        db.session.remove()


def test_a_connection_given_back_drops_the_entity_answers(app: Flask) -> None:
    with app.app_context():
        _orm_seed()
        with plain_reads.together(Read(PLAYBOOKS, {"owner": "amy"}), *BOTH):
            db.session.commit()  # the connection goes back to the pool, for any request
            assert plain_reads.answers_waiting() == 0
            _sees_a_row_added_since()
        db.session.remove()


def test_reads_sent_ahead_are_taken_while_the_request_only_reads(app: Flask) -> None:
    with app.app_context():
        owned, count = _seed()
        plain_reads.ahead(*BOTH, None)
        assert plain_reads.answers_waiting() == _sent_ahead(2)
        assert plain_reads.scalar(COUNT, {"teaching": True}) == 1  # not an answer sent
        assert plain_reads.answers_waiting() == _sent_ahead(2)
        assert plain_reads.scalar(COUNT, {"teaching": False}) == count
        assert [tuple(r) for r in plain_reads.execute(OWNED, {"owner": "amy"})] == owned
        assert plain_reads.answers_waiting() == 0
        db.session.remove()


def test_a_write_drops_the_reads_sent_ahead(app: Flask) -> None:
    with app.app_context():
        owned, count = _seed()
        plain_reads.ahead(*BOTH)
        # Written through Core: the session holds no change, but the answers predate it.
        db.session.execute(update(Playbook).where(Playbook.owner == "bob")
                           .values(teaching=True))
        assert plain_reads.scalar(COUNT, {"teaching": False}) == count - 1
        assert plain_reads.answers_waiting() == 0
        db.session.rollback()
        plain_reads.ahead(*BOTH)
        db.session.add(playbook_row("amy", 5))  # pending: the reads below must see it
        assert [r.entries for r in plain_reads.execute(OWNED, {"owner": "amy"})] == [1, 2, 5]
        assert plain_reads.answers_waiting() == 0
        db.session.rollback()
        assert [tuple(r) for r in plain_reads.execute(OWNED, {"owner": "amy"})] == owned
        db.session.remove()


def test_a_commit_drops_the_reads_sent_ahead(app: Flask) -> None:
    with app.app_context():
        owned, count = _seed()
        plain_reads.ahead(*BOTH)
        db.session.add(playbook_row("amy", 5))
        db.session.commit()  # written with no read in between: the answers predate it
        assert plain_reads.answers_waiting() == 0
        assert plain_reads.scalar(COUNT, {"teaching": False}) == count + 1
        assert [r.entries for r in plain_reads.execute(OWNED, {"owner": "amy"})] == [1, 2, 5]
        db.session.remove()


def test_reads_sent_ahead_end_with_the_session(app: Flask) -> None:
    with app.app_context():
        _owned, count = _seed()
        plain_reads.ahead(*BOTH)
        assert plain_reads.answers_waiting() == _sent_ahead(2)
        db.session.remove()  # the request's end
        with Session(db.engine) as other:
            other.add(playbook_row("dan", 6))
            other.commit()
        assert plain_reads.answers_waiting() == 0
        assert plain_reads.scalar(COUNT, {"teaching": False}) == count + 1
        db.session.remove()


def test_the_person_brings_the_reads_sent_along(app: Flask) -> None:
    with app.app_context():
        _owned, count = _seed()
        user = User(handle="ann", name="Ann")
        db.session.add(user)
        db.session.commit()
        user_id = user.id
        db.session.remove()
        plain_reads.get(User, user_id)  # prepared at its second run, below
        db.session.remove()
        for _ in range(2):
            found = plain_reads.get(User, user_id, [Read(COUNT, {"teaching": False}), None])
            assert found.handle == "ann" and found in db.session
            assert plain_reads.answers_waiting() == _sent_ahead(1)
            assert plain_reads.scalar(COUNT, {"teaching": False}) == count
            db.session.remove()


def test_a_studio_page_takes_its_first_reads_sent_with_the_person(
        studio: Any, make_agent: Any, app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    bob = join_studio(make_agent, "bob")
    created = bob.act("/studios/team/note", "create_note", text="@alice look")
    assert created.status_code == 201
    note = created.json["location"]
    taken: list[Any] = []
    take = plain_reads._take

    def spy(answers: Any, statement: Any, params: dict[str, Any]) -> Any:
        rows = take(answers, statement, params)
        if rows is not None:
            taken.append(statement)
        return rows

    monkeypatch.setattr(plain_reads, "_take", spy)
    for _ in range(3):  # prepared at their second run, sent ahead from then on
        taken.clear()
        answer = studio.get("/studios/team", accept="text/html")
        assert answer.status_code == 200
        page = answer.get_data(as_text=True)
        assert 'data-unread="1"' in page and "@alice look" in page
    with app.app_context():
        postgres = db.engine.dialect.name == "postgresql"
    from app.notifications import inbox

    sent = {studios.studio_read("team", None).statement, inbox.unread_read(None).statement}
    # On PostgreSQL the person's read brought the studio's and the badge's; SQLite answers
    # in-process, so nothing is sent ahead there.
    assert sent <= set(taken) if postgres else taken == []
    # Read afterwards, the badge sees what happened since: the answer was this request's.
    assert studio.act("/inbox", "mark_all_read").status_code == 200
    assert 'data-unread="0"' in studio.get("/studios/team", accept="text/html").get_data(
        as_text=True)
    markdown = studio.get("/studios/team")
    assert markdown.status_code == 200 and "inbox-link" not in markdown.get_data(as_text=True)
    # An item page's item comes with them, and is the same entity the page would load.
    for _ in range(3):
        taken.clear()
        answer = studio.get(note)
        assert answer.status_code == 200 and "@alice look" in answer.get_data(as_text=True)
    item = items.find_read("note", note.rsplit("/", 1)[1])
    assert item is not None and (item.statement in taken if postgres else taken == [])
    assert studio.get(note.rsplit("/", 1)[0] + "/ffffffff").status_code == 404


def _views(agent: Any, path: str) -> list[str]:
    """The page's Markdown body at three views, each checked to answer 200."""
    bodies = []
    for _ in range(3):
        answer = agent.get(path)
        assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
        bodies.append(parse_md(answer.get_data(as_text=True))[1])
    return bodies


def test_item_pages_show_the_same_at_every_view(studio: Any, make_agent: Any) -> None:
    bob = join_studio(make_agent, "bob")
    decision = studio.act("/studios/team/decide", "create_decision", question="Where?",
                          options=["Park", "Pier"]).json["location"]
    assert studio.post(f"{decision}/actions/vote", json={"votes": [
        {"option_title": "Pier", "accept": True, "prefer": True}]}).status_code == 200
    assert bob.post(f"{decision}/actions/vote", json={"votes": [
        {"option_title": "Park", "accept": True}]}).status_code == 200
    commitment = studio.act("/studios/team/commit", "create_commitment", title="Bring food",
                            critical_mass=2).json["location"]
    assert bob.act(commitment, "join_commitment").status_code == 200
    note = studio.act("/studios/team/note", "create_note", title="Plan",
                      text=f"See {decision} and {commitment}").json["location"]
    assert studio.act(note, "confirm_read").status_code == 200
    for path in (decision, commitment, note):
        assert bob.act(path, "add_comment", text=f"Bob on {path}").status_code == 201
    assert studio.act(f"{decision}/settings", "pin_decision").status_code == 200
    assert studio.act(f"{note}/settings", "pin_note").status_code == 200

    first, *later = _views(studio, decision)
    assert later == [first, first]
    results = first.split("results\n", 1)[1]
    assert "| 1 | Pier | 1 | 1 | 1 |" in results and "| 2 | Park | 1 | 0 | 1 |" in results
    assert "* [x] ✅ [x] ⭐ Pier" in first and "* [ ] ✅ [ ] ⭐ Park" in first  # alice's own
    assert "## Voters (2)" in first and " Pinned." in first
    assert f"Bob on {decision}" in first and "Plan" in first  # a comment; the note's backlink

    first, *later = _views(studio, commitment)
    assert later == [first, first]
    assert "Bob" in first and f"Bob on {commitment}" in first and "Plan" in first
    assert "You have not joined." in first and " Pinned." not in first

    first, *later = _views(studio, note)
    assert later == [first, first]
    assert "Your read confirmation: confirmed. Pinned." in first
    assert f"Bob on {note}" in first and "Alice" in first


def test_the_studio_home_takes_its_lists_from_answers_sent_together(
        studio: Any, make_agent: Any, app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    bob = join_studio(make_agent, "bob")
    assert bob.act("/studios/team/note", "create_note", title="Bob's plan",
                   text="Park").status_code == 201
    assert studio.act("/studios/team/decide", "create_decision", question="Where to meet?",
                      options=["Park"]).status_code == 201
    taken: list[str] = []
    take = plain_reads._take

    def spy(answers: Any, statement: Any, params: dict[str, Any]) -> Any:
        rows = take(answers, statement, params)
        if rows is not None:  # the table the statement reads first
            taken.append(str(statement).split("\nFROM ", 1)[1].split()[0])
        return rows

    monkeypatch.setattr(plain_reads, "_take", spy)
    for _view in range(3):
        taken.clear()
        for accept in ("text/markdown", "text/html"):
            page = studio.get("/studios/team", accept=accept).get_data(as_text=True)
            assert "Bob's plan" in page.replace("&#39;", "'") and "Where to meet?" in page
            assert "by Bob" in page
        with app.app_context():
            postgres = db.engine.dialect.name == "postgresql"
        # The recent notes and this cycle's decisions and commitments, as plain rows (each
        # statement is prepared at its second run: the first view's second page sends them),
        # and the pins.
        assert ({"commitments", "decisions", "notes", "pins"} <= set(taken)
                if postgres else taken == [])
    # Each view reads what is there then.
    assert bob.act("/studios/team/note", "create_note", title="Later",
                   text="Pier").status_code == 201
    assert "Later" in studio.get("/studios/team").get_data(as_text=True)

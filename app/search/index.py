"""Keeping the search index current: in the same transaction as every write, and rebuilt whole.

``install()`` puts one ``after_flush`` hook on SQLAlchemy sessions. Every flush that added,
changed or deleted an indexed item (notes and comments, decisions and options, commitments,
floorplans, playbooks and their recipe versions) re-writes that item's index row on the flush's
own connection, so the index commits or rolls back with the item, whichever door wrote it.
An item whose ``deleted_at`` is set leaves the index, with what hangs on it (a decision's
options, an item's comments); clearing ``deleted_at`` puts them all back. On SQLite the FTS5
table follows the rows by trigger; on PostgreSQL the tsvector column is generated.

``rebuild()`` empties the index and indexes everything again (``flask search-reindex``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, cast

from sqlalchemy import Connection, Table, delete, event, select, text
from sqlalchemy.orm import Session

from app.db import conflicts
from app.models.collab import Commitment, Decision, Option
from app.models.floorplans import Floorplan
from app.models.notes import Note
from app.models.playbooks import Playbook, RecipeVersion
from app.models.search import SearchDocument
from app.search import documents
from app.search.documents import Doc

DOCS = cast(Table, SearchDocument.__table__)
BATCH = 500
KIND_OF = {Decision: "decision", Commitment: "commitment", Floorplan: "floorplan"}


class Plan:
    """What one flush changes in the index: rows to (re)write and items to drop."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.docs: dict[tuple[str, str], Doc] = {}
        self.gone: set[tuple[str, str]] = set()
        self.gone_children: set[tuple[str, str]] = set()
        self.playbooks: set[Any] = set()
        self.new = False

    def put(self, doc: Doc) -> None:
        self.docs[(doc.kind, doc.item_id)] = doc
        self.gone.discard((doc.kind, doc.item_id))

    def drop(self, kind: str, item_id: Any) -> None:
        self.gone.add((kind, str(item_id)))
        self.docs.pop((kind, str(item_id)), None)

    # -- items --------------------------------------------------------------------------

    def changed(self, obj: Any, removed: bool = False, new: bool = False) -> None:
        """Index ``obj`` (or drop it); a ``new`` item has no comments or options to follow."""
        gone = removed or documents.is_deleted(obj)
        self.new = new
        if isinstance(obj, Note):
            doc = documents.note(obj)
            self.drop(doc.kind, doc.item_id) if gone else self.put(doc)
            self._children("note", obj.id, gone)
        elif isinstance(obj, Decision):
            self.drop("decision", obj.id) if gone else self.put(documents.decision(obj))
            self._children("decision", obj.id, gone, decision=obj)
        elif isinstance(obj, Option):
            self._option(obj, removed)
        elif isinstance(obj, (Commitment, Floorplan)):
            kind = KIND_OF[type(obj)]
            if gone:
                self.drop(kind, obj.id)
            else:
                self.put(documents.commitment(obj) if kind == "commitment"
                         else documents.floorplan(obj))
            self._children(kind, obj.id, gone)
        elif isinstance(obj, Playbook):
            if gone:
                self.drop("playbook", obj.id)
            else:
                self.playbooks.add(obj.id)
        elif isinstance(obj, RecipeVersion) and obj.playbook_id is not None:
            self.playbooks.add(obj.playbook_id)

    def _option(self, obj: Option, removed: bool) -> None:
        parent = self.conn.execute(select(Decision.__table__).where(
            Decision.__table__.c.id == obj.decision_id)).first()
        if removed or documents.is_deleted(obj) or parent is None \
                or documents.is_deleted(parent):
            self.drop("option", obj.id)
        else:
            self.put(documents.option(obj, parent))

    def _children(self, kind: str, item_id: Any, gone: bool, decision: Any = None) -> None:
        """Comments on an item (and a decision's options) follow it out and back in."""
        if gone:
            self.gone_children.add((kind, str(item_id)))
            return
        if self.new:
            return
        notes = Note.__table__
        for row in self.conn.execute(select(notes).where(notes.c.commentable_type == kind,
                                                         notes.c.commentable_id == item_id)):
            if not documents.is_deleted(row):
                self.put(documents.note(row))
        if decision is not None:
            options = Option.__table__
            for row in self.conn.execute(select(options).where(
                    options.c.decision_id == item_id)):
                if not documents.is_deleted(row):
                    self.put(documents.option(row, decision))

    def finish(self) -> None:
        for playbook_id in self.playbooks:
            if ("playbook", str(playbook_id)) in self.gone:
                continue
            found = _playbook_doc(self.conn, playbook_id)
            if found is None:
                self.drop("playbook", playbook_id)
            else:
                self.put(found)
        write(self.conn, list(self.docs.values()), self.gone, self.gone_children)


def _playbook_doc(conn: Connection, playbook_id: Any) -> Doc | None:
    table, versions = Playbook.__table__, RecipeVersion.__table__
    row = conn.execute(select(table).where(table.c.id == playbook_id)).first()
    if row is None or documents.is_deleted(row):
        return None
    newest = conn.execute(select(versions).where(versions.c.playbook_id == playbook_id)
                          .order_by(versions.c.created_at.desc()).limit(1)).first()
    return documents.playbook(row, newest)


def write(conn: Connection, docs: list[Doc], gone: Iterable[tuple[str, str]] = (),
          gone_children: Iterable[tuple[str, str]] = ()) -> None:
    """Write the rows of ``docs`` (an upsert), and delete ``gone`` items and the children of
    others."""
    by_kind: dict[str, list[str]] = {}
    for kind, item_id in gone:
        by_kind.setdefault(kind, []).append(item_id)
    for kind, ids in by_kind.items():
        for start in range(0, len(ids), BATCH):
            conn.execute(delete(DOCS).where(DOCS.c.kind == kind,
                                            DOCS.c.item_id.in_(ids[start:start + BATCH])))
    for parent_kind, parent_id in gone_children:
        conn.execute(delete(DOCS).where(DOCS.c.parent_kind == parent_kind,
                                        DOCS.c.parent_id == parent_id))
    upsert(conn, docs)


def upsert(conn: Connection, docs: list[Doc]) -> None:
    """Insert, or update the row of the same item: two transactions writing one item at once
    (two people adding options to one decision) wait for each other instead of colliding on
    the unique (kind, item_id). On SQLite the update trigger keeps the FTS table in step."""
    if not docs:
        return

    rows = [d.row() for d in docs]
    for start in range(0, len(rows), BATCH):
        stmt = conflicts.insert(DOCS, conn)
        updated = {c.name: stmt.excluded[c.name] for c in DOCS.columns
                   if c.name not in ("id", "kind", "item_id")}
        conn.execute(stmt.on_conflict_do_update(index_elements=["kind", "item_id"],
                                                set_=updated), rows[start:start + BATCH])


INDEXED = (Note, Decision, Option, Commitment, Floorplan, Playbook, RecipeVersion)


def _after_flush(session: Session, _context: Any) -> None:
    added = [o for o in session.new if isinstance(o, INDEXED)]
    touched = [o for o in session.dirty if isinstance(o, INDEXED)]
    removed = [o for o in session.deleted if isinstance(o, INDEXED)]
    if not added and not touched and not removed:
        return
    plan = Plan(session.connection())
    for obj in added:
        plan.changed(obj, new=True)
    for obj in touched:
        plan.changed(obj)
    for obj in removed:
        plan.changed(obj, removed=True)
    plan.finish()


def install() -> None:
    """Hook every session (web requests, MCP, workers, the CLI), once per process."""
    if not event.contains(Session, "after_flush", _after_flush):
        event.listen(Session, "after_flush", _after_flush)


# -- the whole index ------------------------------------------------------------------------

def _rows(conn: Connection, table: Any, *where: Any) -> Iterator[Any]:
    yield from conn.execute(select(table).where(*where)
                            .execution_options(yield_per=BATCH))


def all_docs(conn: Connection, workflows: Iterable[tuple[str, str, str]] = ()) -> Iterator[Doc]:
    """Every document the index should hold, read from the items themselves."""
    decisions = {}
    for row in _rows(conn, Decision.__table__):
        if not documents.is_deleted(row):
            decisions[row.id] = row
            yield documents.decision(row)
    live = set()
    for row in _rows(conn, Note.__table__):
        if not documents.is_deleted(row):
            live.add(row.id)
    for row in _rows(conn, Option.__table__):
        parent = decisions.get(row.decision_id)
        if parent is not None and not documents.is_deleted(row):
            yield documents.option(row, parent)
    for row in _rows(conn, Commitment.__table__):
        if not documents.is_deleted(row):
            live.add(row.id)
            yield documents.commitment(row)
    for row in _rows(conn, Floorplan.__table__):
        if not documents.is_deleted(row):
            live.add(row.id)
            yield documents.floorplan(row)
    live.update(decisions)
    for row in _rows(conn, Note.__table__):
        # A comment whose item is gone (or deleted) is not found either.
        if row.id in live and (row.commentable_id is None or row.commentable_id in live):
            yield documents.note(row)
    for row in _rows(conn, Playbook.__table__):
        found = _playbook_doc(conn, row.id)
        if found is not None:
            yield found
    for name, description, source in workflows:
        yield documents.workflow(name, description, source)


def is_empty(conn: Connection) -> bool:
    return conn.execute(select(DOCS.c.id).limit(1)).first() is None


def rebuild(conn: Connection, workflows: Iterable[tuple[str, str, str]] = ()) -> int:
    """Empty the index and fill it again; returns the number of documents indexed."""
    conn.execute(delete(DOCS))
    count, batch = 0, []
    for doc in all_docs(conn, workflows):
        batch.append(doc)
        if len(batch) >= BATCH:
            upsert(conn, batch)  # an item written meanwhile is not a conflict
            count, batch = count + len(batch), []
    upsert(conn, batch)
    if conn.dialect.name == "postgresql":
        # Fresh statistics after a bulk load, so the planner picks the GIN index.
        conn.execute(text("ANALYZE search_documents"))
    return count + len(batch)

"""Search: a studio of 10,000 items searched through the index, beside a plain LIKE scan.

The demo studio is filled with generated notes, decisions and commitments (random words from a
fixed vocabulary, a few of them rare, one in every item's text at a known rate) written with
bulk inserts, then ``index.rebuild`` indexes them (its time is reported). Each query runs as
``app.search.engine.search`` (ranked, highlighted, first page of 20, the membership check
included) and as the query a search without an index would run: ``LIKE '%word%'`` over the
titles and texts of the three tables, newest first, 20 rows. Both in-process, on the same
session, interleaved round by round. Then the whole ``/search`` page (Markdown) for one query.

    .venv/bin/python bench/search_bench.py [--quick | --smoke] [--postgres]
"""

from __future__ import annotations

import random
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

# Query label → (search text, the words a LIKE scan looks for: all must occur)
QUERIES: dict[str, tuple[str, list[str]]] = {
    "rare word": ("zeppelin", ["zeppelin"]),
    "common word": ("harbour", ["harbour"]),
    "two words": ("harbour lantern", ["harbour", "lantern"]),
    "phrase": ('"copper lantern"', ["copper lantern"]),
    "word + kind:note": ("lantern kind:note", ["lantern"]),
}
RATES = {"zeppelin": 0.002, "harbour": 0.2, "lantern": 0.1}  # share of items holding the word


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    letters = "abcdefghijklmnoprstuvw"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(size)]


def fill(app: Any, items: int) -> float:
    """Bulk-insert ``items`` into the demo studio, then rebuild the index; its seconds."""
    from sqlalchemy import insert, select

    from app.extensions import db
    from app.models import Note, Studio, User
    from app.models.collab import Commitment, Decision
    from app.search import index

    rng = random.Random(42)
    words = vocabulary(rng)
    now = datetime.now(UTC)

    def text(count: int) -> str:
        chosen = [rng.choice(words) for _ in range(count)]
        for word, rate in RATES.items():
            if rng.random() < rate:
                chosen.insert(rng.randrange(len(chosen) + 1), word)
        if rng.random() < 0.05:
            chosen.insert(rng.randrange(len(chosen) + 1), "copper lantern")
        return " ".join(chosen)

    with app.app_context():
        user = db.session.scalar(select(User).where(User.handle == "demo"))
        studio = db.session.scalar(select(Studio).where(Studio.handle == "demo"))
        assert user is not None and studio is not None
        rows: dict[Any, list[dict[str, Any]]] = {Note: [], Decision: [], Commitment: []}
        for i in range(items):
            ident = uuid.uuid4()
            when = now - timedelta(minutes=i)
            base = {"id": ident, "short_id": ident.hex[:8], "studio_id": studio.id,
                    "created_by_id": user.id, "created_at": when, "updated_at": when}
            kind = i % 10
            if kind < 7:
                rows[Note].append({**base, "title": text(5), "text": text(rng.randint(30, 150)),
                                   "updated_by_id": user.id})
            elif kind < 9:
                rows[Decision].append({**base, "question": text(6), "description": text(40),
                                       "options_open": True, "deadline": when
                                       + timedelta(days=7)})
            else:
                rows[Commitment].append({**base, "title": text(5), "description": text(40),
                                         "critical_mass": 2, "deadline": when
                                         + timedelta(days=7)})
        for model, values in rows.items():
            for start in range(0, len(values), 1000):
                db.session.execute(insert(model), values[start:start + 1000])
        db.session.commit()
        started = time.perf_counter()
        index.rebuild(db.session.connection())
        db.session.commit()
        return time.perf_counter() - started


def like_scan(words: list[str]) -> Callable[[], Any]:
    """The search without an index: LIKE over titles and texts, newest first, 20 rows."""
    from sqlalchemy import and_, literal, or_, select, union_all

    from app.extensions import db
    from app.models import Note, Studio
    from app.models.collab import Commitment, Decision

    def run() -> Any:
        studio_id = db.session.scalar(select(Studio.id).where(Studio.handle == "demo"))
        parts = []
        for model, title, body in ((Note, Note.title, Note.text),
                                   (Decision, Decision.question, Decision.description),
                                   (Commitment, Commitment.title, Commitment.description)):
            match = and_(*[or_(title.like(f"%{w}%"), body.like(f"%{w}%")) for w in words])
            parts.append(select(model.id, title.label("title"), model.updated_at,
                                literal(model.__tablename__).label("kind"))
                         .where(model.studio_id == studio_id, match))
        found = union_all(*parts).subquery()
        return db.session.execute(select(found).order_by(found.c.updated_at.desc())
                                  .limit(20)).all()

    return run


def ours(text: str) -> Callable[[], Any]:
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Studio, User
    from app.search import engine, query

    def run() -> Any:
        user = db.session.scalar(select(User).where(User.handle == "demo"))
        studio_id = db.session.scalar(select(Studio.id).where(Studio.handle == "demo"))
        results = engine.search(query.parse(text), user, [studio_id], 1, 20)
        return results.hits

    return run


def main() -> None:
    parser = harness.arguments(__doc__)
    args = parser.parse_args()
    items = harness.size(10_000, 10_000, 300)
    count = harness.size(200, 60, 3)

    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_search")) if args.postgres else None
        instance = harness.make_instance(url)
        app = harness.app_for(instance)
        rebuild_seconds = fill(app, items)
        db_name = "PostgreSQL" if args.postgres else "SQLite"
        stack.enter_context(app.app_context())
        calls: dict[str, Callable[[], Any]] = {}
        found: dict[str, int] = {}
        for label, (text, words) in QUERIES.items():
            calls[f"{label}: index"] = ours(text)
            calls[f"{label}: LIKE scan"] = like_scan(words)
            found[label] = len(calls[f"{label}: index"]())
        client = app.test_client()
        headers = {"Authorization": f"Bearer {instance.token}", "Accept": "text/markdown"}

        def whole_page() -> Any:
            response = client.get("/search?q=harbour+lantern", headers=headers)
            assert response.status_code == 200, response.status_code
            return response

        calls["/search?q=harbour lantern page (md)"] = whole_page
        samples = harness.interleaved(calls, rounds=3, per_round=max(count // 3, 1))
        rows = []
        for label in QUERIES:
            index_s, like_s = samples[f"{label}: index"], samples[f"{label}: LIKE scan"]
            rows.append([label, str(found[label]), f"{index_s.p50:.2f}", f"{index_s.p99:.2f}",
                         f"{like_s.p50:.2f}", f"{like_s.p99:.2f}",
                         f"{like_s.p50 / index_s.p50:.1f}×" if index_s.p50 else "-"])
        page = samples["/search?q=harbour lantern page (md)"]
        harness.print_table(
            f"Search a studio of {items:,} items ({db_name}, in-process, {count} queries each)",
            ["query", "hits (page 1)", "index p50 ms", "index p99 ms", "LIKE p50 ms",
             "LIKE p99 ms", "LIKE / index (p50)"], rows,
            [f"Index rebuilt ({items:,} items) in {rebuild_seconds:.2f} s. The whole /search "
             f"page (Markdown, two words): p50 {page.p50:.2f} ms, p99 {page.p99:.2f} ms."])
    harness.print_footer()


if __name__ == "__main__":
    main()

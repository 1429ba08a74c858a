"""The backlinks page's leaderboard as a studio's links grow: the app's statement beside the
bare count it is built on and beside the form that joins every link before grouping.

The demo studio gets notes linking to one another (bulk inserts, a fixed pattern) until it
holds each size's number of links. Three reads of the 50 most linked items, in-process on the
session's connection, interleaved round by round: the count alone (links grouped by target,
no names: the baseline), the app's leaderboard (``app.services.links.leaderboard``: the same
count, then only its rows joined to each kind's table for their names) and the form that
joins every link to each kind's table and then groups by all those columns. Then the whole
``/studios/demo/backlinks`` page (Markdown) at the largest size.

    .venv/bin/python bench/leaderboard_bench.py [--quick | --smoke] [--postgres]
"""

from __future__ import annotations

import sys
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

SHOWN = 50
FAN_OUT = 50  # links each note makes


def add_links(app: Any, studio_id: uuid.UUID, owner_id: uuid.UUID, links: int) -> None:
    """Notes in the demo studio, each linking to ``FAN_OUT`` others, until ``links`` more."""
    from sqlalchemy import insert

    from app.extensions import db
    from app.models import Link, Note

    count = links // FAN_OUT + FAN_OUT + 2
    ids = [uuid.uuid4() for _ in range(count)]
    notes = [{"id": id_, "short_id": id_.hex[:8], "studio_id": studio_id, "title": f"Note {i}",
              "text": f"Note {i}", "created_by_id": owner_id, "updated_by_id": owner_id}
             for i, id_ in enumerate(ids)]
    made: list[dict[str, Any]] = []
    for i in range(count):
        # Half of a note's links go to the same few notes, half to its neighbours: a few items
        # are linked to by many, most by a few, as in a studio people use.
        targets = {*range(FAN_OUT // 2), *((i + 1 + k) % count for k in range(FAN_OUT // 2))}
        made += [{"id": uuid.uuid4(), "studio_id": studio_id, "from_type": "note",
                  "from_id": ids[i], "to_type": "note", "to_id": ids[t]}
                 for t in sorted(targets - {i})]
    with app.app_context():
        db.session.execute(insert(Note), notes)
        db.session.execute(insert(Link), made[:links])
        db.session.commit()


def measure(app: Any, studio_id: uuid.UUID, statements: dict[str, Any],
            per_round: int) -> dict[str, harness.Sample]:
    """Each statement read on the session's connection, interleaved (None: the app's own
    leaderboard), once the app's is seen to answer what the joined form answers."""
    from app.extensions import db
    from app.models import Studio
    from app.services import links

    with app.app_context():
        board = links.leaderboard(db.session.get(Studio, studio_id), SHOWN)
        connection = db.session.connection()

        def reading(statement: Any) -> Any:
            if statement is None:
                return lambda: connection.execute(board.statement, board.params).all()
            return lambda: connection.execute(statement, {"studio_id": studio_id}).all()

        calls = {name: reading(statement) for name, statement in statements.items()}
        ours, joined = ([tuple(row) for row in calls[name]()]
                        for name in ("the app's", "joined, then grouped"))
        assert ours == joined, "the two forms answer different rows"
        return harness.interleaved(calls, rounds=5, per_round=per_round)


def main() -> None:
    from sqlalchemy import bindparam, func, select

    args = harness.arguments(__doc__).parse_args()
    sizes = harness.size([100, 2_000, 20_000], [100, 5_000], [60])
    per_round = harness.size(40, 15, 2)
    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_board")) if args.postgres else None
        inst = harness.make_instance(url)
        app = harness.app_for(inst)
        from app.extensions import db
        from app.models import Link, Studio, User
        from app.services import items

        with app.app_context():
            studio = db.session.execute(select(Studio).where(Studio.handle == "demo")).scalar_one()
            owner = db.session.execute(select(User).where(User.handle == "demo")).scalar_one()
            studio_id, owner_id = studio.id, owner.id
        alone = (select(Link.to_type, Link.to_id, func.count())
                 .where(Link.studio_id == bindparam("studio_id"))
                 .group_by(Link.to_type, Link.to_id)
                 .order_by(func.count().desc(), Link.to_type, Link.to_id).limit(SHOWN))
        count = func.count(Link.id)
        joined = items.labelled(Link.to_type, Link.to_id, count)
        joined_first = (joined.statement.where(Link.studio_id == bindparam("studio_id"))
                        .group_by(Link.to_type, Link.to_id, *joined.columns)
                        .order_by(count.desc(), Link.to_type, Link.to_id).limit(SHOWN))
        rows, held = [], 0
        for size in sizes:
            add_links(app, studio_id, owner_id, size - held)
            held = size
            samples = measure(app, studio_id, {"count alone": alone, "the app's": None,
                                               "joined, then grouped": joined_first},
                              per_round)
            base, ours = samples["count alone"].p50, samples["the app's"].p50
            other = samples["joined, then grouped"].p50
            rows.append([f"{size:,}", *(f"{s.p50:.2f}" for s in samples.values()),
                         f"{ours / base:.2f}×", f"{other / base:.2f}×"])
        backend = "PostgreSQL" if args.postgres else "SQLite"
        harness.print_table(
            f"The {SHOWN} most linked items of a studio ({backend}, p50 ms, interleaved)",
            ["links", "count alone (baseline)", "the app's leaderboard", "joined, then grouped",
             "the app's ÷ baseline", "joined ÷ baseline"], rows,
            ["The app's leaderboard counts the links first and names only the counted rows; "
             "the other form joins every link to each kind's table, then groups by every "
             "column it joined. Both answer the same rows (checked at each size)."])
        client = app.test_client()
        headers = {"Authorization": f"Bearer {inst.token}", "Accept": "text/markdown"}
        page = harness.interleaved(
            {"page": lambda: client.get("/studios/demo/backlinks", headers=headers)},
            rounds=3, per_round=per_round)["page"]
        harness.print_table(f"The backlinks page at {sizes[-1]:,} links ({backend})",
                            ["page", "p50 ms", "p99 ms"],
                            [["/studios/demo/backlinks (md)", f"{page.p50:.2f}",
                              f"{page.p99:.2f}"]])
    harness.print_footer()


if __name__ == "__main__":
    main()

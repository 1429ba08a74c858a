"""What one small read costs at each layer: the ORM session, ``app.db.read`` (SQLAlchemy Core
on the session's connection), and the driver's cursor alone, in the same run.

The statement is the one the playbook proxy runs on every call (the caller's teaching session:
two columns, an indexed filter, an ORDER BY), once with an expanding ``IN`` parameter as the app
writes it and once with fixed parameters; ``SELECT 1`` shows each layer's floor; the last row is
what a request pays to end its session (the connection's rollback and return to the pool) after
one read. All rows run inside one app context holding one connection, interleaved, so the
machine's drift hits them alike; the driver row is the baseline of the ratios.

A second table times what every call of a 2025-11-25 MCP session does before anything else:
find its ``mcp_sessions`` row (``app.mcp.store.find_session``), as a request does it, in an app
context of its own, served as a call (``app.db.serving``): from this process's copy, and with
the copy forgotten first, so that the row is read (in autocommit, on a pooled connection). Its
baseline is the same statement on the driver's cursor of a connection kept open in autocommit
(the floor of any read made on every call); the app context's own cost is shown alone.

    .venv/bin/python bench/statement_cost.py [--quick | --smoke] [--postgres]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402


def main() -> None:
    parser = harness.arguments(__doc__)
    args = parser.parse_args()
    count = harness.size(5000, 2000, 20)

    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_stmt")) if args.postgres else None
        app = harness.app_for(harness.make_instance(url))
        from sqlalchemy import bindparam, select, text

        from app.db import read, rows_of
        from app.extensions import db
        from app.models.playbooks import Playbook
        from app.playbooks import teach

        keys = ["token:0f1e2d3c", "user:4b5a6978"]
        fixed = (select(Playbook.owner, Playbook.session_id)
                 .where(Playbook.owner.in_([bindparam("k0"), bindparam("k1")]),
                        Playbook.teaching.is_(True))
                 .order_by(Playbook.created_at.desc()))
        fixed_params = {"k0": keys[0], "k1": keys[1]}
        with app.app_context():
            session = db.session
            session.execute(text("SELECT 1"))  # the connection this context holds from now on
            raw = session.connection().connection.dbapi_connection
            assert raw is not None
            marker = "%s" if args.postgres else "?"
            sql = (f"SELECT owner, session_id FROM playbooks WHERE owner IN ({marker}, {marker})"
                   f" AND teaching = {'true' if args.postgres else '1'} ORDER BY created_at DESC")

            def driver() -> Any:
                cursor = raw.cursor()
                cursor.execute(sql, tuple(keys))
                return cursor.fetchall()

            def ended() -> Any:
                found = read(rows_of(fixed, fixed_params))
                session.remove()
                return found

            calls: dict[str, Callable[[], Any]] = {
                "driver cursor (baseline)": driver,
                "app.db.read, fixed parameters (Core)": lambda: read(rows_of(fixed,
                                                                             fixed_params)),
                "app.db.read, expanding IN (Core)": lambda: read(rows_of(
                    teach._TEACHING_SESSION, {"keys": keys})),
                "ORM session, expanding IN (Session.execute)": lambda: session.execute(
                    teach._TEACHING_SESSION, {"keys": keys}).all(),
                "SELECT 1: driver cursor": lambda: raw.cursor().execute("SELECT 1").fetchall(),
                "SELECT 1: app.db.read (Core)": lambda: read(rows_of(text("SELECT 1"))),
                "SELECT 1: ORM session": lambda: session.execute(text("SELECT 1")).all(),
                "app.db.read, then the session's end (rollback, pool return)": ended,
            }
            samples = harness.interleaved(calls, rounds=5, per_round=max(count // 5, 1))
            session.remove()
        sessions = _session_row_reads(app, count)
        backend = "PostgreSQL" if args.postgres else "SQLite"
        for title, table in ((f"One small read per layer ({backend}, {count} calls each, "
                              f"interleaved)", samples),
                             (f"An MCP session's row, found as each call finds it ({backend}, "
                              f"{count} calls each, interleaved)", sessions)):
            base = next(iter(table.values())).p50
            harness.print_table(title, ["layer", "p50 µs", "p99 µs", "÷ first row's p50"],
                                [[name, f"{s.p50 * 1000:.1f}", f"{s.p99 * 1000:.1f}",
                                  f"{s.p50 / base:.1f}×" if base else "-"]
                                 for name, s in table.items()])
    harness.print_footer()


def _session_row_reads(app: Any, count: int) -> dict[str, Any]:
    """The session-row table: each read in an app context of its own, as a request runs."""
    from app.core import kept
    from app.db import serving
    from app.mcp import store

    with app.app_context():
        session_id = store.DbSession.new(None).id
        row = store.DbSession({"id": session_id}, is_new=True)
        row.save()

    def find() -> Any:
        with app.app_context(), serving():
            return store.find_session(session_id)

    def read() -> Any:
        kept.forget(store.TOPIC, session_id)
        return find()

    def context_alone() -> None:
        with app.app_context(), serving():
            pass

    with harness.session_read_on_the_driver(app, session_id) as driver:
        calls: dict[str, Any] = {
            "driver cursor, a connection kept in autocommit (baseline: the floor)": driver,
            "app context alone (pushed and popped, no read)": context_alone,
            "store.find_session: its copy forgotten, the row read on a pooled connection": read,
            "store.find_session: this process's copy": find,
        }
        return harness.interleaved(calls, rounds=5, per_round=max(count // 5, 1))


if __name__ == "__main__":
    main()

"""What one small read costs at each layer: the ORM session, ``app.models.plain_reads`` (the
driver's cursor for a prebuilt select, SQLAlchemy Core on the session's connection otherwise),
and the driver's cursor alone, in the same run.

The statement is the one the playbook proxy runs on every call (the caller's teaching session:
two columns, an indexed filter, an ORDER BY), once with an expanding ``IN`` parameter as the app
writes it and once with fixed parameters; ``SELECT 1`` shows each layer's floor; the last row is
what a request pays to end its session (the connection's rollback and return to the pool) after
one read. All rows run inside one app context holding one connection, interleaved, so the
machine's drift hits them alike; the driver row is the baseline of the ratios.

    .venv/bin/python bench/statement_cost.py [--quick | --smoke] [--postgres]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    args = parser.parse_args()
    count = harness.size(5000, 2000, 20)

    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_stmt")) if args.postgres else None
        app = harness.app_for(harness.make_instance(url))
        from sqlalchemy import bindparam, select, text

        from app.extensions import db
        from app.models import plain_reads
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
                found = plain_reads.execute(fixed, fixed_params).all()
                session.remove()
                return found

            calls: dict[str, Callable[[], Any]] = {
                "driver cursor (baseline)": driver,
                "plain_reads, fixed parameters (the driver's cursor from its 2nd run)":
                    lambda: plain_reads.execute(fixed, fixed_params).all(),
                "plain_reads, expanding IN (left to Core)": lambda: plain_reads.execute(
                    teach._TEACHING_SESSION, {"keys": keys}).all(),
                "ORM session, expanding IN (Session.execute)": lambda: session.execute(
                    teach._TEACHING_SESSION, {"keys": keys}).all(),
                "SELECT 1: driver cursor": lambda: raw.cursor().execute("SELECT 1").fetchall(),
                "SELECT 1: plain_reads (text(): left to Core)": lambda: plain_reads.execute(
                    text("SELECT 1")).all(),
                "SELECT 1: ORM session": lambda: session.execute(text("SELECT 1")).all(),
                "plain_reads read, then the session's end (rollback, pool return)": ended,
            }
            samples = harness.interleaved(calls, rounds=5, per_round=max(count // 5, 1))
            session.remove()
            db.engine.dispose()  # a PostgreSQL database is dropped on the way out
        base = samples["driver cursor (baseline)"].p50
        harness.print_table(
            f"One small read per layer ({'PostgreSQL' if args.postgres else 'SQLite'}, "
            f"{count} calls each, interleaved)",
            ["layer", "p50 µs", "p99 µs", "÷ driver p50"],
            [[name, f"{s.p50 * 1000:.1f}", f"{s.p99 * 1000:.1f}",
              f"{s.p50 / base:.1f}×" if base else "-"] for name, s in samples.items()])
    harness.print_footer()


if __name__ == "__main__":
    main()

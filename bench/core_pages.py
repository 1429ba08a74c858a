"""Pages: SQL statements per page (no N+1) and render time of the heaviest pages, both formats.

The demo studio is filled by ``seeds.busy_studio`` with a small ``n`` and then a large one
(options, voters, comments, participants...). For every heavy page the statements one request
runs are counted with SQLAlchemy's ``before_cursor_execute`` event at both sizes (item pages:
the small set's item against the large set's; studio pages: before and after the large set
was added): the count must not grow with the number of items shown. Then each page is timed
at the large size as Markdown (the agent's format) and HTML, in-process through the WSGI stack
(Flask's test client, so the numbers measure our code, not the network), beside a bare Flask
view returning a fixed Markdown string (the floor for any Flask page). Each request's CPU time
(its thread's) is shown beside its wall time: on a shared, loaded machine the wall time of a
long request grows with every other process's turn, its CPU time much less, so the CPU ratio
is the steadier one to compare runs by; the Python function calls one request makes
(cProfile's count) are steadier still, a count no load moves. The goals (issue 22) are read
on the wall-time p50: every page within 30x the bare view's in the same run, and within 3 ms.

``--both`` renders every page from a SQLite instance and a PostgreSQL one in the same run,
alternately, for the goal "PostgreSQL within 1.5x of SQLite". Beside each ratio it shows what
the database's answers cost: each page's own statements, with their parameters, run alone on
a bare driver connection of each database (one by one and, on PostgreSQL, pipelined), and the
"floor", the SQLite page with its statements' time replaced by PostgreSQL's. Then a cProfile
of each page on both, its time split by whose code it is (ours, Flask, SQLAlchemy, the
driver, the wait for the database's answers...): where the time PostgreSQL adds goes. Last,
two ways of the app alternated in one process on PostgreSQL: the pages' independent reads
pipelined or one after another, and the pages' reads alone (autocommit) or in a transaction.

    .venv/bin/python bench/core_pages.py [--quick | --smoke] [--postgres | --both]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import seeds  # noqa: E402
from sqlcount import page_statements  # noqa: E402

FORMATS = {"md": "text/markdown", "html": "text/html"}


def page_getter(app: Any, token: str, path: str, accept: str) -> Callable[[], Any]:
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}", "Accept": accept}

    def get() -> Any:
        response = client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.status_code)
        return response

    return get


GOAL_RATIO = 30  # a page's p50 within this many times the bare view's, same run
GOAL_MS = 3.0


def timed(calls: dict[str, Callable[[], Any]], rounds: int, per_round: int,
          warmup: int = 5) -> tuple[dict[str, harness.Sample], dict[str, harness.Sample]]:
    """Like ``harness.interleaved`` (series alternated round by round), with each call's CPU
    time (``time.thread_time``) recorded beside its wall time."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    wall = {name: harness.Sample() for name in calls}
    cpu = {name: harness.Sample() for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            started = time.perf_counter()
            for _ in range(per_round):
                t, c = time.perf_counter(), time.thread_time()
                call()
                cpu[name].latencies.append(time.thread_time() - c)
                wall[name].latencies.append(time.perf_counter() - t)
            wall[name].elapsed += time.perf_counter() - started
    return wall, cpu


ROUNDS = 3  # each series' calls are made in this many rounds, alternated with the others'


def round_p50s(samples: dict[str, harness.Sample]) -> dict[str, list[float]]:
    """Each series' p50 in each round (``timed`` records a series' calls round by round)."""
    found = {}
    for name, sample in samples.items():
        per = max(len(sample.latencies) // ROUNDS, 1)
        found[name] = [harness.Sample(sample.latencies[at:at + per]).p50
                       for at in range(0, per * ROUNDS, per)]
    return found


def highest_each_round(ratios: dict[str, list[float]]) -> str:
    """The highest ratio of each round, with its series: how far one run's verdict holds."""
    shown = []
    for at in range(ROUNDS):
        name = max(ratios, key=lambda name: ratios[name][at])
        shown.append(f"{ratios[name][at]:.2f}× ({name})")
    return ", ".join(shown)


def statements_per_page(app: Any, token: str, paths: dict[str, str]) -> dict[tuple[str, str], int]:
    return {(name, fmt): page_statements(app, token, path, accept)
            for name, path in paths.items() for fmt, accept in FORMATS.items()}


def main() -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--both", action="store_true",
                        help="SQLite and PostgreSQL in the same run: their ratio per page")
    args = parser.parse_args()
    if args.both:
        both_backends()
        return
    small_n, large_n = harness.size((4, 20), (4, 20), (2, 4))
    count = harness.size(300, 100, 3)

    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_pages")) if args.postgres else None
        instance = harness.make_instance(url)
        app, token = harness.app_for(instance), instance.token
        # The large set is added to the same studio: item pages are compared item to item,
        # the studio's own pages before and after it grew.
        small = statements_per_page(app, token, seeds.busy_studio(app, small_n, prefix="s"))
        large_paths = seeds.busy_studio(app, large_n, prefix="l")
        large = statements_per_page(app, token, large_paths)
        rows = []
        grows = []
        for (name, fmt), value in small.items():
            bigger = large[(name, fmt)]
            if bigger > value:
                grows.append(f"{name}.{fmt}")
            rows.append([f"{name} ({fmt})", str(value), str(bigger),
                         "grows" if bigger > value else "flat"])
        db_name = "PostgreSQL" if args.postgres else "SQLite"
        harness.print_table(
            f"SQL statements per request ({db_name}), n = {small_n} vs n = {large_n}",
            ["page", f"n={small_n}", f"n={large_n}", "N+1?"], rows,
            [f"Goal: no page's count grows with n — {harness.goal(not grows)}"
             + (f" (grows: {', '.join(grows)})" if grows else "")])

        from flask import Flask

        bare = Flask("bare")
        text = "---\napp: Harmonic\n---\n# Bare\n"
        bare.add_url_rule("/", "index", lambda: (text, 200, {"Content-Type": "text/markdown"}))
        bare_client = bare.test_client()
        calls: dict[str, Callable[[], Any]] = {
            "bare Flask, fixed Markdown": lambda: bare_client.get("/")}
        for name, path in large_paths.items():
            for fmt, accept in FORMATS.items():
                calls[f"{name} ({fmt})"] = page_getter(app, token, path, accept)
        samples, cpu = timed(calls, rounds=ROUNDS, per_round=max(count // ROUNDS, 1))
        bare = "bare Flask, fixed Markdown"
        floor, floor_p50, floor_cpu = samples[bare].rate, samples[bare].p50, cpu[bare].p50
        pages = [name for name in samples if name != bare]
        over = [name for name in pages if samples[name].p50 > GOAL_RATIO * floor_p50]
        slow = [name for name in pages if samples[name].p50 > GOAL_MS]
        by_round = round_p50s(samples)
        each_round = highest_each_round({
            name: harness.ratios_by_round(by_round[name], by_round[bare]) for name in pages})
        counted = {name: harness.calls_per_run(call, max(count // 10, 1))
                   for name, call in calls.items()}
        harness.print_table(
            f"Render time at n = {large_n} ({db_name}, in-process WSGI, {count} requests each)",
            ["page", "req/s", "p50 ms", "p99 ms", "bare Flask / page", "p50 / bare p50",
             "CPU p50 ms", "CPU / bare CPU", "Python calls"],
            [[name, f"{s.rate:,.0f}", f"{s.p50:.2f}", f"{s.p99:.2f}",
              f"{floor / s.rate:.1f}×" if s.rate else "-",
              f"{s.p50 / floor_p50:.1f}×" if floor_p50 else "-", f"{cpu[name].p50:.2f}",
              f"{cpu[name].p50 / floor_cpu:.1f}×" if floor_cpu else "-", f"{counted[name]:,}"]
             for name, s in samples.items()],
            ["Python calls: the function calls one request makes (cProfile's count, after the "
             "timing), a count the machine's speed and load do not move: runs or commits too "
             "noisy to compare by time compare by it.",
             f"Goal: every page's p50 ≤ {GOAL_RATIO}× the bare view's p50 — "
             f"{harness.goal(not over)}" + (f" (over: {', '.join(over)})" if over else "")
             + f"; the highest page ÷ the bare view's p50 in each of the {ROUNDS} rounds: "
             f"{each_round}",
             f"Goal: every page's p50 ≤ {GOAL_MS:g} ms — {harness.goal(not slow)}"
             + (f" (over: {', '.join(slow)})" if slow else "")])
    harness.print_footer()


GOAL_PG = 1.5  # PostgreSQL's p50 within this many times SQLite's, same run


def page_sql(app: Any, token: str, path: str, accept: str) -> list[tuple[str, Any]]:
    """The statements and parameters one GET of ``path`` hands the driver (caches warm)."""
    from sqlalchemy import event

    from app.extensions import db

    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}", "Accept": accept}
    assert client.get(path, headers=headers).status_code == 200
    sent: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_args: Any) -> None:
        sent.append((statement, parameters))

    with app.app_context():
        engine = db.engine
    pipelined = app.config.get("HARMONIC_DB_PIPELINE", True)
    app.config["HARMONIC_DB_PIPELINE"] = False  # each statement through the event, once
    event.listen(engine, "before_cursor_execute", keep)
    try:
        assert client.get(path, headers=headers).status_code == 200
    finally:
        event.remove(engine, "before_cursor_execute", keep)
        app.config["HARMONIC_DB_PIPELINE"] = pipelined
    return sent


def sql_alone(connection: Any, sent: list[tuple[str, Any]]) -> float:
    """Seconds to run a page's statements on the bare driver, fetching every row, as the page
    sends them: PostgreSQL's connection is in autocommit, for a page writes nothing and so
    begins no transaction (app.db.session); the commit then sends nothing."""
    started = time.perf_counter()
    for statement, parameters in sent:
        cursor = connection.cursor()
        cursor.execute(statement, parameters)
        if cursor.description is not None:
            cursor.fetchall()
        cursor.close()
    connection.commit()
    return time.perf_counter() - started


def sql_pipelined(connection: Any, sent: list[tuple[str, Any]]) -> float:
    """``sql_alone`` with every statement sent before any answer is read (psycopg's pipeline
    mode): what the page's reads would cost if none waited for another's answer."""
    started = time.perf_counter()
    cursors = []
    with connection.pipeline():
        for statement, parameters in sent:
            cursor = connection.cursor()
            cursor.execute(statement, parameters)
            cursors.append(cursor)
    for cursor in cursors:
        if cursor.description is not None:
            cursor.fetchall()
        cursor.close()
    connection.commit()
    return time.perf_counter() - started


def both_backends() -> None:
    import sqlite3

    import psycopg

    count = harness.size(300, 100, 3)
    n = harness.size(20, 20, 4)
    with ExitStack() as stack:
        pg_url = stack.enter_context(harness.pg_database("bench_pages"))
        apps = {}
        for backend, url in (("SQLite", None), ("PostgreSQL", pg_url)):
            instance = harness.make_instance(url)
            app = harness.app_for(instance)
            paths = seeds.busy_studio(app, n, prefix="l")
            apps[backend] = (app, instance, paths)
        pg_app, pg_instance, pg_paths = apps["PostgreSQL"]
        statements = statements_per_page(pg_app, pg_instance.token, pg_paths)
        calls: dict[str, Callable[[], Any]] = {}
        for name in pg_paths:
            for fmt, accept in FORMATS.items():
                for backend, (app, instance, paths) in apps.items():
                    calls[f"{name} ({fmt}) {backend}"] = page_getter(app, instance.token,
                                                                     paths[name], accept)
        # Each page's own statements on the bare drivers, alternated with the pages' renders.
        sqlite_file = apps["SQLite"][1].env["DATABASE_URL"].removeprefix("sqlite:///")
        connections = {"SQLite": stack.enter_context(closing(sqlite3.connect(sqlite_file))),
                       "PostgreSQL": stack.enter_context(closing(psycopg.connect(
                           pg_url.replace("postgresql+psycopg://", "postgresql://"),
                           autocommit=True)))}
        alone: dict[str, harness.Sample] = {}
        for name in pg_paths:
            for fmt, accept in FORMATS.items():
                for backend, (app, instance, paths) in apps.items():
                    sent = page_sql(app, instance.token, paths[name], accept)
                    connection = connections[backend]
                    sample = alone[f"{name} ({fmt}) {backend}"] = harness.Sample()
                    calls[f"{name} ({fmt}) {backend} SQL"] = (
                        lambda sent=sent, connection=connection, sample=sample:
                        sample.latencies.append(sql_alone(connection, sent)))
                    if backend == "PostgreSQL":
                        piped = alone[f"{name} ({fmt}) pipelined"] = harness.Sample()
                        calls[f"{name} ({fmt}) pipelined"] = (
                            lambda sent=sent, connection=connection, sample=piped:
                            sample.latencies.append(sql_pipelined(connection, sent)))
        wall, cpu = timed(calls, rounds=ROUNDS, per_round=max(count // ROUNDS, 1))
        by_round = round_p50s(wall)
        each_round = highest_each_round({
            f"{name} ({fmt})": harness.ratios_by_round(by_round[f"{name} ({fmt}) PostgreSQL"],
                                                       by_round[f"{name} ({fmt}) SQLite"])
            for name in pg_paths for fmt in FORMATS})
        rows, over = [], []
        for name in pg_paths:
            for fmt in FORMATS:
                s, p = wall[f"{name} ({fmt}) SQLite"], wall[f"{name} ({fmt}) PostgreSQL"]
                s_cpu, p_cpu = cpu[f"{name} ({fmt}) SQLite"], cpu[f"{name} ({fmt}) PostgreSQL"]
                s_sql = alone[f"{name} ({fmt}) SQLite"].p50
                p_sql = alone[f"{name} ({fmt}) PostgreSQL"].p50
                # Our code's cost as on SQLite, the database's as PostgreSQL answers alone.
                floor = s.p50 - s_sql + p_sql
                if p.p50 > GOAL_PG * s.p50:
                    over.append(f"{name} ({fmt})")
                rows.append([f"{name} ({fmt})", str(statements[(name, fmt)]), f"{s.p50:.2f}",
                             f"{p.p50:.2f}", f"{p.p50 / s.p50:.2f}×",
                             f"{p_cpu.p50 / s_cpu.p50:.2f}×", f"{s_sql:.2f}", f"{p_sql:.2f}",
                             f"{floor:.2f}", f"{floor / s.p50:.2f}×", f"{p.p50 / floor:.2f}×",
                             f"{alone[f'{name} ({fmt}) pipelined'].p50:.2f}"])
        harness.print_table(
            f"PostgreSQL beside SQLite, same run (n = {n}, in-process WSGI, {count} requests "
            f"each, alternated)",
            ["page", "statements", "SQLite p50 ms", "PG p50 ms", "PG / SQLite",
             "PG / SQLite CPU", "its SQL alone, SQLite ms", "its SQL alone, PG ms",
             "floor ms", "floor / SQLite", "PG / floor", "its SQL pipelined, PG ms"],
            rows,
            ["Its SQL alone: the statements and parameters the page hands the driver, run on "
             "a bare driver connection one after another as the page sends them (on "
             "PostgreSQL in autocommit: a page writes nothing, so it begins no transaction; "
             "p50). The floor "
             "is the SQLite page with its SQL's time replaced by PostgreSQL's: what the page "
             "would cost on "
             "PostgreSQL if our code around the statements cost what it costs on SQLite. "
             "Pipelined: the same statements all sent before any answer is read (psycopg's "
             "pipeline mode), what they would cost if no read waited for another's answer.",
             f"Goal: every page's PostgreSQL p50 ≤ {GOAL_PG:g}× its SQLite p50 — "
             f"{harness.goal(not over)}" + (f" (over: {', '.join(over)})" if over else "")
             + f"; the highest PostgreSQL ÷ SQLite p50 in each of the {ROUNDS} rounds: "
             f"{each_round}"])
        owners_table(apps, pg_paths, max(count // 3, 1))
        together_table(pg_app, pg_instance.token, pg_paths, count)
        alone_table(pg_app, pg_instance.token, pg_paths, count)
    harness.print_footer()


def ways_alternated(pages: dict[str, Callable[[], Any]], ways: dict[str, Callable[[], None]],
                    count: int) -> dict[str, harness.Sample]:
    """Each page's wall times under each way, by "page way": the way's setter called before
    each request, the series alternated in one process, the first way set again after."""
    calls: dict[str, Callable[[], Any]] = {}
    for name, get in pages.items():
        for label, choose in ways.items():
            def call(get: Callable[[], Any] = get, choose: Callable[[], None] = choose) -> None:
                choose()
                get()

            calls[f"{name} {label}"] = call
    try:
        wall, _cpu = timed(calls, rounds=3, per_round=max(count // 3, 1))
    finally:
        next(iter(ways.values()))()
    return wall


def two_ways_table(app: Any, token: str, names: tuple[str, ...] | dict[str, str],
                   paths: dict[str, str], ways: dict[str, Callable[[], None]], title: str,
                   columns: list[str], note: str, count: int) -> None:
    """Each page of ``names`` in both formats under the app's way (the first of ``ways``) and
    the other, alternated in one process; other ÷ the app's."""
    wall = ways_alternated({f"{name} ({fmt})": page_getter(app, token, paths[name], accept)
                            for name in names for fmt, accept in FORMATS.items()},
                           ways, count)
    mine, other = ways
    rows = []
    for name in names:
        for fmt in FORMATS:
            first, second = (wall[f"{name} ({fmt}) {label}"].p50 for label in (mine, other))
            rows.append([f"{name} ({fmt})", f"{first:.2f}", f"{second:.2f}",
                         f"{second / first:.2f}×"])
    harness.print_table(title, ["page", *columns], rows, [note])


# The pages that read several things at once (app.db.read_many).
TOGETHER = ("studio", "cycle", "team", "decision", "commitment", "note")


def together_table(app: Any, token: str, paths: dict[str, str], count: int) -> None:
    """The PostgreSQL pages with their independent reads pipelined (one round trip,
    ``app.db.read_many``) beside the same reads one after another, alternated in one
    process (``HARMONIC_DB_PIPELINE``)."""

    def pipelined(on: bool) -> Callable[[], None]:
        return lambda: app.config.update(HARMONIC_DB_PIPELINE=on)

    two_ways_table(
        app, token, TOGETHER, paths,
        {"pipelined": pipelined(True), "one by one": pipelined(False)},
        "PostgreSQL pages, their independent reads pipelined or one after another, "
        "alternated",
        ["pipelined (the app) p50 ms", "one after another p50 ms",
         "one after another ÷ pipelined"],
        "Pipelined: the reads a page makes that need no answer of one another go to "
        "PostgreSQL in one pipeline, one round trip for all (the app, app.db.read_many): on "
        "the item pages those after the item (its comments, backlinks, pin, and the "
        "decision's tally, voters and the caller's votes; the commitment's participants; the "
        "note's history, readers and read state), on the studio home its recent notes, this "
        "cycle's decisions and commitments, its pins and its feed, on the cycle page its "
        "three lists, on the team page its members and their last heartbeats. One after "
        "another: the same reads, each waiting for its answer.", count)


def alone_table(app: Any, token: str, paths: dict[str, str], count: int) -> None:
    """The PostgreSQL pages with their reads alone (autocommit, ``app.db.session``) beside
    the same reads in one transaction, alternated in one process."""
    from app.db import session

    alone = session.reads_alone
    wall = ways_alternated(
        {name: page_getter(app, token, paths[name], FORMATS["md"]) for name in paths},
        {"alone": lambda: setattr(session, "reads_alone", alone),
         "in a transaction": lambda: setattr(session, "reads_alone", lambda _session: False)},
        count)
    harness.print_table(
        "PostgreSQL pages (Markdown), their reads alone or in a transaction, alternated",
        ["page", "alone (the app) p50 ms", "in a transaction p50 ms",
         "in a transaction ÷ alone"],
        [[name, f"{wall[f'{name} alone'].p50:.2f}",
          f"{wall[f'{name} in a transaction'].p50:.2f}",
          f"{wall[f'{name} in a transaction'].p50 / wall[f'{name} alone'].p50:.2f}×"]
         for name in paths],
        ["Alone (the app): a page writes nothing, so its reads run in autocommit and nothing "
         "begins or ends a transaction. In a transaction: psycopg sends BEGIN before the "
         "first read and the request's end rolls it back, which also makes psycopg forget "
         "the connection's prepared statements (two round trips more, and every statement "
         "planned again)."])


def owners_table(apps: dict[str, Any], paths: dict[str, str], times: int) -> None:
    """A cProfile of each page's Markdown from both instances, its own time split by whose code
    it is: where the time PostgreSQL adds to a page goes."""
    split: dict[tuple[str, str], dict[str, float]] = {}
    for name in paths:
        found = harness.owners_alternated(
            {backend: page_getter(app, instance.token, own_paths[name], FORMATS["md"])
             for backend, (app, instance, own_paths) in apps.items()}, times)
        split.update(((name, backend), owners) for backend, owners in found.items())
    owners = [who for who in harness.owner_names() if any(found.get(who, 0.0) >= 5e-6
                                                        for found in split.values())]

    def cell(name: str, who: str | None) -> str:
        values = []
        for backend in ("SQLite", "PostgreSQL"):
            found = split[(name, backend)]
            values.append(sum(found.values()) if who is None else found.get(who, 0.0))
        return f"{values[0] * 1e3:.2f} / {values[1] * 1e3:.2f}"

    added = {name: sum(split[(name, "PostgreSQL")].values())
             - sum(split[(name, "SQLite")].values()) for name in paths}
    database = ("database driver", harness.WAITING)
    theirs = {name: sum(split[(name, "PostgreSQL")].get(who, 0.0)
                        - split[(name, "SQLite")].get(who, 0.0) for who in database)
              for name in paths}
    harness.print_table(
        f"Whose code each page's time is in, SQLite / PostgreSQL (Markdown; profiled own "
        f"time per request, ms; {times} requests each under cProfile)",
        ["code", *paths],
        [[who, *(cell(name, who) for name in paths)] for who in owners]
        + [["all", *(cell(name, None) for name in paths)],
           ["PostgreSQL's added time: the driver and its wait",
            *(f"{theirs[name] / added[name] * 100:.0f}%" if added[name] > 0 else "—"
              for name in paths)]],
        ["The profiler slows every Python call alike, so these times are larger than the "
         "unprofiled p50s above and only compare with one another. On PostgreSQL the driver's "
         "row is psycopg's Python around each statement; the wait is the time the request "
         "thread slept for the server's answers (in-process, the database's socket is the "
         "only one). The two databases' requests alternate, and Python's cyclic garbage "
         "collector is paused while they run (and run every 20 rounds between them), so a "
         "collection, which lands on whichever request it interrupts, weighs on neither."])


if __name__ == "__main__":
    main()

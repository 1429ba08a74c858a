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
is the steadier one to compare runs by. The goals (issue 22) are read on the wall-time p50:
every page within 30x the bare view's in the same run, and within 3 ms.

    .venv/bin/python bench/core_pages.py [--quick | --smoke] [--postgres]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
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


def statements_per_page(app: Any, token: str, paths: dict[str, str]) -> dict[tuple[str, str], int]:
    return {(name, fmt): page_statements(app, token, path, accept)
            for name, path in paths.items() for fmt, accept in FORMATS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    args = parser.parse_args()
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
        samples, cpu = timed(calls, rounds=3, per_round=max(count // 3, 1))
        bare = "bare Flask, fixed Markdown"
        floor, floor_p50, floor_cpu = samples[bare].rate, samples[bare].p50, cpu[bare].p50
        pages = [name for name in samples if name != bare]
        over = [name for name in pages if samples[name].p50 > GOAL_RATIO * floor_p50]
        slow = [name for name in pages if samples[name].p50 > GOAL_MS]
        harness.print_table(
            f"Render time at n = {large_n} ({db_name}, in-process WSGI, {count} requests each)",
            ["page", "req/s", "p50 ms", "p99 ms", "bare Flask / page", "p50 / bare p50",
             "CPU p50 ms", "CPU / bare CPU"],
            [[name, f"{s.rate:,.0f}", f"{s.p50:.2f}", f"{s.p99:.2f}",
              f"{floor / s.rate:.1f}×" if s.rate else "-",
              f"{s.p50 / floor_p50:.1f}×" if floor_p50 else "-", f"{cpu[name].p50:.2f}",
              f"{cpu[name].p50 / floor_cpu:.1f}×" if floor_cpu else "-"]
             for name, s in samples.items()],
            [f"Goal: every page's p50 ≤ {GOAL_RATIO}× the bare view's p50 — "
             f"{harness.goal(not over)}" + (f" (over: {', '.join(over)})" if over else ""),
             f"Goal: every page's p50 ≤ {GOAL_MS:g} ms — {harness.goal(not slow)}"
             + (f" (over: {', '.join(slow)})" if slow else "")])
    harness.print_footer()


if __name__ == "__main__":
    main()

"""Pages: SQL statements per page (no N+1) and render time of the heaviest pages, both formats.

The demo studio is filled by ``seeds.busy_studio`` with a small ``n`` and then a large one
(options, voters, comments, participants...). For every heavy page the statements one request
runs are counted with SQLAlchemy's ``before_cursor_execute`` event at both sizes (item pages:
the small set's item against the large set's; studio pages: before and after the large set
was added): the count must not grow with the number of items shown. Then each page is timed
at the large size as Markdown (the agent's format) and HTML, in-process through the WSGI stack
(Flask's test client, so the numbers measure our code, not the network), beside a bare Flask
view returning a fixed Markdown string (the floor for any Flask page).

    .venv/bin/python bench/core_pages.py [--quick | --smoke] [--postgres]
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
        samples = harness.interleaved(calls, rounds=3, per_round=max(count // 3, 1))
        floor = samples["bare Flask, fixed Markdown"].rate
        harness.print_table(
            f"Render time at n = {large_n} ({db_name}, in-process WSGI, {count} requests each)",
            ["page", "req/s", "p50 ms", "p99 ms", "bare Flask / page"],
            [[name, f"{s.rate:,.0f}", f"{s.p50:.2f}", f"{s.p99:.2f}",
              f"{floor / s.rate:.1f}×" if s.rate else "-"] for name, s in samples.items()])
    harness.print_footer()


if __name__ == "__main__":
    main()

"""How fast the core pages are, against a bare Flask baseline measured in the same run.

Runs in-process through the WSGI stack (Flask's test client) so the numbers measure our code,
not the network. Prints requests per second and the ratio to a bare Flask view returning a fixed
Markdown string (the floor for any Flask page).

    .venv/bin/python bench/core_pages.py [--seconds 3] [--database-url URL]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def measure(label: str, call: Callable[[], object], seconds: float) -> float:
    for _ in range(20):  # warm caches and template compilation
        call()
    samples: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    rate = len(samples) / sum(samples)
    p50 = statistics.median(samples) * 1000
    p99 = sorted(samples)[int(len(samples) * 0.99) - 1] * 1000
    print(f"{label:<44} {rate:8.0f} req/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()

    from flask import Flask

    from app import create_app
    from app.extensions import db

    instance = tempfile.mkdtemp()
    os.environ["HARMONIC_INSTANCE"] = instance
    url = args.database_url or f"sqlite:///{instance}/bench.db"
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench"})
    with app.app_context():
        from flask_migrate import upgrade

        from app.services import seed

        upgrade(revision="heads")
        token = seed.seed_demo()
        db.session.commit()
    client = app.test_client()
    md = {"Authorization": f"Bearer {token}", "Accept": "text/markdown"}
    note = client.post("/studios/demo/note/actions/create_note", headers={
        **md, "Accept": "application/json"}, json={"text": "bench"}).json["location"]

    bare = Flask("bare")
    text = "---\napp: Harmonic\n---\n# Bare\n"

    @bare.get("/")
    def index() -> tuple[str, int, dict[str, str]]:
        return text, 200, {"Content-Type": "text/markdown"}

    bare_client = bare.test_client()
    print(f"database: {url.split(':')[0]}, {args.seconds:g} s per row, in-process WSGI")
    baseline = measure("baseline: bare Flask, fixed Markdown", lambda: bare_client.get("/"),
                       args.seconds)
    rows = {
        "GET /studios/demo (Markdown)": lambda: client.get("/studios/demo", headers=md),
        "GET note page (Markdown)": lambda: client.get(note, headers=md),
        "GET note page (JSON)": lambda: client.get(note, headers={**md,
                                                                   "Accept": "application/json"}),
        "POST add_comment (JSON)": lambda: client.post(
            f"{note}/actions/add_comment", headers={**md, "Accept": "application/json"},
            json={"text": "a comment"}),
    }
    for label, call in rows.items():
        rate = measure(label, call, args.seconds)
        print(f"{'':<44} ratio to baseline: {rate / baseline:.3f}")


if __name__ == "__main__":
    main()

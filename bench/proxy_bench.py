"""Playbook proxy: ``POST /rpc`` with recording on, against calling the design-model server
directly (issue item 6), in the same run.

``bin/model-server`` (demo model) serves the upstream; the app runs under gunicorn with
``PLAYBOOK_UPSTREAM`` pointing at it and a teach session open for the token, so every proxied
call is forwarded over HTTP and recorded (capture row and capture log). Measured: sequential
latency (the proxy's added latency is its p50 minus the direct p50; goal at most 1.5 ms) and
throughput with concurrent keep-alive clients (goal at least 80% of direct).

    .venv/bin/python bench/proxy_bench.py [--quick | --smoke] [--postgres] [--clients 8]
"""

from __future__ import annotations

import itertools
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import PY, ROOT  # noqa: E402

METHOD = {"method": "get_walls", "params": {}}


def second_token(inst: harness.Instance) -> str:
    """A token of another person, who never teaches: the proxy without recording."""
    from app.extensions import db
    from app.services import accounts, tokens

    app = harness.app_for(inst)
    with app.app_context():
        user = accounts.create_user("quiet", "Quiet Person")
        _token, plaintext = tokens.create_token(user, name="bench")
        db.session.commit()
        db.engine.dispose()
    return plaintext


def main() -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    import httpx

    count = harness.size(1000, 300, 5)
    seconds = harness.size(10, 4, 0.5)
    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_proxy")) if args.postgres else None
        inst = harness.make_instance(url)
        model_port, app_port = harness.free_port(), harness.free_port()
        direct = f"http://127.0.0.1:{model_port}/rpc"
        proxy = f"http://127.0.0.1:{app_port}/rpc"
        env = dict(inst.env, PLAYBOOK_UPSTREAM=f"http://127.0.0.1:{model_port}")
        stack.enter_context(harness.servers([
            ([PY, str(ROOT / "bin" / "model-server"), "--port", str(model_port), "--load-demo",
              "--threads", "8"], inst.env, direct),
            (harness.gunicorn(app_port), env, proxy)]))
        auth = {"Authorization": f"Bearer {inst.token}"}
        quiet = {"Authorization": f"Bearer {second_token(inst)}"}  # a user who is not teaching
        started = httpx.post(f"http://127.0.0.1:{app_port}/teach/start?name=bench",
                             headers=auth, timeout=10)
        assert started.status_code == 200, started.text
        ids = itertools.count(1)

        def caller(url: str, headers: dict[str, str]) -> Any:
            client = stack.enter_context(httpx.Client(timeout=30))

            def call() -> None:
                body = json.dumps({"jsonrpc": "2.0", "id": next(ids), **METHOD})
                response = client.post(url, content=body, headers={
                    **headers, "Content-Type": "application/json"})
                if response.status_code != 200 or "error" in response.json():
                    raise RuntimeError(f"{url}: {response.status_code} {response.text[:300]}")
            return call

        samples = harness.interleaved({
            "direct: bin/model-server /rpc": caller(direct, {}),
            "proxied: app /rpc, recording on": caller(proxy, auth),
            "proxied: app /rpc, not recording": caller(proxy, quiet),
        }, rounds=5, per_round=max(count // 5, 1))
        names = list(samples)
        rows = [[name, f"{s.rate:,.0f}", f"{s.p50:.2f}", f"{s.p99:.2f}"]
                for name, s in samples.items()]
        added = samples[names[1]].p50 - samples[names[0]].p50
        unrecorded = samples[names[2]].p50 - samples[names[0]].p50
        harness.print_table(
            f"Sequential {METHOD['method']} calls ({count} each, interleaved)",
            ["series", "calls/s", "p50 ms", "p99 ms"], rows,
            [f"Added latency at p50, recording on: {added:.2f} ms (goal ≤ 1.5 ms: "
             f"{harness.goal(added <= 1.5)}); not recording: {unrecorded:.2f} ms"])

        def setup(client: Any, url: str) -> dict[str, str]:
            headers = {"Content-Type": "application/json"}
            return {**headers, **auth} if url == proxy else headers

        def request(client: Any, url: str, headers: dict[str, str], n: int) -> None:
            body = json.dumps({"jsonrpc": "2.0", "id": n + 1, **METHOD})
            response = client.post(url, content=body, headers=headers)
            if response.status_code != 200:
                raise RuntimeError(f"{url}: {response.status_code} {response.text[:300]}")

        loads = {}
        for label, target in (("direct", direct), ("proxied, recording on", proxy)):
            harness.http_load([target], args.clients, min(seconds, 1), setup, request)
            loads[label] = harness.http_load([target], args.clients, seconds, setup, request)
        ratio = loads["proxied, recording on"].sample.rate / loads["direct"].sample.rate
        harness.print_table(
            f"Throughput, {args.clients} keep-alive clients, {seconds:g} s each "
            f"(upstream: 1 process × 8 threads; app: gunicorn 1 process × 8 threads)",
            ["series", "calls/s", "p50 ms", "p99 ms"],
            [[label, f"{load.sample.rate:,.0f}", f"{load.sample.p50:.2f}",
              f"{load.sample.p99:.2f}"] for label, load in loads.items()],
            [f"Proxied / direct: {ratio:.2f} (goal ≥ 0.8: {harness.goal(ratio >= 0.8)})"])
    harness.print_footer()


if __name__ == "__main__":
    main()

"""Open GET /mcp streams one process holds (issue 21), in the two places they are served: a
gunicorn worker of ``bin/serve`` on the app's own port (``app.mcp.stream_worker``: the worker
hands each stream to its event loop; 2 pool threads) and the separate stream endpoint
(``app.mcp.stream`` under uvicorn, ``HARMONIC_STREAM_PORT``). For each: resident memory of the
process holding the streams with none open and with N open, and how long one change takes to
reach all N (the fan-out), in the same run.

Sessions are real 2025-11-25 sessions (``initialize`` and ``resources/subscribe`` through the
app in this process, on the instance's database); the streams are opened by one asyncio client.
Bounded by the open-file limit of both processes (``ulimit -n``).

    .venv/bin/python bench/streams_bench.py [--quick | --smoke] [--postgres] [--streams N,...]
        [--where main,endpoint]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import PY  # noqa: E402

URI = "harmonic://page/studios/demo/note"
ACCEPT = "application/json, text/event-stream"


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))


def sessions(app: Any, token: str, count: int) -> list[str]:
    """``count`` subscribed 2025-11-25 sessions, made through /mcp in this process."""
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT,
               "Content-Type": "application/json"}
    made = []
    for _ in range(count):
        init = client.post("/mcp", headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}})
        sid = init.headers["Mcp-Session-Id"]
        more = {**headers, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        client.post("/mcp", headers=more, json={"jsonrpc": "2.0",
                                                "method": "notifications/initialized"})
        done = client.post("/mcp", headers=more, json={
            "jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": URI}})
        assert done.status_code == 200, done.get_data(as_text=True)
        made.append(sid)
    return made


async def hold(url: str, token: str, ids: list[str], change: Any) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    opened = asyncio.Semaphore(0)
    arrived: list[float] = []
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60, read=None)) as http:
        async def one(sid: str) -> None:
            headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {token}",
                       "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
            async with http.stream("GET", url + "/mcp", headers=headers) as response:
                assert response.status_code == 200
                opened.release()
                async for line in response.aiter_lines():
                    if line.startswith("data:") and json.loads(line[5:])["params"]["uri"] == URI:
                        arrived.append(time.perf_counter())
                        return

        tasks = [asyncio.create_task(one(sid)) for sid in ids]
        for _ in ids:
            await opened.acquire()
        await asyncio.sleep(1.0)  # let the server settle before reading its memory
        held = change("rss")
        started = time.perf_counter()
        await asyncio.to_thread(change, "change")
        await asyncio.wait_for(asyncio.gather(*tasks), 600)
    delays = sorted(a - started for a in arrived)
    return {"rss": held, "p50": statistics.median(delays), "max": delays[-1],
            "p99": delays[min(len(delays) - 1, int(len(delays) * 0.99))]}


def worker_pid(master: int) -> int:
    """The one gunicorn worker of a ``bin/serve`` started with HARMONIC_WORKERS=1."""
    deadline = time.monotonic() + 30
    while True:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if children:
            return int(children[0])
        if time.monotonic() > deadline:
            raise RuntimeError("bin/serve started no worker")
        time.sleep(0.1)


def measure(where: str, instance: Any, app: Any, counts: list[int]) -> None:
    port = harness.free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**instance.env, "HARMONIC_STREAMS_PER_TOKEN": "0"}
    if where == "main":
        title = "a bin/serve worker on the app's port (2 pool threads)"
        env.update(HOST="127.0.0.1", PORT=str(port), HARMONIC_WORKERS="1",
                   HARMONIC_THREADS="2", HARMONIC_ACCESS_LOG="off")
        env.pop("HARMONIC_STREAM_PORT", None)
        cmd = [PY, str(harness.ROOT / "bin" / "serve")]
        path = "/healthz"
    else:
        title = "the stream endpoint (uvicorn, HARMONIC_STREAM_PORT)"
        cmd = [PY, "-m", "uvicorn", "--factory", "app.entrypoints:stream_app", "--host",
               "127.0.0.1", "--port", str(port), "--no-access-log"]
        path = "/"  # any answer: the endpoint is up

    def probe(u: str) -> Any:
        import httpx

        return httpx.get(u + path, timeout=2)

    with harness.server(cmd, env, base, probe=probe) as proc:
        pid = worker_pid(proc.pid) if where == "main" else proc.pid
        idle = rss_kib(pid)
        client = app.test_client()
        headers = {"Authorization": f"Bearer {instance.token}", "Accept": "application/json"}

        def change(what: str) -> int:
            if what == "rss":
                return rss_kib(pid)
            made = client.post("/studios/demo/note/actions/create_note",
                               json={"title": "fan-out", "text": "x"}, headers=headers)
            assert made.status_code == 201, made.get_data(as_text=True)
            return 0

        print(f"\n### {title}\n\n| open streams | process RSS | per stream | one change "
              "reaches all: p50 / p99 / last |\n| --- | --- | --- | --- |")
        print(f"| 0 | {idle / 1024:.1f} MiB | — | — |")
        for count in counts:
            with app.app_context():
                ids = sessions(app, instance.token, count)
            out = asyncio.run(hold(base, instance.token, ids, change))
            per = (out["rss"] - idle) / count
            print(f"| {count} | {out['rss'] / 1024:.1f} MiB | {per:.1f} KiB | "
                  f"{out['p50'] * 1000:.0f} / {out['p99'] * 1000:.0f} / "
                  f"{out['max'] * 1000:.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    parser.add_argument("--streams", help="comma list of stream counts")
    parser.add_argument("--where", default="main,endpoint",
                        help="comma list of: main (bin/serve's port), endpoint (uvicorn)")
    args = parser.parse_args()
    counts = [int(n) for n in args.streams.split(",")] if args.streams else harness.size(
        [500, 1000, 2000], [200, 500], [5])
    print(f"## Open GET /mcp streams in one process\n\n{harness.machine()}")
    with ExitStack() as stack:
        url = stack.enter_context(harness.pg_database("bench_streams")) if args.postgres \
            else None
        instance = harness.make_instance(url)
        app = harness.app_for(instance)
        for where in args.where.split(","):
            measure(where.strip(), instance, app, counts)
    print(f"\nRerun: `{harness.command_line()}`")


if __name__ == "__main__":
    main()

"""What every benchmark shares: run sizes, a fresh instance, servers, a load generator, tables.

Each bench script accepts ``--quick`` (finishes in about a minute) and ``--smoke`` (a few
iterations, for CI: it must complete and print its table; its numbers mean nothing). Goals are
ratios measured in the same run, because a shared machine moves absolute figures a lot.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The rate limiter's three tiers stay in the path (their cost counts) but never bind a
# benchmark: on a fast machine a page benchmark sends more than a person's default burst
# (4,000 requests in ten seconds) and was answered 429.
for _tier in ("", "_PERSON", "_STUDIO"):
    os.environ.setdefault(f"HARMONIC_RATE_LIMIT{_tier}", "600000000")
    os.environ.setdefault(f"HARMONIC_RATE_BURST{_tier}", "10000000")

SMOKE = "--smoke" in sys.argv
QUICK = "--quick" in sys.argv or SMOKE


def require(modules: dict[str, str], extras: str = "test") -> None:
    """Stop before measuring anything when a module a benchmark needs is missing, saying what it
    is for and the one command that installs it (``bin/dev`` installs only the app)."""
    import importlib.util

    def absent(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is None
        except (ImportError, ValueError):  # a parent package missing, or a broken install
            return True

    missing = {name: why for name, why in modules.items() if absent(name)}
    if missing:
        lines = [f"  {name}: {why}" for name, why in missing.items()]
        sys.exit("this benchmark needs modules that are not installed:\n" + "\n".join(lines)
                 + f"\ninstall them with: .venv/bin/pip install -e '.[{extras}]' "
                 "(bin/test does this too)")


def arguments(doc: str | None, postgres: bool = True) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--quick`` and ``--smoke`` (read by ``size``), and
    ``--postgres`` where it can run there; a script adds its own to the parser it gets."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    if postgres:
        parser.add_argument("--postgres", action="store_true",
                            help="PostgreSQL instead of SQLite")
    return parser


def size(full: float, quick: float, smoke: float) -> Any:
    """A run size for the mode this script was started in."""
    return smoke if SMOKE else quick if QUICK else full


def command_line() -> str:
    """How to rerun what is running now (printed under every table)."""
    script = Path(sys.argv[0]).resolve()
    try:
        shown = str(script.relative_to(ROOT))
    except ValueError:
        shown = str(script)
    return " ".join([".venv/bin/python", shown, *map(shlex.quote, sys.argv[1:])])


LOAD_AT_START = os.getloadavg()[0]


def machine() -> str:
    return (f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
            f"load average {LOAD_AT_START:.2f} at start, {os.getloadavg()[0]:.2f} at the end")


# Profiles ------------------------------------------------------------------------------------

# Whose code a profiled function is, by where its file lives or what it is called (the first
# match wins). In-process benchmarks open no socket but the database's, so a wait in select or
# poll is a wait for the database's answer.
WAITING = "waiting for the database's answers"
OWNERS = (("ours (app/)", (str(ROOT / "app"),)),
          ("the bench scripts (bench/)", (str(ROOT / "bench"),)),
          ("Flask and its extensions", ("/flask/", "/flask_login/", "/flask_sqlalchemy/",
                                        "/flask_wtf/", "/itsdangerous/", "/blinker/")),
          ("Werkzeug", ("/werkzeug/",)),
          ("SQLAlchemy", ("/sqlalchemy/",)),
          # psycopg waits in C, called from Connection.wait: profiled as that function's time
          (WAITING, ("/psycopg/connection.py:wait", "select.", "/selectors.py")),
          ("database driver", ("/psycopg/", "sqlite3")),
          ("JSON", ("/json/", "_json")),
          ("Jinja", ("/jinja2/", "/markupsafe/")),
          ("YAML, Markdown, HTML cleaning", ("/yaml/", "/markdown_it/", "nh3")))
OTHER_OWNER = "Python's standard library and builtins"


def owner(filename: str, function: str) -> str:
    where = f"{filename}:{function}"
    for name, marks in OWNERS:
        if any(mark in where for mark in marks):
            return name
    return OTHER_OWNER


def owners_of(run: Callable[[], object], times: int) -> dict[str, float]:
    """Seconds of profiled own time per call of ``run`` (cProfile, ``times`` calls), by whose
    code they were spent in. The profiler slows every function call alike: compare shares, or
    two profiles of the same kind, not a profile with an unprofiled time."""
    return owners_alternated({"": run}, times)[""]


def owners_alternated(runs: dict[str, Callable[[], object]], times: int,
                      ) -> dict[str, dict[str, float]]:
    """``owners_of`` for several runs compared with one another (``profiled``)."""
    found: dict[str, dict[str, float]] = {}
    for name, stats in profiled(runs, times).items():
        split = found[name] = {}
        for (filename, _line, function), (_cc, _nc, tottime, _ct, _callers) in stats.items():
            key = owner(filename, function)
            split[key] = split.get(key, 0.0) + tottime / times
    return found


def calls_per_run(run: Callable[[], object], times: int) -> int:
    """Python function calls one call of ``run`` makes (cProfile's count over ``times``
    calls, divided): unlike a time, a count the machine's speed and load do not move, so two
    runs or two commits compare by it when times are too noisy to."""
    stats = profiled({"": run}, times)[""]
    return round(sum(found[1] for found in stats.values()) / times)


def profiled(runs: dict[str, Callable[[], object]], times: int) -> dict[str, Any]:
    """A cProfile of each run over ``times`` calls, as pstats' table (file, line, function)
    -> (primitive calls, calls, own time, cumulative time, callers): one profile each, their
    calls alternated (a slow spell of the machine falls on all alike), with the cyclic garbage
    collector paused while they run (a collection is charged to whichever call it interrupts,
    one side's more than the other's by chance) and run every 20 rounds between them."""
    import cProfile
    import gc
    import pstats

    profiles = {name: cProfile.Profile() for name in runs}
    collecting = gc.isenabled()
    try:
        for done in range(times):
            if done % 20 == 0:
                gc.enable()
                gc.collect()
            gc.disable()
            for name, run in runs.items():
                profile = profiles[name]
                profile.enable()
                run()
                profile.disable()
    finally:
        if collecting:
            gc.enable()
    return {name: pstats.Stats(profile).stats  # type: ignore[attr-defined]
            for name, profile in profiles.items()}


def owner_names() -> list[str]:
    return [name for name, _ in OWNERS] + [OTHER_OWNER]


# Statistics ----------------------------------------------------------------------------------

@dataclass
class Sample:
    """Latencies in seconds of one measured series, and the wall time it took."""

    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    cpu: float = 0.0  # this process's CPU seconds over the series (all its threads)

    @property
    def rate(self) -> float:
        if self.elapsed > 0:
            return len(self.latencies) / self.elapsed
        total = sum(self.latencies)
        return len(self.latencies) / total if total else 0.0

    def pct(self, q: float) -> float:
        """The q-quantile in milliseconds (nearest rank)."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    @property
    def p50(self) -> float:
        return self.pct(0.5)

    @property
    def p99(self) -> float:
        return self.pct(0.99)

    def summary(self) -> str:
        return f"{self.rate:,.0f}/s, p50 {self.p50:.2f} ms, p99 {self.p99:.2f} ms"


def sequential(call: Callable[[], object], count: int, warmup: int = 5) -> Sample:
    """Run ``call`` ``count`` times in a row, timing each."""
    for _ in range(warmup):
        call()
    sample = Sample()
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        t = time.perf_counter()
        call()
        sample.latencies.append(time.perf_counter() - t)
    sample.elapsed = time.perf_counter() - started
    sample.cpu = time.process_time() - cpu
    return sample


def interleaved(calls: dict[str, Callable[[], object]], rounds: int, per_round: int,
                warmup: int = 5) -> dict[str, Sample]:
    """Sequential series of each call, alternated round by round so load drifts hit all alike."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    samples = {name: Sample() for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            part = sequential(call, per_round, warmup=0)
            samples[name].latencies += part.latencies
            samples[name].elapsed += part.elapsed
            samples[name].cpu += part.cpu
    return samples


# Tables --------------------------------------------------------------------------------------

def print_table(title: str, header: list[str], rows: list[list[str]],
                notes: list[str] = ()) -> None:  # type: ignore[assignment]
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(" --- " for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for note in notes:
        print(f"\n{note}")
    sys.stdout.flush()


def print_footer() -> None:
    print(f"\nMachine: {machine()}.  Rerun: `{command_line()}`")


def goal(ok: bool) -> str:
    return "met" if ok else "NOT met"


# Instances and processes ---------------------------------------------------------------------

_ports_given: set[int] = set()


def free_port() -> int:
    """A free loopback port, never one given before in this process: servers started together
    bind their ports only later, and the kernel may hand the same free port out twice (a second
    server then fails to bind, and its clients silently reach the first)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _ports_given:
            _ports_given.add(port)
            return port


def pg_url(name: str) -> str:
    """A PostgreSQL URL on the test server (HARMONIC_TEST_PG) for a database of our own."""
    admin = os.environ.get("HARMONIC_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    server, _, query = admin.partition("?")  # ?host=/a/socket/folder: a Unix socket
    return f"{server.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


@contextmanager
def pg_database(prefix: str) -> Iterator[str]:
    """A PostgreSQL database made for this run and dropped afterwards."""
    import uuid

    import psycopg

    admin = os.environ.get("HARMONIC_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_url(name)
    finally:
        _let_go(pg_url(name))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Instance:
    """A migrated database with the demo seeded: its environment and the demo user's token."""

    env: dict[str, str]
    token: str
    path: str


def make_instance(database_url: str | None = None) -> Instance:
    """A fresh instance folder; SQLite inside it unless ``database_url`` is given.

    With ``HARMONIC_BENCH_TEMPLATE`` naming a folder made by ``write_template`` (the smoke
    tests make one per test worker), a SQLite instance is a copy of it: the same migrated
    database and demo studio without migrating and seeding again."""
    folder = tempfile.mkdtemp(prefix="harmonic-bench-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    url = database_url or f"sqlite:///{folder}/harmonic.db"
    env = dict(os.environ, HARMONIC_INSTANCE=folder, FLASK_APP="wsgi.py", DATABASE_URL=url,
               SECRET_KEY="bench", WORKFLOWS_WORKER="off", HARMONIC_MCP_LOG="ERROR")
    template = Path(os.environ.get("HARMONIC_BENCH_TEMPLATE") or "/nonexistent")
    if database_url is None and (template / TEMPLATE_TOKEN).is_file():
        shutil.copytree(template, folder, dirs_exist_ok=True)
        token = (Path(folder) / TEMPLATE_TOKEN).read_text().strip()
        return Instance(env=env, token=token, path=folder)
    subprocess.run([PY, "-m", "flask", "db", "upgrade", "heads"], env=env, cwd=ROOT,
                   check=True, capture_output=True)
    seeded = subprocess.run([PY, "-m", "flask", "seed-demo"], env=env, cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    token = next(line.split("=", 1)[1] for line in seeded.splitlines()
                 if line.startswith("HARMONIC_API_TOKEN="))
    return Instance(env=env, token=token, path=folder)


TEMPLATE_TOKEN = "bench-template-token"


def write_template(folder: str) -> None:
    """A migrated SQLite instance with the demo studio in ``folder``, for make_instance to copy
    (its demo token beside it)."""
    os.environ.pop("HARMONIC_BENCH_TEMPLATE", None)
    made = make_instance()
    shutil.copytree(made.path, folder, dirs_exist_ok=True)
    (Path(folder) / TEMPLATE_TOKEN).write_text(made.token)


def app_for(instance: Instance) -> Any:
    """The Flask app of ``instance`` in this process."""
    os.environ["HARMONIC_INSTANCE"] = instance.path
    from app import create_app

    app = create_app({"DATABASE_URL": instance.env["DATABASE_URL"], "SECRET_KEY": "bench",
                      "WORKFLOWS_WORKER": "off"})
    _apps.append((instance.env["DATABASE_URL"], app))
    return app


_apps: list[tuple[str, Any]] = []  # every app made in this process, with its database's URL


def _let_go(database_url: str) -> None:
    """Stop what the apps on ``database_url`` hold open on it (the change feed's listening
    connection, the engine's pool), so that dropping the database ends no connection of ours
    and prints no error of theirs."""
    from app.core import feed
    from app.extensions import db

    for url, app in [made for made in _apps if made[0] == database_url]:
        relay = feed.running(app)
        if relay is not None:
            relay.stop()
        with app.app_context():
            db.engine.dispose()
        _apps.remove((url, app))


@contextmanager
def server(cmd: list[str], env: dict[str, str], url: str,
           probe: Callable[[str], Any] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server process and wait until ``url`` answers; stop it afterwards."""
    with servers([(cmd, env, url)], probe) as procs:
        yield procs[0]


@contextmanager
def servers(specs: list[tuple[list[str], dict[str, str], str]],
            probe: Callable[[str], Any] | None = None
            ) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start every (command, environment, url) server at once, then wait until each url
    answers (their imports overlap instead of queueing); stop them all afterwards."""
    import httpx

    procs: list[subprocess.Popen[bytes]] = []
    try:
        for cmd, env, _url in specs:
            procs.append(subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 60 + 10 * len(specs)
        for proc, (cmd, _env, url) in zip(procs, specs, strict=True):
            while True:
                try:
                    (probe or (lambda u: httpx.post(u, json={}, timeout=2)))(url)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError(f"{' '.join(cmd)} did not start") from None
                    time.sleep(0.1)
        yield procs
    finally:
        stop(procs, 10)


def stop(procs: list[subprocess.Popen[Any]], grace: float) -> None:
    """Ask every process to end, then kill those still running after ``grace`` seconds."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def gunicorn(port: int, app: str = "wsgi:app", workers: int = 1, threads: int = 8,
             worker_class: str | None = None) -> list[str]:
    """gunicorn with bin/serve's worker class (gthread answering a kept-alive connection's next
    request on the same thread, GET /mcp streams on an event loop) unless told another."""
    from app.mcp.stream_worker import WORKER_CLASS

    return [PY, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-k", worker_class or WORKER_CLASS,
            "--threads", str(threads), "-w", str(workers), "--log-level", "warning", app]


@contextmanager
def session_read_on_the_driver(app: Any, session_id: str) -> Iterator[Callable[[], Any]]:
    """The statement ``find_session`` runs, with its parameters, on the driver's connection of
    a pooled connection kept in autocommit: the driver's floor for that read."""
    from app.extensions import db
    from app.mcp import store

    with app.app_context():
        compiled = store._FIND_SESSION.compile(dialect=db.engine.dialect)
        values = compiled.construct_params({"sid": session_id})
        params: Any = (tuple(values[name] for name in compiled.positiontup or ())
                       if compiled.positional else values)
        held = db.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        connection = held.connection.driver_connection

    def read() -> Any:
        cursor = connection.cursor()
        cursor.execute(compiled.string, params)
        return cursor.fetchall()

    try:
        yield read
    finally:
        held.close()


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process in MB, from /proc."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


# HTTP load -----------------------------------------------------------------------------------

@dataclass
class Rates:
    """What a load generator that keeps no latency list reports: throughput, p50 and p99 (ms)."""

    rate: float
    p50: float
    p99: float


@dataclass
class Load:
    """The result of a load run: its throughput and latencies, and requests per target URL;
    ``errors`` says what went wrong (bad answers the generator counted), empty if nothing."""

    sample: Sample | Rates
    per_url: dict[str, int]
    errors: str = ""
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds by meter, over the run
    requests: int = 0  # answered in the run (wrk's count; 0 where not counted)


# CPU meters ----------------------------------------------------------------------------------
# Where a call's CPU goes under load: the server's processes, the database's, the load
# generator's. On two shared cores the sum bounds throughput, so these split a gap between two
# servers into what each part costs (read from /proc; Linux only, else the meters are empty).

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[int, float, str]]:
    """Every readable process: pid → (parent pid, CPU seconds of all its threads, command
    line)."""
    found: dict[int, tuple[int, float, str]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                # The command name may hold spaces and parentheses: fields follow the last ")".
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmd:
                line = cmd.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended while listed, or not ours to read
            continue
        found[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / CLOCK_TICKS,
                             line)
    return found


def process_cpu(roots: list[int]) -> Callable[[], float]:
    """A meter: the CPU seconds so far of ``roots`` and all their descendants (a gunicorn
    master and its workers)."""
    def read() -> float:
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (parent, _cpu, _cmd) in table.items():
            children.setdefault(parent, []).append(pid)
        total, todo = 0.0, list(roots)
        while todo:
            pid = todo.pop()
            total += table[pid][1] if pid in table else 0.0
            todo.extend(children.get(pid, ()))
        return total
    return read


def _postgres_pids() -> list[int]:
    """The local PostgreSQL server's processes: its postmaster (its command line starts with
    the ``postgres`` binary) and every backend and helper it forked (titled ``postgres: ...``)."""
    return [pid for pid, (_parent, _cpu, cmd) in _processes().items()
            if cmd.startswith("postgres:")
            or os.path.basename(cmd.split(" ", 1)[0]) == "postgres"]


@contextmanager
def database_on_its_own_cpu() -> Iterator[str]:
    """PostgreSQL's server processes on the machine's last CPU, and this process with every
    process it starts from now (the servers measured, the load generator) on the others: the
    database as it runs on a machine of its own, where its work takes no CPU from the app's
    processes. Yields a phrase saying so; every mask changed is put back afterwards.

    Stops with a message where that cannot be done: fewer than two CPUs, no local PostgreSQL
    server found, or no permission to move its processes (run as root or as its own user)."""
    cpus = sorted(os.sched_getaffinity(0))
    pids = _postgres_pids()
    if len(cpus) < 2 or not pids:
        raise SystemExit("--database-cpu needs two CPUs and a PostgreSQL server on this "
                         f"machine: found {len(cpus)} CPU(s) and {len(pids)} server process(es)")
    database, ours = {cpus[-1]}, set(cpus[:-1])
    before: dict[int, set[int]] = {}
    try:
        for pid in pids:  # new backends inherit the postmaster's mask when it forks them
            try:
                before[pid] = os.sched_getaffinity(pid)
                os.sched_setaffinity(pid, database)
            except ProcessLookupError:  # ended while we moved the others
                continue
    except PermissionError:
        for pid, mask in before.items():
            os.sched_setaffinity(pid, mask)
        raise SystemExit("--database-cpu could not move PostgreSQL's processes: run the "
                         "benchmark as root or as the server's own user") from None
    every = set(cpus)
    os.sched_setaffinity(0, ours)
    try:
        yield (f"its server on CPU {cpus[-1]} alone, the benchmark's processes on "
               f"CPU {', '.join(map(str, sorted(ours)))}")
    finally:
        os.sched_setaffinity(0, every)
        for pid in _postgres_pids():  # backends forked meanwhile got the pinned mask too
            try:
                os.sched_setaffinity(pid, before.get(pid, every))
            except (ProcessLookupError, PermissionError):
                continue


def database_cpu(url: str) -> Callable[[], float]:
    """A meter: the CPU seconds so far of the PostgreSQL server's processes serving the
    database of ``url`` (its backends name the database in their process title)."""
    name = url.split("?", 1)[0].rsplit("/", 1)[-1]

    def read() -> float:
        return sum(cpu for _parent, cpu, cmd in _processes().values()
                   if cmd.startswith("postgres:") and f" {name} " in cmd)
    return read


def children_cpu() -> float:
    """A meter: the CPU seconds of this process's ended (waited-for) children: wrk's."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def http_load(urls: list[str], clients: int, seconds: float,
              setup: Callable[[Any, str], dict[str, str]],
              request: Callable[[Any, str, dict[str, str], int], None]) -> Load:
    """``clients`` threads with one keep-alive connection each, spread round-robin over
    ``urls``; ``setup(client, url)`` returns a client's headers (e.g. after initialize), and
    ``request(client, url, headers, n)`` sends one request and checks its answer.

    The clock starts once every client is set up, so slow set-up never eats the run.
    """
    import httpx

    lock = threading.Lock()
    latencies: list[float] = []
    per_url = {url: 0 for url in urls}
    stop = [0.0]
    failures: list[BaseException] = []
    ready = threading.Barrier(clients + 1,
                              action=lambda: stop.__setitem__(0, time.monotonic() + seconds))

    def worker(url: str) -> None:
        mine: list[float] = []
        try:
            with httpx.Client(timeout=30) as client:
                headers = setup(client, url)
                ready.wait()
                n = 0
                while time.monotonic() < stop[0]:
                    t = time.perf_counter()
                    request(client, url, headers, n)
                    mine.append(time.perf_counter() - t)
                    n += 1
        except threading.BrokenBarrierError:
            return
        except BaseException as exc:  # reported after the run
            failures.append(exc)
            ready.abort()
        with lock:
            latencies.extend(mine)
            per_url[url] += len(mine)

    threads = [threading.Thread(target=worker, args=(urls[i % len(urls)],))
               for i in range(clients)]
    for thread in threads:
        thread.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        pass
    started = time.monotonic()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"load client failed: {failures[0]!r}") from failures[0]
    return Load(Sample(latencies, time.monotonic() - started), per_url)


WRK = shutil.which("wrk")
WRK_SCRIPT = ROOT / "bench" / "wrk_jsonrpc.lua"


def wrk_version() -> str:
    out = subprocess.run([WRK or "wrk", "--version"], capture_output=True, text=True)
    return (out.stdout + out.stderr).split(" [")[0].strip() or "wrk"


def wrk_load(targets: dict[str, list[str]], connections: int, seconds: int,
             body: dict[str, Any], headers: dict[str, str],
             meters: dict[str, Callable[[], float]] | None = None) -> Load:
    """JSON-RPC load from wrk: one wrk process (one thread, ``connections`` keep-alive
    connections) per target URL, all started together. ``targets`` maps each URL to its MCP
    session ids (possibly none); ``body`` is the request without its id (wrk_jsonrpc.lua gives
    each request its own). Throughput is the sum over the processes; p50 and p99 are the
    highest any process saw (a conservative merge, since the distributions are not kept).
    ``meters`` are read just before wrk starts and once every wrk process has ended: their
    differences are the run's ``cpu``."""
    meters = dict(meters or {}, **{"load generator": children_cpu})
    if not WRK:
        raise RuntimeError("wrk is not installed")
    flags = [f"-H{name}: {value}" for name, value in headers.items()]
    before = {name: meter() for name, meter in meters.items()}
    procs = {url: subprocess.Popen(
        [WRK, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "--latency",
         *flags, "-s", str(WRK_SCRIPT), url, "--",
         json.dumps(body, separators=(",", ":")), *sessions],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for url, sessions in targets.items()}
    results: dict[str, dict[str, int]] = {}
    problems: list[str] = []
    for url, proc in procs.items():
        out, err = proc.communicate(timeout=seconds + 60)
        line = next((x for x in out.splitlines() if x.startswith("RESULT ")), None)
        if proc.returncode != 0 or line is None:
            raise RuntimeError(f"wrk against {url} failed ({proc.returncode}): {out}{err}")
        results[url] = {key: int(value) for key, value in
                        (pair.split("=") for pair in line.split()[1:])}
        counts = results[url]
        wrong = [f"{counts[key]} {label}" for key, label in (
            ("bad_status", "non-2xx answers"), ("rpc_errors", "JSON-RPC errors"),
            ("socket_errors", "socket errors")) if counts[key]]
        first = next((x[10:] for x in out.splitlines() if x.startswith("FIRST_BAD ")), "")
        if wrong:
            problems.append(f"{url}: {', '.join(wrong)}" + (f"; first: {first}" if first else ""))
    cpu = {name: meter() - before[name] for name, meter in meters.items()}
    rate = sum(r["requests"] / (r["duration_us"] / 1e6) for r in results.values())
    rates = Rates(rate, max(r["p50_us"] for r in results.values()) / 1000,
                  max(r["p99_us"] for r in results.values()) / 1000)
    return Load(rates, {url: r["requests"] for url, r in results.items()}, "; ".join(problems),
                cpu, sum(r["requests"] for r in results.values()))


def spread(load: Load) -> str:
    return "/".join(str(n) for n in load.per_url.values())


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratios_by_round(mine: list[float], theirs: list[float]) -> list[float]:
    """Each round's ratio of two series measured round by round (a round without a figure of
    theirs has none): how far one run's median ratio can be trusted."""
    return [a / b for a, b in zip(mine, theirs, strict=True) if b]

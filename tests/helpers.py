"""Small helpers: reading what the app returns (Markdown with YAML frontmatter), setting up a
studio, and starting and stopping the server processes that tests run for real."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import yaml

# libyaml's safe loader where PyYAML has it: the suite parses thousands of frontmatters (each
# page's actions and their parameters), a large share of some tests' time with the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_md(text: str) -> tuple[dict[str, Any], str]:
    """Split a Markdown page into its frontmatter (parsed with a real YAML parser) and body."""
    assert text.startswith("---\n"), text[:200]
    head, _, body = text[4:].partition("\n---\n")
    front = yaml.load(head, Loader=_LOADER)  # noqa: S506 (a safe loader)
    assert isinstance(front, dict)
    return front, body


def action_names(text: str) -> list[str]:
    return [a["name"] for a in parse_md(text)[0]["actions"]]


def open_studio(app: Any, owner: str, handle: str = "team", name: str = "Team") -> None:
    """An open studio without the heartbeat gate, owned (as admin) by the existing ``owner``."""
    from app.extensions import db
    from app.models import User
    from app.services import studios

    with app.app_context():
        user = db.session.query(User).filter(User.handle == owner).one()
        studios.create_studio(user, handle=handle, name=name, join_policy="open",
                              heartbeats_required=False)
        db.session.commit()


def join_studio(make_agent: Any, handle: str, studio: str = "team") -> Any:
    """A new agent ``handle`` that has joined the open studio ``studio``."""
    agent = make_agent(handle)
    assert agent.act(f"/studios/{studio}/join", "join_studio").status_code == 200
    return agent


def log_in(page: Any, handle: str, password: str) -> None:
    """Log a browser tab in through the login form."""
    page.goto("/login")
    page.fill("#login", handle)
    page.fill("#password", password)
    page.click("form button[type=submit]")
    page.wait_for_url("**/")


def wait_until_healthy(url: str, proc: subprocess.Popen, what: str,  # type: ignore[type-arg]
                       seconds: float = 30) -> None:
    """Poll ``GET url`` until it answers 200; RuntimeError if ``proc`` dies or time runs out."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start (exit code {proc.poll()})")
        time.sleep(0.1)


def wait_until_answering(url: str, deadline: float,
                         proc: subprocess.Popen | None = None) -> None:  # type: ignore[type-arg]
    """Poll ``GET url`` until the server answers at all (any status); RuntimeError with its
    stderr if ``proc`` dies, the last transport error once ``time.monotonic()`` passes
    ``deadline``."""
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "died")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def stop(proc: subprocess.Popen, grace: float = 10) -> None:  # type: ignore[type-arg]
    """Ask a server process to stop, and kill it if it has not within ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def age_memberships(app, days: int = 2) -> None:  # type: ignore[no-untyped-def]
    """Move every membership's join back ``days``: past the first day, which is never gated."""
    from datetime import timedelta

    from app.extensions import db
    from app.models import Membership

    with app.app_context():
        for member in db.session.query(Membership):
            member.joined_at -= timedelta(days=days)
        db.session.commit()


def server_backends(app: Any, application_name: str, expect: int | None = None,
                    seconds: float = 5.0) -> list[int]:
    """PostgreSQL: the server processes of the connections named ``application_name`` to the
    app's database. With ``expect``, asked again until they number that many or ``seconds``
    pass: a closed connection's server process leaves ``pg_stat_activity`` only once it has
    exited, a moment after the client closed it (longer on a busy machine)."""
    from sqlalchemy import text

    from app.extensions import db

    deadline = time.monotonic() + seconds
    while True:
        with app.app_context(), db.engine.connect() as conn:
            pids = list(conn.execute(text(
                "SELECT pid FROM pg_stat_activity WHERE application_name = :name "
                "AND datname = current_database()"), {"name": application_name}).scalars())
        if expect is None or len(pids) == expect or time.monotonic() >= deadline:
            return pids
        time.sleep(0.05)


def playbook_row(owner: str, number: int = 1, teaching: bool = False,
                 **fields: object) -> Any:
    """A Playbook to add: the smallest row the database tests write (``number`` names it and
    is its ``entries``), ids assigned."""
    from app.models.playbooks import Playbook

    playbook = Playbook(name=f"p{number}", session_id=f"s-{owner}-{number}", owner=owner,
                        upstream="", teaching=teaching, entries=number, **fields)
    playbook.assign_ids()
    return playbook


def playbook_owners() -> list[str]:
    """Every playbook's owner as committed (sorted), read in a session of its own."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models.playbooks import Playbook

    db.session.remove()
    found = sorted(db.session.scalars(select(Playbook.owner)))
    db.session.remove()
    return found


def at_once(app: Any, work: Callable[[], Any], workers: int) -> list[Any]:
    """What ``work`` returns in ``workers`` threads, each in its own app context, started at the
    same moment (as the workers' sweeps of several processes meet)."""
    from app.extensions import db

    results: list[Any] = []
    errors: list[BaseException] = []
    start = threading.Barrier(workers)

    def run() -> None:
        with app.app_context():
            try:
                start.wait()
                results.append(work())
            except BaseException as exc:  # reported below, in the test's thread
                errors.append(exc)
            finally:
                db.session.remove()

    threads = [threading.Thread(target=run) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results

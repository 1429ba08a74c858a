"""Session rows kept per process (app.mcp.kept_sessions) over the stamps every process of a
host shares (app.models.host_stamps). Two apps on one database stand for two processes (each
keeps its own copies; real processes: tests/mcp/test_processes.py). On SQLite a call reads its
session's row once and then uses its copy; a change made through the other app (navigation,
the session's end) is seen by the next call at once; a change that tells nobody is seen
within the configured bound; 0 keeps no copies. On PostgreSQL every call reads the row."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import create_engine, update

from app.extensions import db
from app.models import host_stamps
from app.models.base import utcnow
from app.models.mcp import McpSession
from bench.sqlcount import counting
from config import SettingError, build_config
from tests.conftest import make_app
from tests.helpers import open_studio
from tests.mcp.conftest import Http
from tests.mcp.test_http import _FlaskClient


@pytest.fixture
def other(app: Flask, tmp_path: Path) -> Iterator[Any]:
    """A second app on the same database: another process, as far as its copies go."""
    def make(**overrides: object) -> Flask:
        with app.app_context():
            url = db.engine.url.render_as_string(hide_password=False)
        return make_app(url, tmp_path / "other", **overrides)

    made: list[Flask] = []

    def factory(**overrides: object) -> Flask:
        made.append(make(**overrides))
        return made[-1]

    yield factory
    for application in made:
        with application.app_context():
            db.session.remove()
            db.engine.dispose()


def _sessions_read(app: Flask, http: Http) -> int:
    """How many times a ping of ``http``'s session reads the session's row in ``app``."""
    with counting(app) as statements:
        assert http.call("ping")["result"] == {}
    return sum("FROM mcp_sessions" in statement for statement in statements)


def _sqlite(app: Flask) -> bool:
    with app.app_context():
        return db.engine.dialect.name == "sqlite"


def test_a_change_through_another_process_is_seen_by_the_next_call(
        app: Flask, client: Any, studio: Any, other: Any) -> None:
    second = other()
    here = Http("http://localhost", studio.token, _FlaskClient(client))
    here.initialize()
    there = Http("http://localhost", studio.token, _FlaskClient(second.test_client()))
    there.session_id = here.session_id
    assert _sessions_read(second, there) == 1
    # The copy: no read on SQLite; PostgreSQL's processes may be on other hosts, so it reads.
    assert _sessions_read(second, there) == (0 if _sqlite(app) else 1)
    open_studio(app, "alice", handle="lab", name="Lab")
    assert here.tool("navigate", path="/studios/lab/note")["structuredContent"]["path"] \
        == "/studios/lab/note"
    made = there.tool("execute_action", action="create_note", params={"text": "from there"})
    assert made["structuredContent"]["location"].startswith("/studios/lab/n/"), made
    ended = client.delete("/mcp", headers={**here.headers, "Mcp-Session-Id": here.session_id})
    assert ended.status_code == 204
    assert there.post({"jsonrpc": "2.0", "id": 9, "method": "ping"}).status_code == 404


def test_a_change_that_tells_nobody_is_seen_within_the_bound(
        app: Flask, client: Any, studio: Any, other: Any) -> None:
    second = other(HARMONIC_SESSION_CACHE_SECONDS=0.3)
    here = Http("http://localhost", studio.token, _FlaskClient(client))
    here.initialize()
    there = Http("http://localhost", studio.token, _FlaskClient(second.test_client()))
    there.session_id = here.session_id
    assert there.call("ping")["result"] == {}
    with app.app_context():  # ended by hand: no stamp is bumped
        db.session.execute(update(McpSession).where(McpSession.id == here.session_id)
                           .values(ended_at=utcnow()))
        db.session.commit()
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    if _sqlite(app):
        assert there.post(ping).status_code == 200  # its copy, younger than the bound
        time.sleep(0.35)
    assert there.post(ping).status_code == 404


def test_no_copies_when_turned_off(app: Flask, client: Any, studio: Any, other: Any) -> None:
    second = other(HARMONIC_SESSION_CACHE_SECONDS=0)
    here = Http("http://localhost", studio.token, _FlaskClient(client))
    here.initialize()
    there = Http("http://localhost", studio.token, _FlaskClient(second.test_client()))
    there.session_id = here.session_id
    assert [_sessions_read(second, there) for _ in range(3)] == [1, 1, 1]


def test_stamps_are_shared_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "harmonic.db-stamps"
    one, two = host_stamps.Stamps(path), host_stamps.Stamps(path)  # two mappings: two processes
    before = two.read("mcp-session:a")
    assert one.read("mcp-session:a") == before and len(before) == 8
    one.bump("mcp-session:a")
    assert two.read("mcp-session:a") != before
    unrelated = [key for key in ("b", "c", "d", "e") if host_stamps.Stamps._slot(
        f"mcp-session:{key}") != host_stamps.Stamps._slot("mcp-session:a")]
    kept = two.read(f"mcp-session:{unrelated[0]}")
    one.bump("mcp-session:a")
    assert two.read(f"mcp-session:{unrelated[0]}") == kept  # another slot is not touched
    assert path.stat().st_size == host_stamps.SLOTS * 8


def test_only_a_sqlite_file_has_stamps(tmp_path: Path) -> None:
    found = host_stamps.for_engine(create_engine(f"sqlite:///{tmp_path / 'x.db'}"))
    assert found is not None and found.path == tmp_path / "x.db-stamps"
    assert host_stamps.for_engine(create_engine("sqlite://")) is None
    assert host_stamps.for_engine(create_engine("sqlite:///:memory:")) is None
    postgresql = create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    assert host_stamps.for_engine(postgresql) is None


@pytest.mark.parametrize("value", ["2", "-1", "soon"])
def test_copies_kept_longer_than_a_second_are_refused_by_name(
        value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARMONIC_SESSION_CACHE_SECONDS", value)
    with pytest.raises(SettingError, match="HARMONIC_SESSION_CACHE_SECONDS"):
        build_config(str(tmp_path))


def test_whoever_may_write_the_database_may_write_its_stamps(tmp_path: Path) -> None:
    database = tmp_path / "shared.db"
    database.touch()
    database.chmod(0o660)
    old = os.umask(0o007)
    try:
        found = host_stamps.for_engine(create_engine(f"sqlite:///{database}"))
    finally:
        os.umask(old)
    assert found is not None and found.path.stat().st_mode & 0o777 == 0o660

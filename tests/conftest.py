"""Shared fixtures: every database test runs on SQLite and on PostgreSQL.

Each test session makes its own PostgreSQL database (and drops it afterwards) on the server
at ``HARMONIC_TEST_PG`` (default 127.0.0.1:5432, user postgres, database test), and its own
SQLite file. The schema comes from the Alembic migrations, never from ``create_all``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app import create_app
from app.extensions import db

PG_ADMIN_URL = os.environ.get("HARMONIC_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
BACKENDS = [b for b in os.environ.get("HARMONIC_TEST_BACKENDS", "sqlite,postgresql").split(",")
            if b]


def _pg_admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(scope="session")
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[str]:
    backend = request.param
    if backend == "sqlite":
        path = tmp_path_factory.mktemp("sqlite") / "harmonic.db"
        yield f"sqlite:///{path}"
        return
    name = f"harmonic_test_{uuid.uuid4().hex[:12]}"
    _pg_admin(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    try:
        # Every connection of the tests and of the servers they start gives up waiting for a
        # lock after two minutes: a transaction left open by mistake then fails the test that
        # waits on it, with PostgreSQL's "lock timeout" error, instead of hanging the run.
        yield f"{base}/{name}?options=-c%20lock_timeout%3D120s"
    finally:
        _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# Whole directories that are never part of ``bin/test --fast``: they start real servers (load,
# faults), run benchmarks (bench) or budgeted random inputs (fuzz), or drive Chromium (browser).
# Marking them here means a new test there carries its marker without anyone remembering to add
# it; a slow test elsewhere is marked in its own module.
DIRECTORY_MARKS = {"load": "slow", "faults": "slow", "bench": "slow", "fuzz": "slow",
                   "browser": "browser"}


# The xdist_group of a module whose servers are module fixtures (one per database): its tests of
# one backend run on one worker, so each server starts once, while its two backends' halves may
# run on both workers at once (unlike the load and fault suites' groups, whose servers must not).
PER_BACKEND = "per-backend"


def module_group(name: str) -> list[pytest.MarkDecorator]:
    """``pytestmark`` for such a module: group ``name``, split by backend (see PER_BACKEND)."""
    return [pytest.mark.xdist_group(name), pytest.mark.xdist_group(PER_BACKEND)]


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist names the groups in the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        try:
            parts = item.path.relative_to(root).parts
        except ValueError:
            continue
        mark = DIRECTORY_MARKS.get(parts[0]) if len(parts) > 1 else None
        if mark is not None:
            item.add_marker(getattr(pytest.mark, mark))
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("database_url") == "postgresql":
            item.add_marker(pytest.mark.postgresql)  # bin/test --fast selects by it
        if _uses_browser(item):  # one Chromium for them all (see _SharedChromium)
            for group in module_group("browser"):
                item.add_marker(group)
        if callspec is not None and any(group.args == (PER_BACKEND,)
                                        for group in item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(str(callspec.params["database_url"])))
        if "browser" in item.path.stem:  # test_browser.py, test_fp_browser.py, ...
            item.add_marker(pytest.mark.browser)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Parametrize at session scope so all tests of one backend share one migrated database.
    # A test marked one_backend checks what the database cannot change (a page's styles, its
    # accessibility): it runs on the first backend only, to keep the suite's time down.
    if "database_url" in metafunc.fixturenames:
        one = metafunc.definition.get_closest_marker("one_backend") is not None
        metafunc.parametrize("database_url", BACKENDS[:1] if one else BACKENDS, indirect=True,
                             scope="session")


# Passwords the tests make are hashed at a low cost: the default's cost, its protection, would
# be a large share of the suite's time (every sign-up and sign-in).
# tests/core/test_auth.py checks the default itself.
TEST_PASSWORD_HASH = "scrypt:1024:8:1"


def make_app(database_url: str, instance: Path, **overrides: object) -> Flask:
    os.environ["HARMONIC_INSTANCE"] = str(instance)
    config = {"DATABASE_URL": database_url, "SECRET_KEY": "test-secret",
              "HARMONIC_DATA_DIR": str(instance / "data"), "TESTING": True,
              "HARMONIC_PASSWORD_HASH": TEST_PASSWORD_HASH}
    config.update(overrides)
    return create_app(config)


@pytest.fixture(scope="session")
def app(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    with migrated_app(database_url, tmp_path_factory.mktemp("instance")) as application:
        yield application


@contextmanager
def migrated_app(database_url: str, instance: Path) -> Iterator[Flask]:
    """An app on ``database_url`` with every migration applied; its connections closed after."""
    from flask_migrate import upgrade

    application = make_app(database_url, instance)
    with application.app_context():
        upgrade(revision="heads")
    yield application
    from app.core import feed

    relay = feed.running(application)
    if relay is not None:  # before its database goes: else it logs the loss while retrying
        relay.stop()
    with application.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(autouse=True)
def _clean_tables(request: pytest.FixtureRequest) -> Iterator[None]:
    """Empty every table after each database test, so tests never see each other's rows."""
    yield
    if "app" not in request.fixturenames:
        return
    application: Flask = request.getfixturevalue("app")
    with application.app_context():
        db.session.rollback()
        with db.engine.begin() as conn:
            _delete_every_row(conn)
        db.session.remove()
    # Budgets kept per client address (OAuth registration) would otherwise carry over from
    # one test to the next: every test client comes from the same address.
    limiter = application.extensions.get("harmonic.ratelimit")
    if limiter is not None:
        limiter.clear()


def _delete_every_row(conn: Any) -> None:
    """DELETE FROM every table, children first, in ``conn``'s transaction.

    It runs after every database test, so the statements go to the driver's own cursor, past
    SQLAlchemy's per-statement work, and PostgreSQL gets them as one query: one round trip
    (``prepare=False``: a query of several statements cannot be a prepared statement)."""
    deletes = [f'DELETE FROM "{table.name}"' for table in reversed(db.metadata.sorted_tables)]
    cursor = conn.connection.driver_connection.cursor()
    try:
        if conn.dialect.name == "postgresql":
            cursor.execute("; ".join(deletes), prepare=False)
        else:
            for delete in deletes:
                cursor.execute(delete)
    finally:
        cursor.close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


class Agent:
    """An HTTP agent: a user with a token, speaking Markdown (or JSON) to the app."""

    def __init__(self, client: FlaskClient, handle: str, token: str) -> None:
        self.client, self.handle, self.token = client, handle, token

    def headers(self, accept: str = "text/markdown") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Accept": accept}

    def get(self, path: str, accept: str = "text/markdown"):  # type: ignore[no-untyped-def]
        return self.client.get(path, headers=self.headers(accept))

    def post(self, path: str, json: object = None, accept: str = "application/json",
             **kwargs: object):  # type: ignore[no-untyped-def]
        return self.client.post(path, json=json if json is not None else {},
                                headers=self.headers(accept), **kwargs)

    def act(self, page: str, action: str, accept: str = "application/json", **params: object):  # type: ignore[no-untyped-def]
        return self.post(f"{page}/actions/{action}", json=params, accept=accept)


@pytest.fixture
def make_agent(app: Flask, client: FlaskClient):  # type: ignore[no-untyped-def]
    """make_agent("alice") → an Agent with a read,write token (creating the user if needed)."""
    from app.models import User
    from app.services import accounts, tokens

    def factory(handle: str, scopes: str = "read,write", password: str | None = None) -> Agent:
        with app.app_context():
            user = db.session.query(User).filter(User.handle == handle).one_or_none()
            if user is None:
                user = accounts.create_user(handle, handle.title(), password=password)
            _token, plaintext = tokens.create_token(user, name="test", scopes=scopes)
            db.session.commit()
        return Agent(client, handle, plaintext)

    return factory


@pytest.fixture
def studio(app: Flask, make_agent):  # type: ignore[no-untyped-def]
    """A studio 'team' owned by alice (admin), open to join; returns alice's Agent."""
    from tests.helpers import open_studio

    alice = make_agent("alice")
    open_studio(app, "alice")
    return alice


@pytest.fixture
def demo(app: Flask) -> None:
    """The design-model demo (levels, walls, beams B1-B5), loaded through its own CLI."""
    result = app.test_cli_runner().invoke(args=["design-model", "load-demo", "--reset"])
    assert result.exit_code == 0, result.output


@pytest.fixture
def live_server(app: Flask) -> Iterator[str]:
    """The app served over real HTTP on a free loopback port, in a background thread."""
    import threading

    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)


CHROMIUM = os.environ.get("HARMONIC_CHROMIUM", "/usr/bin/chromium")


class _SharedChromium:
    """One Playwright driver and one Chromium, kept open from one test that uses them to the
    next, and closed as soon as the next test to run does not use them. The tests that use them
    form one xdist group per backend (``pytest_collection_modifyitems``), so each worker runs
    them one after another and starts them about once per backend.

    Starting them costs seconds per test on a busy machine (the Playwright driver is a Node
    process that loads its whole bundle). They cannot simply live for the session: Playwright's
    sync API keeps an event loop marked as running on the main thread while it is open, which
    would break tests that call asyncio.run (the MCP SDK client tests). A test that uses the
    browser never calls asyncio.run itself (it could not before either), and they are closed in
    the last browser test's own teardown, before any fixture of a wider scope is torn down and
    before any other test starts. Every test still gets its own browser context (cookies,
    storage) from ``page``, or makes its own from ``browser``."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self.next_uses_it = False  # set when a test's teardown starts

    def get(self) -> Any:
        if self._browser is not None and not self._browser.is_connected():
            self.close()  # a crashed Chromium is replaced, never reused
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            if not Path(CHROMIUM).exists():
                pytest.fail(f"Chromium not found at {CHROMIUM}: bin/test installs Debian's "
                            f"chromium")
            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True,
                args=["--no-sandbox", "--disable-background-networking", "--disable-gpu",
                      "--disable-component-update", "--disable-sync", "--no-first-run"])
        return self._browser

    def close(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        try:
            if browser is not None and browser.is_connected():
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


_CHROMIUM = _SharedChromium()


def _uses_browser(item: pytest.Item | None) -> bool:
    return item is not None and "browser" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    # Runs before any fixture is torn down: ``browser``'s own teardown reads it.
    _CHROMIUM.next_uses_it = _uses_browser(nextitem)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not _uses_browser(item):  # in case a browser test's teardown did not get that far
        _CHROMIUM.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    _CHROMIUM.close()


@pytest.fixture
def browser() -> Iterator[object]:
    """Debian's Chromium driven by Playwright (never a browser build downloaded by Playwright),
    shared with the neighbouring tests that use it (see ``_SharedChromium``)."""
    from playwright.sync_api import expect

    # Assertions that wait (a preview rendered after a pause in typing, a live status) get the
    # same patience as the pages' own actions (15 s): a busy CI machine is slower than 5 s.
    expect.set_options(timeout=15_000)
    browser = _CHROMIUM.get()
    yield browser
    if not _CHROMIUM.next_uses_it:
        _CHROMIUM.close()
        return
    try:  # a context a test left open would carry its pages into the next test
        for context in browser.contexts:
            context.close()
    except Exception:  # noqa: BLE001 - a browser that cannot close a context is not reused
        _CHROMIUM.close()
        raise


@pytest.fixture
def page(browser, live_server: str):  # type: ignore[no-untyped-def]
    """A fresh browser tab (own cookies) with ``page.base`` set to the live server's URL."""
    context = browser.new_context(base_url=live_server)
    tab = context.new_page()
    tab.set_default_timeout(15000)
    yield tab
    context.close()

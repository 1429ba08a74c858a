"""Cookie doors: every endpoint that changes state and takes a browser's sign-in cookie checks
CSRF or refuses the cookie; the cookies are SameSite=Lax (Secure behind https); no response may
be framed by another site.

Doors are enumerated from the Flask URL map, never listed by hand: a new route is checked by
itself. Sample URLs come from the authorization matrix's seeded studio."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.routing import Rule

from app.actions.effects import READ
from app.actions.registry import ACTIONS
from app.extensions import db
from app.web.pages import PAGES
from tests.conftest import make_app
from tests.core.test_auth import login
from tests.security import matrix

CHANGES = {"POST", "PUT", "PATCH", "DELETE"}
CROSS_SITE = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site",
              "Referer": "https://evil.example/page"}
# What a third-party page can make a browser send without a CORS preflight.
DELETE_ELEMENTS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "delete_elements",
                              "params": {"selector": {"category": "OST_Walls"}}})
BODIES: dict[str, dict[str, Any]] = {
    "text/plain": {"data": DELETE_ELEMENTS, "content_type": "text/plain"},
    "form": {"data": {"text": "forged", "name": "forged", "confirm": "yes"},
             "content_type": "application/x-www-form-urlencoded"},
    "multipart": {"data": {"text": "forged", "file": (io.BytesIO(b"forged"), "f.txt")},
                  "content_type": "multipart/form-data"},
}


@pytest.fixture
def seeded(app: Flask, make_agent: Any, demo: None) -> matrix.Studio:
    return matrix.seed(app, make_agent)


def _segments(rule: str) -> list[str]:
    return rule.strip("/").split("/")


def sample_path(rule: Rule, seeded: matrix.Studio) -> str:
    """A URL for ``rule``: the longest sampled page whose rule starts it supplies the values;
    an ``<action_name>`` is an action that writes on that page; anything else a dummy."""
    text = rule.rule
    best: tuple[int, str, str] | None = None
    for name in seeded.paths:
        page_rule = PAGES[name].rule
        if (text == page_rule or text.startswith(page_rule.rstrip("/") + "/")) and (
                best is None or len(page_rule) > best[0]):
            best = (len(page_rule), page_rule, name)
    values: dict[str, str] = {}
    if best is not None:
        _length, page_rule, name = best
        for part, value in zip(_segments(page_rule), _segments(seeded.paths[name]),
                               strict=True):
            if part.startswith("<"):
                values[part] = value
        writes = [a.name for a in ACTIONS.values() if name in a.pages and a.effect != READ]
        values["<action_name>"] = writes[0] if writes else "zz_none"
    parts = []
    for part in _segments(text):
        if part.startswith("<"):
            part = values.get(part, "1" if part.startswith("<int:") else "zz-sample")
        parts.append(part)
    return "/" + "/".join(parts)


def state_changing_doors(app: Flask, seeded: matrix.Studio) -> list[tuple[str, str]]:
    doors = []
    for rule in app.url_map.iter_rules():
        for method in sorted((rule.methods or set()) & CHANGES):
            doors.append((method, sample_path(rule, seeded)))
    return sorted(doors)


def snapshot(app: Flask) -> dict[str, list[str]]:
    """Every row of every table: what a refusal must leave as it was."""
    with app.app_context():
        rows = {table.name: sorted(repr(tuple(row)) for row in
                                   db.session.execute(table.select()).all())
                for table in db.metadata.sorted_tables}
        db.session.rollback()
    return rows


def signed_in(app: Flask, cookie: str) -> FlaskClient:
    """The admin's browser, holding the session cookie, or only the remember-me cookie."""
    browser = app.test_client()
    page = browser.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token
    answer = browser.post("/login", data={"login": matrix.HANDLES["admin"],
                                          "password": matrix.PASSWORD, "remember": "1",
                                          "csrf_token": token.group(1)})
    assert answer.status_code == 303
    if cookie == "remember":
        browser.delete_cookie("session")
        assert browser.get_cookie("remember_token") is not None
    home = browser.get("/", headers={"Accept": "text/html"}).get_data(as_text=True)
    assert "Log out" in home or "logout" in home  # signed in, through that cookie alone
    return browser


@pytest.mark.parametrize("cookie", ["session", "remember"])
@pytest.mark.parametrize("kind", BODIES)
def test_every_state_changing_door_refuses_a_cross_site_cookie_request(
        app: Flask, seeded: matrix.Studio, cookie: str, kind: str) -> None:
    browser = signed_in(app, cookie)
    doors = state_changing_doors(app, seeded)
    assert len(doors) > 50 and ("POST", "/design-model/rpc") in doors
    before = snapshot(app)
    wrong = []
    for method, path in doors:
        body = dict(BODIES[kind])
        if kind == "multipart":  # a file object is read once
            body["data"] = {"text": "forged", "file": (io.BytesIO(b"forged"), "f.txt")}
        response = browser.open(path, method=method, headers=CROSS_SITE, **body)
        if not 400 <= response.status_code < 500 or response.status_code == 404:
            wrong.append(f"{method} {path}: {response.status_code} "
                         f"{response.get_data(as_text=True)[:120]!r}")
    assert not wrong, "\n".join(wrong)
    after = snapshot(app)
    changed = [name for name in before if before[name] != after[name]]
    assert not changed, changed


def test_the_sign_in_stays_good_for_a_request_with_its_csrf_token(
        app: Flask, seeded: matrix.Studio) -> None:
    # The refusals above are CSRF's and not a dead session: the same browser, with the form's
    # token, changes something.
    browser = signed_in(app, "session")
    page = browser.get("/studios/team/note", headers={"Accept": "text/html"})
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True))
    assert token
    made = browser.post("/studios/team/note/actions/create_note",
                        data={"text": "with its token", "csrf_token": token.group(1)})
    assert made.status_code in (201, 303), made.get_data(as_text=True)[:300]


def test_design_model_rpc_refuses_a_cookie_session(app: Flask, make_agent: Any,
                                                  demo: None) -> None:
    # The finding: a cross-site text/plain POST with a signed-in cookie ran delete_elements.
    agent = make_agent("dana", password="dana-password-1")
    browser = app.test_client()
    login(browser, "dana", "dana-password-1")

    def still_there() -> int:
        body = {"jsonrpc": "2.0", "id": 1, "method": "get_walls", "params": {"count": 0}}
        answer = agent.client.post("/design-model/rpc", json=body,
                                   headers=agent.headers("application/json")).get_json()
        return int(answer["result"]["totalCount"])

    walls = still_there()
    response = browser.post("/design-model/rpc", data=DELETE_ELEMENTS, content_type="text/plain",
                            headers=CROSS_SITE)
    assert response.status_code == 401
    assert "cookie is not accepted" in response.get_json()["error"]["message"]
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert still_there() == walls > 0


# -- the cookies -------------------------------------------------------------------------------

def _set_cookies(app: Flask) -> dict[str, str]:
    browser = app.test_client()
    page = browser.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token
    answer = browser.post("/login", data={"login": "pat", "password": "pat-password-1",
                                          "remember": "1", "csrf_token": token.group(1)})
    assert answer.status_code == 303
    return {header.split("=", 1)[0]: header for header in answer.headers.getlist("Set-Cookie")}


def _person(app: Flask) -> None:
    from app.services import accounts

    with app.app_context():
        accounts.create_user("pat", "Pat", password="pat-password-1")
        db.session.commit()


def test_cookies_are_samesite_lax_and_httponly(app: Flask) -> None:
    _person(app)
    cookies = _set_cookies(app)
    assert set(cookies) >= {"session", "remember_token"}
    for header in cookies.values():
        assert "SameSite=Lax" in header, header
        assert "HttpOnly" in header, header
        assert "Secure" not in header, header  # served over http here


def test_cookies_are_secure_behind_https(app: Flask, tmp_path: Path) -> None:
    _person(app)
    served = make_app(app.config["SQLALCHEMY_DATABASE_URI"], tmp_path,
                      HARMONIC_BASE_URL="https://harmonic.example")
    try:
        cookies = _set_cookies(served)
    finally:
        with served.app_context():
            db.engine.dispose()
    for header in cookies.values():
        assert "Secure" in header and "SameSite=Lax" in header, header


# -- framing -----------------------------------------------------------------------------------

def _unframeable(response: Any) -> bool:
    policy = response.headers.get("Content-Security-Policy", "")
    return (response.headers.get("X-Frame-Options") == "DENY"
            and "frame-ancestors 'none'" in policy)


def test_no_response_can_be_framed(app: Flask, seeded: matrix.Studio) -> None:
    signed = signed_in(app, "session")
    anonymous = app.test_client()
    paths = sorted({sample_path(rule, seeded) for rule in app.url_map.iter_rules()
                    if "GET" in (rule.methods or set())})
    assert len(paths) > 50
    wrong = []
    for browser, who in ((signed, "signed in"), (anonymous, "anonymous")):
        for path in paths:
            for accept in ("text/html", "text/markdown"):
                response = browser.get(path, headers={"Accept": accept})
                if not _unframeable(response):
                    wrong.append(f"GET {path} ({who}, {accept}): {response.status_code} "
                                 f"{dict(response.headers)}")
    # Refusals and errors too: a POST without its token, a missing page.
    for response in (signed.post("/studios/team/note/actions/create_note", data={"text": "x"}),
                     signed.get("/no/such/page"), anonymous.post("/mcp", data="{")):
        if not _unframeable(response):
            wrong.append(f"{response.status_code}: {dict(response.headers)}")
    assert not wrong, "\n".join(wrong[:20])


def test_a_policy_a_response_already_has_keeps_its_directives(
        app: Flask, seeded: matrix.Studio) -> None:
    browser = signed_in(app, "session")
    drawing = browser.get(seeded.paths["floorplan"] + ".svg")
    assert drawing.status_code == 200
    policy = drawing.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "default-src" in policy, policy
    assert drawing.headers.getlist("Content-Security-Policy") == [policy]

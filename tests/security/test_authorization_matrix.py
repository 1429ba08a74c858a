"""Every page and action × every identity, on the Markdown/JSON door, the HTML door (cookie
session and forms, with CSRF) and the MCP door. Expectations come from tests/security/matrix.py.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from flask import Flask

from app.actions.registry import ACTIONS
from app.web.pages import PAGES
from tests.core.test_auth import login
from tests.helpers import parse_md
from tests.mcp.conftest import Http
from tests.mcp.test_http import _FlaskClient
from tests.security import matrix

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def seeded(app: Flask, make_agent) -> matrix.Studio:  # type: ignore[no-untyped-def]
    return matrix.seed(app, make_agent)


def bearer(token: str | None, accept: str) -> dict[str, str]:
    headers = {"Accept": accept}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def report(failures: list[str], checked: int) -> None:
    assert checked > 0
    assert not failures, f"{len(failures)} of {checked} cells wrong:\n" + "\n".join(failures[:40])


def test_the_matrix_covers_every_page_and_action(seeded: matrix.Studio) -> None:
    sampled = set(seeded.paths) | matrix.NEEDS_A_RUN
    assert sampled == set(PAGES)
    covered = {act.name for _path, _spec, act in seeded.cells()}
    # Every action is offered on at least one sampled page (the run pages offer none).
    assert covered == set(ACTIONS)


def test_pages_on_the_markdown_door(client, seeded: matrix.Studio) -> None:  # type: ignore[no-untyped-def]
    failures, checked = [], 0
    for identity in matrix.IDENTITIES:
        token = seeded.tokens.get(identity)
        for name, path in seeded.paths.items():
            spec = PAGES[name]
            response = client.get(path, headers=bearer(token, "text/markdown"))
            checked += 1
            if response.status_code not in matrix.expected_get(identity, spec):
                failures.append(f"GET {path} as {identity}: {response.status_code}")
                continue
            if response.status_code != 200 or identity == "anonymous":
                continue
            # What a page advertises, its caller's rules admit (scope aside: same user).
            role = "creator" if identity == "readonly" else identity
            for action in parse_md(response.get_data(as_text=True))[0]["actions"]:
                if role not in matrix.allowed(ACTIONS[action["name"]], spec):
                    failures.append(f"{path} advertises {action['name']} to {identity}")
    report(failures, checked)


def test_actions_on_the_json_door(client, seeded: matrix.Studio) -> None:  # type: ignore[no-untyped-def]
    failures, checked = [], 0
    for path, spec, act in seeded.cells():
        for identity in matrix.IDENTITIES:
            response = client.post(f"{path}/actions/{act.name}", json=matrix.PROBE,
                                   headers=bearer(seeded.tokens.get(identity),
                                                  "application/json"))
            checked += 1
            expected = matrix.expected_post(identity, act, spec)
            if response.status_code not in expected:
                failures.append(f"POST {path}/actions/{act.name} as {identity}: "
                                f"{response.status_code}, expected {sorted(expected)}")
            elif response.status_code == 422:
                named = [e["param"] for e in response.json["error"]["errors"]]
                if "zz_matrix_probe" not in named:
                    failures.append(f"{act.name} as {identity}: 422 named {named}")
    report(failures, checked)


class _Forms(HTMLParser):
    """POST forms of a page and whether each carries a csrf_token field."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "form" and (values.get("method") or "get").lower() == "post":
            self.forms.append({"action": values.get("action"), "csrf": False})
        elif tag == "input" and values.get("name") == "csrf_token" and self.forms:
            self.forms[-1]["csrf"] = True


def sessions(app: Flask) -> dict[str, Any]:
    """A logged-in browser (cookie jar) per role, and an anonymous one."""
    browsers = {}
    for identity in ("anonymous", *matrix.ROLES):
        browser = app.test_client()
        if identity != "anonymous":
            login(browser, matrix.HANDLES[identity], matrix.PASSWORD)
        browsers[identity] = browser
    return browsers


def csrf_of(browser: Any) -> str:
    return CSRF.search(browser.get("/login").get_data(as_text=True)
                       if browser.get("/login").status_code == 200
                       else browser.get("/studios/new").get_data(as_text=True)).group(1)


def test_pages_and_forms_on_the_html_door(app: Flask, seeded: matrix.Studio) -> None:
    failures, checked = [], 0
    browsers = sessions(app)
    for identity, browser in browsers.items():
        for name, path in seeded.paths.items():
            response = browser.get(path, headers={"Accept": "text/html"})
            checked += 1
            expected = matrix.expected_get(identity, PAGES[name])
            status = 401 if response.status_code == 302 and "/login" in response.location \
                else response.status_code
            if status not in expected:
                failures.append(f"GET {path} in {identity}'s browser: {response.status_code}")
            if status == 200:  # every POST form the page shows carries its CSRF token
                parser = _Forms()
                parser.feed(response.get_data(as_text=True))
                failures += [f"{path}: form {f['action']} has no csrf_token"
                             for f in parser.forms if not f["csrf"]]
        token = csrf_of(browser)
        for path, spec, act in seeded.cells():
            url = f"{path}/actions/{act.name}"
            response = browser.post(url, data={**matrix.PROBE, "csrf_token": token},
                                    headers={"Accept": "text/html"})
            checked += 1
            expected = matrix.expected_post(identity, act, spec)
            if response.status_code not in expected:
                failures.append(f"form POST {url} as {identity}: {response.status_code}, "
                                f"expected {sorted(expected)}")
    report(failures, checked)


@pytest.mark.parametrize("forged", [None, "", "not-a-token"])
def test_every_form_action_refuses_a_missing_or_forged_csrf_token(
        app: Flask, seeded: matrix.Studio, forged: str | None) -> None:
    browser = sessions(app)["admin"]
    failures, checked = [], 0
    for path, _spec, act in seeded.cells():
        data = dict(matrix.PROBE) if forged is None else {**matrix.PROBE, "csrf_token": forged}
        response = browser.post(f"{path}/actions/{act.name}", data=data,
                                headers={"Accept": "application/json"})
        checked += 1
        if response.status_code != 400 or response.json["error"]["kind"] != "csrf":
            failures.append(f"{path}/actions/{act.name}: {response.status_code}")
    report(failures, checked)


def _not_offered(text: str) -> bool:
    """execute_action's refusal of an action the page does not offer now (with its reason)."""
    return "is not offered" in text or "is not available at" in text


def test_pages_and_actions_on_the_mcp_door(client, seeded: matrix.Studio) -> None:  # type: ignore[no-untyped-def]
    failures, checked = [], 0
    for identity in matrix.IDENTITIES:
        http = Http("http://localhost", seeded.tokens.get(identity), _FlaskClient(client))
        if identity in ("anonymous", "expired", "revoked"):
            refused = http.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                 "params": {}})
            checked += 1
            if refused.status_code != 401:
                failures.append(f"/mcp initialize as {identity}: {refused.status_code}")
            continue
        http.initialize()
        for name, path in seeded.paths.items():  # navigate: the page door of MCP
            result = http.tool("navigate", path=path)
            checked += 1
            visible = 200 in matrix.expected_get(identity, PAGES[name])
            if bool(result.get("isError")) == visible:
                failures.append(f"MCP navigate {path} as {identity}: "
                                f"{result['content'][0]['text'][:120]}")
        for path, spec, act in seeded.cells():
            result = http.tool("execute_action", action=act.name, params=matrix.PROBE,
                               path=path)
            checked += 1
            text = result["content"][0]["text"]
            # A read-only token runs what only reads as its owner (the creator) would.
            reads = identity == "readonly" and not act.effect.writes
            may = ("creator" if reads else identity) in matrix.allowed(act, spec)
            if not result.get("isError"):
                failures.append(f"MCP {act.name} at {path} as {identity} succeeded")
            elif may and "failed (422)" not in text and not _not_offered(text):
                failures.append(f"MCP {act.name} at {path} as {identity}: {text[:120]}")
            elif not may and "(422)" in text:
                failures.append(f"MCP {act.name} at {path} as {identity} reached validation")
            elif identity == "readonly" and not reads \
                    and "forbidden (403): this token lacks the 'write' scope" not in text:
                failures.append(f"MCP {act.name} at {path} as readonly: {text[:120]}")
    report(failures, checked)

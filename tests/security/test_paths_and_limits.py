"""Path traversal (teach names, recipe paths, session ids, floorplan and workflow names),
DNS rebinding on /mcp (hostile Host and Origin), and request size limits on every POST door."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.extensions import db

TRAVERSALS = ["../x", "../../etc/passwd", "..", "x/../../y", "..\\..\\x", "/etc/passwd",
              "%2e%2e%2fx", ".hidden", "x\x00y", "x/y", "\u2025/x", "a" * 300]


def files_under(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")} if root.exists() else set()


def test_teach_names_cannot_leave_the_capture_folder(app: Flask, studio, tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = Path(app.config["HARMONIC_DATA_DIR"])
    outside = files_under(data.parent) - files_under(data) - {str(data)}
    for name in TRAVERSALS:
        started = studio.client.post("/teach/start", query_string={"name": name},
                                     headers=studio.headers("application/json"))
        assert started.status_code in (200, 201, 422), (name, started.status_code)
        studio.post("/teach/stop")
        action = studio.act("/playbooks", "start_teach", name=name)
        assert action.status_code in (201, 422), (name, action.status_code)
        studio.act("/playbooks", "stop_teach")
    # Every folder made is a direct child of playbooks/, and nothing appeared beside data/.
    for path in files_under(data / "playbooks"):
        assert Path(path).parent.parent == data / "playbooks" or \
            Path(path).parent == data / "playbooks", path
    assert files_under(data.parent) - files_under(data) - {str(data)} == outside


@pytest.mark.parametrize("field", ["RecipePath", "SessionId"])
def test_replay_refuses_paths_outside_the_data_folder(app: Flask, studio, field: str) -> None:  # type: ignore[no-untyped-def]
    data = Path(app.config["HARMONIC_DATA_DIR"])
    (data / "playbooks").mkdir(parents=True, exist_ok=True)
    secret = data.parent / "secret.json"
    secret.write_text('{"steps": []}')
    link = data / "playbooks" / "link.json"
    if not link.exists():
        os.symlink(secret, link)  # inside by name, outside once resolved
    absolute = str(secret)
    for value in [*TRAVERSALS, absolute, "link.json", "../secret.json", "playbooks/../../x.json"]:
        response = studio.post("/replay", json={field: value, "DryRun": True})
        assert response.status_code == 422, (field, value, response.status_code)
        assert response.get_json()["ok"] is False


def test_floorplan_and_workflow_names_are_not_paths(studio) -> None:  # type: ignore[no-untyped-def]
    for name in TRAVERSALS:
        response = studio.act("/studios/team/floorplans", "create_floorplan", name=name)
        assert response.status_code == 422, (name, response.status_code)
    for path in ("/studios/team/f/..%2F..%2Fetc", "/studios/team/f/%2e%2e.svg",
                 "/studios/team/f/..%2Fsecret.png", "/workflows/..%2F..%2Fpyproject",
                 "/workflows/%2e%2e", "/workflows/..%5C..%5Cpyproject"):
        response = studio.get(path)
        assert response.status_code == 404, (path, response.status_code)


HOSTILE_HOSTS = ["evil.example", "evil.example:80", "127.0.0.1.nip.io", "localhost.evil.example",
                 "localhost:5000@evil.example", "127.0.0.1:80.evil.example", "0.0.0.0",
                 "[::ffff:7f00:1].evil.example", "attacker.localhost.example",
                 "[::1].evil", "[::1]evil.example:80"]
HOSTILE_ORIGINS = ["http://evil.example", "null", "http://localhost.evil.example",
                   "http://127.0.0.1.nip.io", "file://", "http://localhost@evil.example",
                   "https://evil.example:443", "chrome-extension://abc", "http://[::1].evil",
                   "http://[::1]evil.example", "http://localhost:1:2"]


def test_dns_rebinding_on_mcp_is_refused(client, make_agent) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.conftest import INIT

    agent = make_agent("alice")
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
    headers = {"Authorization": f"Bearer {agent.token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    assert client.post("/mcp", json=body, headers=headers).status_code == 200
    for host in HOSTILE_HOSTS:
        response = client.post("/mcp", json=body, headers={**headers, "Host": host})
        assert response.status_code == 403, (host, response.status_code)
        assert "Mcp-Session-Id" not in response.headers
    for origin in HOSTILE_ORIGINS:
        response = client.post("/mcp", json=body, headers={**headers, "Origin": origin})
        assert response.status_code == 403, (origin, response.status_code)
        assert "Access-Control-Allow-Origin" not in response.headers


def count_rows(app: Flask) -> int:
    from sqlalchemy import func, select

    with app.app_context():
        return sum(db.session.execute(select(func.count()).select_from(table)).scalar_one()
                   for table in db.metadata.sorted_tables)


def doors(agent: Any) -> dict[str, tuple[str, dict[str, str]]]:
    json_headers = {**agent.headers("application/json"), "Content-Type": "application/json"}
    mcp = {**json_headers, "Accept": "application/json, text/event-stream"}
    return {"/studios/team/note/actions/create_note": json_headers, "/mcp": mcp,
            "/rpc": json_headers, "/replay": json_headers, "/teach/start?name=big": json_headers,
            "/design-model/rpc": json_headers, "/workflows/studio-check/actions/run_workflow":
                json_headers, "/login": {"Content-Type": "application/x-www-form-urlencoded"}}


def test_every_post_door_has_a_body_limit(app: Flask, studio, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "MAX_CONTENT_LENGTH", 4096)
    before = count_rows(app)
    big = b'{"text": "' + b"x" * 5000 + b'"}'
    for url, headers in doors(studio).items():
        response = studio.client.post(url, data=big, headers=headers)
        assert response.status_code == 413, (url, response.status_code)
    assert count_rows(app) == before


def test_mcp_body_limit_answers_json_rpc(app: Flask, studio, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "MAX_CONTENT_LENGTH", 4096)
    big = b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "' + b"x" * 5000 + b'"}}'
    doors_ = doors(studio)
    refused = studio.client.post("/mcp", data=big, headers=doors_["/mcp"])
    assert refused.status_code == 413
    assert refused.json == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32029, "message": "Request too large: the body is over the limit of 4096 bytes",
        "data": {"reason": "body_too_large", "limit": 4096}}}
    # Other doors keep their own bodies.
    other = studio.client.post("/rpc", data=big, headers=doors_["/rpc"])
    assert other.status_code == 413 and other.json["error"]["kind"] == "too_large"


def test_nul_characters_in_paths_and_forms_are_refused(app: Flask, client, make_agent) -> None:  # type: ignore[no-untyped-def]
    # PostgreSQL refuses NUL in text: a NUL in a handle, a name or a login was a 500 there.
    from tests.security import matrix

    seeded = matrix.seed(app, make_agent)
    headers = {"Authorization": f"Bearer {seeded.tokens['creator']}",
               "Accept": "application/json"}
    for path in seeded.paths.values():
        base = path.rstrip("/")
        for hostile in (f"{base}%00", f"{base}/%00x", f"{base}%00/actions/zz"):
            response = client.get(hostile, headers=headers)
            assert response.status_code == 404, (hostile, response.status_code)
    page = client.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    for form in ({"login": "carol\x00", "password": "x"}, {"login": "carol", "password": "\x00"}):
        response = client.post("/login", data={**form, "csrf_token": csrf},
                               headers={"Accept": "application/json"})
        assert response.status_code == 422, (form, response.status_code)
        assert response.json["error"]["errors"] == [
            {"param": next(k for k, v in form.items() if "\x00" in v),
             "message": "must not contain NUL characters"}]

"""Bad input to the JSON endpoints: clear errors with honest codes, never a 500."""

from __future__ import annotations

import json

from tests.playbooks.test_recording import _closed_port


def test_rpc_bad_bodies(app, studio) -> None:  # type: ignore[no-untyped-def]
    headers = studio.headers("application/json") | {"Content-Type": "application/json"}
    cases = {"{not json": -32700, "[]": -32600, '"text"': -32600, "[1, 2]": None,
             "[" * 5000 + "]" * 5000: None, '{"jsonrpc": "2.0", "id": 1}': -32600,
             '{"jsonrpc": "2.0", "id": 1, "method": "no_such_method"}': -32601}
    for body, code in cases.items():
        response = studio.client.post("/rpc", data=body, headers=headers)
        assert response.status_code == 200, (body[:40], response.status_code)
        answer = response.get_json()
        if isinstance(answer, list):
            assert all(a["error"]["code"] == -32600 for a in answer)
        else:
            assert "error" in answer and (code is None or answer["error"]["code"] == code)
    note = studio.client.post("/rpc", data='{"jsonrpc": "2.0", "method": "get_walls"}',
                              headers=headers)
    assert note.status_code == 204  # a notification gets no answer


def test_replay_bad_bodies(app, studio) -> None:  # type: ignore[no-untyped-def]
    for body in ([], "x", {"DryRun": "yes", "SessionId": "a"}, {"Args": [1], "SessionId": "a"},
                 {"SessionId": 5}, {}):
        response = studio.post("/replay", json=body)
        assert response.status_code == 422, (body, response.get_data(as_text=True))
        assert response.get_json()["ok"] is False


def test_scopes_and_stop_without_teaching(app, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    reader = make_agent("reader", scopes="read")
    assert reader.post("/teach/start?name=x").status_code == 403
    assert studio.post("/teach/stop").get_json() == {"ok": True, "entries": 0,
                                                     "sessionId": None,
                                                     "message": "not teaching"}
    bad = studio.client.post("/rpc", headers={"Authorization": "Bearer hmn_wrong"})
    assert bad.status_code == 401


def test_replay_against_a_dead_upstream_fails_cleanly(app, studio, data_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = data_dir / "playbooks" / "dead.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "dead", "steps": [{"method": "get_walls"}]}))
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", f"http://127.0.0.1:{_closed_port()}")
    report = studio.post("/replay", json={"RecipePath": "dead.json", "DryRun": True}).get_json()
    assert report["ok"] is False and "-32000" in report["details"][0]["error"]


def test_browser_cookies_cannot_drive_the_json_endpoints(app, client, make_agent) -> None:  # type: ignore[no-untyped-def]
    """These endpoints skip CSRF checks, so a signed-in browser alone is refused."""
    from app.models import User

    make_agent("carol", password="a long enough password")
    with app.app_context():
        user_id = str(User.query.filter_by(handle="carol").one().id)
    with client.session_transaction() as session:
        session["_user_id"] = user_id
        session["_fresh"] = True
    assert client.get("/playbooks", headers={"Accept": "text/markdown"}).status_code == 200
    for path in ("/teach/start?name=x", "/rpc", "/replay"):
        assert client.post(path, json={}).status_code == 401, path
